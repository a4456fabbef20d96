// Peak formulas, with the worked examples of harness/model/REFERENCE_FIGURES.md (the roofline's ridge points
// are computed by the Python tools only: scripts/gpubench_tools/roofline.py).
#include <gtest/gtest.h>

#include <string>

#include "harness/model/device.h"

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

TEST(DeviceModel, Bf16AtTheFp16RateFp8AtTwiceItFromAda) {
  struct Cc {
    int major, minor;
  };
  for (const Cc cc : {Cc{8, 9}, Cc{9, 0}, Cc{10, 0}, Cc{10, 3}, Cc{12, 0}}) {
    for (bool geforce : {false, true}) {
      SCOPED_TRACE(std::to_string(cc.major) + "." + std::to_string(cc.minor) + (geforce ? " GeForce" : ""));
      const int fp16 = fp16_tensor_flop_per_clock_per_sm(cc.major, cc.minor, geforce);
      EXPECT_EQ(bf16_tensor_flop_per_clock_per_sm(cc.major, cc.minor, geforce), fp16);
      EXPECT_EQ(fp8_tensor_flop_per_clock_per_sm(cc.major, cc.minor, geforce), 2 * fp16);
    }
  }
  EXPECT_EQ(fp8_tensor_flop_per_clock_per_sm(9, 0, false), 8192);  // REFERENCE_FIGURES.md's table
  EXPECT_EQ(fp8_tensor_flop_per_clock_per_sm(8, 9, false), 2048);
  EXPECT_EQ(fp8_tensor_flop_per_clock_per_sm(8, 9, true), 1024);  // GeForce, FP32 accumulate
  EXPECT_EQ(fp8_tensor_flop_per_clock_per_sm(10, 0, false), 16384);
  // No FP8 tensor cores before sm_89; BF16 from sm_80 (T4's sm_75 has FP16 but no BF16).
  for (const Cc cc : {Cc{7, 5}, Cc{8, 0}, Cc{8, 6}, Cc{8, 7}}) {
    EXPECT_EQ(fp8_tensor_flop_per_clock_per_sm(cc.major, cc.minor, false), 0) << cc.major << "." << cc.minor;
  }
  EXPECT_EQ(bf16_tensor_flop_per_clock_per_sm(8, 0, false), 2048);
  EXPECT_EQ(bf16_tensor_flop_per_clock_per_sm(8, 6, true), 512);
  EXPECT_EQ(bf16_tensor_flop_per_clock_per_sm(7, 5, false), 0);
}

TEST(DeviceModel, FormulaPeaksReproduceDatasheets) {
  DeviceDescription h100;
  h100.cc_major = 9;
  h100.sm_count = 132;
  h100.sm_clock_kHz = 1830000;                                        // the clock NVIDIA quotes its tensor peak at
  EXPECT_NEAR(formula_peaks(h100).fp16_tensor_TFLOPS, 989.43, 0.01);  // datasheet: 989
  EXPECT_NEAR(formula_peaks(h100).bf16_tensor_TFLOPS, 989.43, 0.01);  // datasheet: 989
  EXPECT_NEAR(formula_peaks(h100).fp8_tensor_TFLOPS, 1978.86, 0.01);  // datasheet: 1979
  DeviceDescription a100;
  a100.cc_major = 8;
  a100.sm_count = 108;
  a100.sm_clock_kHz = 1410000;
  EXPECT_NEAR(formula_peaks(a100).fp16_tensor_TFLOPS, 311.87, 0.01);
  EXPECT_NEAR(formula_peaks(a100).fp32_TFLOPS, 19.49, 0.01);
  EXPECT_EQ(formula_peaks(a100).fp8_tensor_TFLOPS, 0);  // no FP8 tensor cores: no percentage
  DeviceDescription rtx4090;
  rtx4090.cc_major = 8;
  rtx4090.cc_minor = 9;
  rtx4090.geforce = true;
  rtx4090.sm_count = 128;
  rtx4090.sm_clock_kHz = 2520000;
  EXPECT_NEAR(formula_peaks(rtx4090).fp32_TFLOPS, 82.58, 0.01);
  EXPECT_NEAR(formula_peaks(rtx4090).fp16_tensor_TFLOPS, 165.15, 0.01);
  EXPECT_NEAR(formula_peaks(rtx4090).fp8_tensor_TFLOPS, 330.30, 0.01);  // Ada whitepaper: 330.3
}

TEST(DeviceModel, PciePerDirection) {
  EXPECT_NEAR(pcie_GBps_per_direction(3, 16), 15.7538, 1e-4);
  EXPECT_NEAR(pcie_GBps_per_direction(4, 16), 31.5077, 1e-4);
  EXPECT_NEAR(pcie_GBps_per_direction(5, 16), 63.0154, 1e-4);
  EXPECT_NEAR(pcie_GBps_per_direction(4, 8), 15.7538, 1e-4);
  EXPECT_NEAR(pcie_GBps_per_direction(6, 16), 121.0, 1e-9);  // 128 less each flit's FEC and CRC
  EXPECT_EQ(pcie_GBps_per_direction(0, 16), 0);
  EXPECT_EQ(pcie_GBps_per_direction(4, 0), 0);
}

TEST(SmemPeak, OneHundredTwentyEightBytesPerClockPerSmFromVolta) {
  DeviceDescription h100;
  h100.cc_major = 9;
  h100.sm_count = 132;
  h100.sm_clock_kHz = 1.98e6;
  EXPECT_NEAR(smem_peak_GBps(h100), 33454.08, 0.01);  // REFERENCE_FIGURES.md: about 33 TB/s
  EXPECT_NEAR(formula_peaks(h100).smem_GBps, 33454.08, 0.01);
  DeviceDescription host;  // cc 0: the host has no shared memory
  host.sm_count = 16;
  host.sm_clock_kHz = 3e6;
  EXPECT_EQ(smem_peak_GBps(host), 0);
  h100.sm_clock_kHz = 0;  // unknown clock: unknown peak
  EXPECT_EQ(smem_peak_GBps(h100), 0);
}

}  // namespace
}  // namespace gpubench
