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
      strided_work(span, 8, 4, kHostLines).useful_bytes / strided_work(span, 8, 4, kHostLines).traffic_bytes, 1.0 / 8);
  EXPECT_DOUBLE_EQ(
      strided_work(span, 32, 4, kHostLines).useful_bytes / strided_work(span, 32, 4, kHostLines).traffic_bytes,
      4.0 / 64);
  EXPECT_DOUBLE_EQ(gather_work(1000, 4, 4, kHostLines).traffic_bytes, 1000 * (4.0 + 4.0 + 64.0));
}

TEST(WorkModel, GatherCostsASectorPerRandomRead) {
  const WorkModel w = gather_work(1000, 4, 4);
  EXPECT_DOUBLE_EQ(w.useful_bytes, 1000 * 12.0);
  EXPECT_DOUBLE_EQ(w.traffic_bytes, 1000 * (4.0 + 4.0 + 32.0));
}

// An input that stays in the cache (at most half of it) is read from memory once: its traffic is
// its own size, not a fetch unit per gathered element (twice the DRAM peak at 16 MiB, run 6).
TEST(WorkModel, AGatheredInputThatStaysCachedIsReadOnce) {
  const TrafficGeometry h100 = gpu_traffic_geometry(64, true);
  const double l2 = 50.0 * 1024 * 1024;
  const double n16 = 16.0 * 1024 * 1024 / 4;
  EXPECT_DOUBLE_EQ(gather_work(n16, 4, 4, h100, l2 / 2).traffic_bytes, n16 * 12.0);
  EXPECT_DOUBLE_EQ(gather_work(n16, 4, 4, h100).traffic_bytes, n16 * (8.0 + 64.0));  // no cache given
  const double n256 = 256.0 * 1024 * 1024 / 4;  // beyond the cache: a fetch unit per element
  EXPECT_DOUBLE_EQ(gather_work(n256, 4, 4, h100, l2 / 2).traffic_bytes, n256 * (8.0 + 64.0));
  // At the edge: an input of exactly half the cache still counts as resident.
  EXPECT_DOUBLE_EQ(gather_work(l2 / 8, 4, 4, h100, l2 / 2).traffic_bytes, l2 / 8 * 12.0);
}

// The H100 geometry (64-byte L2 fetch, ECC on) against Nsight Compute's DRAM byte counts of the
// first GPU run (results/h100_80gb_hbm3-79gib-sm90-drv580-cuda13.0/kit_20261123T0706Z/ncu_*.log,
// dram__bytes_read.sum + dram__bytes_write.sum of one launch): the model within 2 % for strided
// copies; the gather model is an upper bound (no L2 reuse), within 7 % at 256 MiB.
TEST(WorkModel, GpuGeometryMatchesTheDramBytesNsightComputeCounted) {
  const TrafficGeometry h100 = gpu_traffic_geometry(64, true);
  const double span = 256.0 * 1024 * 1024;
  const double stride8 = 530649600.0 + 262980864.0, stride32 = 199466752.0 + 66004992.0;
  EXPECT_NEAR(strided_work(span, 8, 4, h100).traffic_bytes / stride8, 1.0, 0.02);
  EXPECT_NEAR(strided_work(span, 32, 4, h100).traffic_bytes / stride32, 1.0, 0.02);
  const double gather = 4300345344.0 + 269599488.0;
  const double model = gather_work(span / 4, 4, 4, h100).traffic_bytes;
  EXPECT_GE(model, gather);
  EXPECT_LT(model / gather, 1.07);
  // The plain-sector model that the run replaced undercounted both by a third or more.
  EXPECT_LT(strided_work(span, 8, 4, kGpuSectors).traffic_bytes / stride8, 0.7);
  EXPECT_LT(gather_work(span / 4, 4, 4, kGpuSectors).traffic_bytes / gather, 0.6);
}

TEST(WorkModel, ReadFillOnlyForPartlyWrittenSectors) {
  const TrafficGeometry ecc = gpu_traffic_geometry(32, true);
  const double span = 1 << 20;
  // stride 1 writes whole sectors: no fill, traffic = useful
  EXPECT_DOUBLE_EQ(strided_work(span, 1, 4, ecc).traffic_bytes, strided_work(span, 1, 4, ecc).useful_bytes);
  // stride 2 writes half of each sector: read 8 + write 8 + fill 8 per element
  EXPECT_DOUBLE_EQ(strided_work(span, 2, 4, ecc).traffic_bytes, span / 8 * 24);
  EXPECT_DOUBLE_EQ(strided_work(span, 2, 4, gpu_traffic_geometry(32, false)).traffic_bytes, span / 8 * 16);
  // an unknown or smaller fetch granularity is taken as a sector
  EXPECT_DOUBLE_EQ(gpu_traffic_geometry(0, false).fetch_bytes, kSectorBytes);
}

TEST(WorkModel, TrafficDescriptionNamesTheAssumptions) {
  EXPECT_EQ(describe_traffic(gpu_traffic_geometry(64, true)),
            "written back in 32 B units, misses fetched in 64 B, partially written units read first (ECC read-fill)");
  EXPECT_EQ(describe_traffic(kHostLines), "written back in 64 B units, misses fetched in 64 B, no read-fill");
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
  EXPECT_STREQ(peak_kind_name(PeakKind::bf16_tensor), "bf16_tensor");
  EXPECT_STREQ(peak_kind_name(PeakKind::fp8_tensor), "fp8_tensor");
}

}  // namespace
}  // namespace gpubench
