// Peak formulas and the roofline, with the worked examples of shared/REFERENCE.md.
#include <gtest/gtest.h>

#include "harness/model/device.h"
#include "harness/model/roofline.h"

namespace gpubench {
namespace {

TEST(DeviceModel, DramPeakFromClockAndBus) {
  EXPECT_NEAR(dram_peak_GBps(2619000, 5120), 3352.32, 1e-9);   // H100 SXM: 3.35 TB/s
  EXPECT_NEAR(dram_peak_GBps(10501000, 384), 1008.096, 1e-9);  // RTX 4090 as its driver reports
  EXPECT_NEAR(dram_peak_GBps(1215000, 5120), 1555.2, 1e-9);    // A100 40GB
  EXPECT_NEAR(dram_peak_GBps(3996000, 7680), 7672.32, 1e-9);   // B200 as its driver reports
  EXPECT_EQ(dram_peak_GBps(0, 5120), 0);
  EXPECT_EQ(dram_peak_GBps(2619000, 0), 0);
}

TEST(DeviceModel, FlopPerClockByArchitecture) {
  EXPECT_EQ(fp32_flop_per_clock_per_sm(8, 0), 128);
  EXPECT_EQ(fp32_flop_per_clock_per_sm(8, 6), 256);
  EXPECT_EQ(fp32_flop_per_clock_per_sm(9, 0), 256);
  EXPECT_EQ(fp32_flop_per_clock_per_sm(0, 0), 0);
  EXPECT_EQ(fp16_tensor_flop_per_clock_per_sm(8, 0, false), 2048);
  EXPECT_EQ(fp16_tensor_flop_per_clock_per_sm(9, 0, false), 4096);
  EXPECT_EQ(fp16_tensor_flop_per_clock_per_sm(8, 9, true), 512);
  EXPECT_EQ(fp16_tensor_flop_per_clock_per_sm(8, 9, false), 1024);
}

TEST(DeviceModel, FormulaPeaksReproduceDatasheets) {
  DeviceDescription h100;
  h100.cc_major = 9;
  h100.sm_count = 132;
  h100.sm_clock_kHz = 1830000;                                        // the clock NVIDIA quotes its tensor peak at
  EXPECT_NEAR(formula_peaks(h100).fp16_tensor_TFLOPS, 989.43, 0.01);  // datasheet: 989
  DeviceDescription a100;
  a100.cc_major = 8;
  a100.sm_count = 108;
  a100.sm_clock_kHz = 1410000;
  EXPECT_NEAR(formula_peaks(a100).fp16_tensor_TFLOPS, 311.87, 0.01);
  EXPECT_NEAR(formula_peaks(a100).fp32_TFLOPS, 19.49, 0.01);
  DeviceDescription rtx4090;
  rtx4090.cc_major = 8;
  rtx4090.cc_minor = 9;
  rtx4090.geforce = true;
  rtx4090.sm_count = 128;
  rtx4090.sm_clock_kHz = 2520000;
  EXPECT_NEAR(formula_peaks(rtx4090).fp32_TFLOPS, 82.58, 0.01);
  EXPECT_NEAR(formula_peaks(rtx4090).fp16_tensor_TFLOPS, 165.15, 0.01);
}

TEST(DeviceModel, PciePerDirection) {
  EXPECT_NEAR(pcie_GBps_per_direction(3, 16), 15.7538, 1e-4);
  EXPECT_NEAR(pcie_GBps_per_direction(4, 16), 31.5077, 1e-4);
  EXPECT_NEAR(pcie_GBps_per_direction(5, 16), 63.0154, 1e-4);
  EXPECT_NEAR(pcie_GBps_per_direction(4, 8), 15.7538, 1e-4);
  EXPECT_NEAR(pcie_GBps_per_direction(6, 16), 128.0, 1e-9);
  EXPECT_EQ(pcie_GBps_per_direction(0, 16), 0);
  EXPECT_EQ(pcie_GBps_per_direction(4, 0), 0);
}

TEST(Roofline, RidgePointsAndAttainable) {
  EXPECT_NEAR(ridge_point(989, 3350), 295.22, 0.01);  // H100 SXM FP16 tensor vs HBM3
  EXPECT_NEAR(ridge_point(66.9, 3350), 19.97, 0.01);  // H100 SXM FP32
  EXPECT_NEAR(ridge_point(19.5, 1555), 12.54, 0.01);  // A100 40GB FP32
  EXPECT_EQ(ridge_point(0, 3350), 0);
  EXPECT_NEAR(attainable_TFLOPS(1.0, 66.9, 3350), 3.35, 1e-12);   // memory bound
  EXPECT_NEAR(attainable_TFLOPS(1000, 66.9, 3350), 66.9, 1e-12);  // compute bound
  EXPECT_NEAR(attainable_TFLOPS(ridge_point(66.9, 3350), 66.9, 3350), 66.9, 1e-9);
}

}  // namespace
}  // namespace gpubench
