// Work models: the bytes and FLOP every throughput is derived from.
#include <gtest/gtest.h>

#include "harness/model/work_model.h"

namespace gpubench {
namespace {

TEST(WorkModel, CopyCountsReadPlusWrite) {
  const WorkModel w = copy_work(1 << 20);
  EXPECT_EQ(w.useful_bytes, 2.0 * (1 << 20));
  EXPECT_EQ(w.traffic_bytes, w.useful_bytes);
  EXPECT_EQ(w.peak, PeakKind::dram);
  EXPECT_EQ(w.metric, Metric::GBps);
}

TEST(WorkModel, StridedFallsToOneSectorPerElement) {
  const double span = 256.0 * 1024 * 1024;
  for (int s : {1, 2, 4, 8, 16, 32}) {
    const WorkModel w = strided_work(span, s, 4);
    EXPECT_DOUBLE_EQ(w.useful_bytes, 2.0 * span / s) << s;
    const double expected_efficiency = s >= 8 ? 4.0 / 32.0 : 1.0 / s;  // useful / traffic
    EXPECT_DOUBLE_EQ(w.useful_bytes / w.traffic_bytes, expected_efficiency) << s;
  }
}

TEST(WorkModel, HostCountsWholeCacheLines) {
  const double span = 256.0 * 1024 * 1024;
  // 64-byte lines: 1/stride efficiency holds to stride 16, then one line per element.
  EXPECT_DOUBLE_EQ(
      strided_work(span, 8, 4, kHostLineBytes).useful_bytes / strided_work(span, 8, 4, kHostLineBytes).traffic_bytes,
      1.0 / 8);
  EXPECT_DOUBLE_EQ(
      strided_work(span, 32, 4, kHostLineBytes).useful_bytes / strided_work(span, 32, 4, kHostLineBytes).traffic_bytes,
      4.0 / 64);
  EXPECT_DOUBLE_EQ(gather_work(1000, 4, 4, kHostLineBytes).traffic_bytes, 1000 * (4.0 + 4.0 + 64.0));
}

TEST(WorkModel, GatherCostsASectorPerRandomRead) {
  const WorkModel w = gather_work(1000, 4, 4);
  EXPECT_DOUBLE_EQ(w.useful_bytes, 1000 * 12.0);
  EXPECT_DOUBLE_EQ(w.traffic_bytes, 1000 * (4.0 + 4.0 + 32.0));
}

TEST(WorkModel, GemmIsTwoMNK) {
  const WorkModel w = gemm_work(4096, 4096, 4096, 2, 4, PeakKind::fp16_tensor);
  EXPECT_DOUBLE_EQ(w.flop, 2.0 * 4096 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(w.useful_bytes, (2.0 * 4096 * 4096) * 2 + 4096.0 * 4096 * 4);
  EXPECT_EQ(w.metric, Metric::TFLOPS);
  EXPECT_NEAR(w.intensity(), 2.0 * 4096 * 4096 * 4096 / w.useful_bytes, 1e-9);
}

TEST(WorkModel, FmaSweepIntensity) {
  // One FMA (2 FLOP) per 4-byte element loaded and stored: 2 / 8 = 0.25 FLOP/byte.
  EXPECT_DOUBLE_EQ(fma_sweep_work(1 << 20, 4, 1, PeakKind::fp32).intensity(), 0.25);
  EXPECT_DOUBLE_EQ(fma_sweep_work(1 << 20, 4, 4096, PeakKind::fp32).intensity(), 1024);
}

TEST(WorkModel, TransferCountsOnce) {
  const WorkModel w = transfer_work(1 << 20, PeakKind::pcie_h2d);
  EXPECT_EQ(w.useful_bytes, 1 << 20);
  EXPECT_EQ(w.peak, PeakKind::pcie_h2d);
}

TEST(WorkModel, Names) {
  EXPECT_STREQ(metric_name(Metric::GBps), "GB/s");
  EXPECT_STREQ(metric_name(Metric::TFLOPS), "TFLOPS");
  EXPECT_STREQ(peak_kind_name(PeakKind::fp16_tensor), "fp16_tensor");
}

}  // namespace
}  // namespace gpubench
