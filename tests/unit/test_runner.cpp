// The runner's arithmetic: batch sizing and the counters derived from a work model.
#include <gtest/gtest.h>

#include "harness/runner.h"

namespace gpubench {
namespace {

TEST(Runner, BatchFillsTheMinimumSample) {
  EXPECT_EQ(choose_batch(1.0), 1);
  EXPECT_EQ(choose_batch(kMinSampleSeconds), 1);
  EXPECT_EQ(choose_batch(kMinSampleSeconds / 10), 10);
  EXPECT_EQ(choose_batch(1e-9), kMaxBatch);
  EXPECT_EQ(choose_batch(0), 1);
}

TEST(Runner, CountersFromTheWorkModel) {
  Peaks peaks;
  peaks.dram_GBps = 2000;
  const WorkModel copy = copy_work(1e9);  // 2e9 bytes per op
  const DerivedCounters d = derive_counters(copy, 1e-3, peaks);
  EXPECT_DOUBLE_EQ(d.GBps, 2000);
  EXPECT_DOUBLE_EQ(d.pct_of_peak, 100);
  EXPECT_EQ(d.sector_GBps, 0);
  EXPECT_EQ(d.TFLOPS, 0);
}

TEST(Runner, SectorTrafficReportedWhenItDiffers) {
  Peaks peaks;
  const WorkModel w = strided_work(1 << 20, 8, 4);
  const DerivedCounters d = derive_counters(w, 1.0, peaks);
  EXPECT_DOUBLE_EQ(d.sector_GBps / d.GBps, 8.0);
  EXPECT_LT(d.pct_of_peak, 0);  // unknown peak: left out, never invented
}

TEST(Runner, TflopsAndComputePeak) {
  Peaks peaks;
  peaks.fp16_tensor_TFLOPS = 989;
  const WorkModel g = gemm_work(4096, 4096, 4096, 2, 4, PeakKind::fp16_tensor);
  const double seconds = g.flop / 494.5e12;
  const DerivedCounters d = derive_counters(g, seconds, peaks);
  EXPECT_NEAR(d.TFLOPS, 494.5, 1e-9);
  EXPECT_NEAR(d.pct_of_peak, 50.0, 1e-9);
}

}  // namespace
}  // namespace gpubench
