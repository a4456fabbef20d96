// The console table (harness/console_table.h): units people read, one line per benchmark that
// fits 120 columns with its marks, the header from the result context, and the closing summary
// naming the headline rows, the noisy, throttled and failed ones, and where the result went.
#include "harness/console_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace gpubench {
namespace {

BenchmarkLine line(const std::string& name, std::vector<double> values, const std::string& metric = "GBps",
                   const std::string& level = "dram") {
  BenchmarkLine l;
  l.name = name;
  l.values = std::move(values);
  l.metric = metric;
  l.level = level;
  return l;
}

TEST(ConsoleUnits, RatesHaveThreeSignificantFiguresAndNoExponent) {
  EXPECT_EQ(three_figures(2812.4), "2812");
  EXPECT_EQ(three_figures(45.27), "45.3");
  EXPECT_EQ(three_figures(3.14159), "3.14");
  EXPECT_EQ(three_figures(0.04531), "0.0453");
  EXPECT_EQ(three_figures(0.000123456), "0.000123");
  EXPECT_EQ(three_figures(0), "0");
}

TEST(ConsoleUnits, SizesInBinaryUnitsAndTimesInTheUnitThatFits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(4096), "4 KiB");
  EXPECT_EQ(format_bytes(1.5 * 1024 * 1024), "1.50 MiB");
  EXPECT_EQ(format_bytes(80.0 * (1ull << 30)), "80 GiB");
  EXPECT_EQ(format_duration(850e-6), "850 us");
  EXPECT_EQ(format_duration(0.0123), "12.3 ms");
  EXPECT_EQ(format_duration(4.2), "4.20 s");
  EXPECT_EQ(format_duration(125), "2 min 05 s");
}

TEST(ConsoleLine, ShowsTheMedianItsSpreadAndPercentagesWithinTheWidth) {
  BenchmarkLine l = line("bandwidth/copy/kernel/bytes:1GiB", {2800, 2812, 2830});
  l.pct_of_peak = 83.9;
  const std::string s = format_line(l);
  EXPECT_NE(s.find("2812"), std::string::npos) << s;
  EXPECT_NE(s.find("GB/s"), std::string::npos) << s;
  EXPECT_NE(s.find("83.9 %"), std::string::npos) << s;
  EXPECT_NE(s.find("+-0.5%"), std::string::npos) << s;
  EXPECT_EQ(s.find("noisy"), std::string::npos) << s;
  EXPECT_LE(s.size(), kConsoleWidth);
}

TEST(ConsoleLine, MarksNoisyThrottledAndOutlierRows) {
  BenchmarkLine l = line("compute/hgemm/kernel/m:8192,n:8192,k:8192", {300, 360, 420}, "TFLOPS", "none");
  l.throttled = true;
  l.outlier = true;
  l.pct_of_cublas = 49.9;
  const std::string s = format_line(l);
  EXPECT_TRUE(l.noisy());
  EXPECT_NE(s.find("noisy throttled outlier"), std::string::npos) << s;
  l.throttled = false;
  l.power_capped = true;  // the software power cap: a fact about the row, marked as such
  EXPECT_NE(format_line(l).find("noisy power-cap outlier"), std::string::npos) << format_line(l);
  EXPECT_NE(s.find("TFLOPS"), std::string::npos) << s;
  EXPECT_NE(s.find("49.9 %"), std::string::npos) << s;
  EXPECT_LE(s.size(), kConsoleWidth);
}

TEST(ConsoleLine, AFailedRowSaysSoAndALongNameIsCut) {
  BenchmarkLine l = line(std::string("bandwidth/strided/kernel/") + std::string(80, 'x'), {});
  l.error = "verification failed: element 12 = 0x7fc0dead, expected 0x3f800000";
  const std::string s = format_line(l);
  EXPECT_TRUE(l.failed());
  EXPECT_NE(s.find("FAILED: verification failed: element 12"), std::string::npos) << s;
  EXPECT_NE(s.find("x~"), std::string::npos) << s;
  EXPECT_LE(s.size(), kConsoleWidth);
}

TEST(ConsoleLine, LatencyRowsShowTheirUnit) {
  EXPECT_NE(format_line(line("memory/alloc/mmap/bytes:4KiB", {5.1, 5.2, 5.0}, "latency_us")).find(" us "),
            std::string::npos);
  EXPECT_EQ(headline_counter("latency_ns"), "latency_ns");
  EXPECT_EQ(headline_counter("GBps"), "GB/s");
}

TEST(ConsoleLine, LabelFieldsAreRead) {
  const auto f = label_fields("peak=dram metric=GBps level=dram sweep=bytes");
  EXPECT_EQ(f.at("metric"), "GBps");
  EXPECT_EQ(f.at("level"), "dram");
  EXPECT_EQ(f.size(), 4u);
}

TEST(ConsoleHeader, NamesTheDeviceAndOnlyTheKnownPeaks) {
  const auto h = console_header({{"gpubench_version", "0.1.0"},
                                 {"git_revision", "abc"},
                                 {"device_name", "NVIDIA H100 80GB HBM3"},
                                 {"backend", "cuda"},
                                 {"device_key", "h100"},
                                 {"driver_version", "580.159.04"},
                                 {"runtime_version", "13.0"},
                                 {"peak_dram_GBps", "3350.4"},
                                 {"peak_fp32_TFLOPS", "66.9"},
                                 {"peak_fp16_tensor_TFLOPS", "unknown"},
                                 {"sm_clock_MHz", "1980"},
                                 {"mem_clock_MHz", "2619"},
                                 {"memory_total_bytes", "85045182464"},
                                 {"memory_free_start_bytes", "84000000000"},
                                 {"cache_policy", "cuda: L2 flushed"}});
  std::string all;
  for (const auto& l : h) {
    EXPECT_LE(l.size(), kConsoleWidth) << l;
    all += l + "\n";
  }
  EXPECT_NE(all.find("NVIDIA H100 80GB HBM3"), std::string::npos) << all;
  EXPECT_NE(all.find("driver 580.159.04"), std::string::npos) << all;
  EXPECT_NE(all.find("DRAM 3350 GB/s"), std::string::npos) << all;
  EXPECT_NE(all.find("FP32 66.9 TFLOPS"), std::string::npos) << all;
  EXPECT_EQ(all.find("FP16 tensor"), std::string::npos) << "an unknown peak is not printed: " << all;
  EXPECT_NE(all.find("79.2 GiB"), std::string::npos) << all;
  EXPECT_EQ(all.find("e+"), std::string::npos) << "no exponents: " << all;
}

TEST(ConsoleSummary, HeadlinesAgainstTheCardAndTheRowsToLookAt) {
  std::vector<BenchmarkLine> lines = {
      // A DRAM-level set just past the cache, faster than DRAM: not the headline, the largest is.
      line("bandwidth/copy/kernel/bytes:64MiB", {2900, 2910, 2905}),
      line("bandwidth/copy/kernel/bytes:1GiB", {2810, 2812, 2815}),
      line("bandwidth/copy/kernel/bytes:4MiB", {9000, 9100, 9050}, "GBps", "l2"),
      line("bandwidth/copy/memcpy_ce/bytes:1GiB", {3000, 3003, 3001}),  // a reference, not the kernel
      line("compute/sgemm/kernel/m:4096,n:4096,k:4096", {40, 41, 39}, "TFLOPS", "none"),
      line("bandwidth/pcie_h2d/pinned_ce/bytes:1GiB", {50, 54, 70}, "GBps", "pcie"),
      // The read kernel is no copy plateau, however fast.
      line("bandwidth/read/kernel/bytes:16MiB", {16000, 16100, 16050}, "GBps", "l2"),
  };
  lines[0].working_set_bytes = 128.0 * (1 << 20);
  lines[1].working_set_bytes = 2.0 * (1 << 30);
  lines[2].working_set_bytes = 8.0 * (1 << 20);
  lines[3].working_set_bytes = 2.0 * (1 << 30);
  lines[1].pct_of_peak = 83.9;
  lines[4].pct_of_cublas = 81.2;
  lines[5].throttled = true;
  BenchmarkLine failed = line("compute/hgemm/kernel/m:512,n:512,k:512", {}, "TFLOPS", "none");
  failed.error = "verification failed: element 3";
  lines.push_back(failed);
  BenchmarkLine away = line("bandwidth/copy/thrust/bytes:1GiB", {});
  away.error = "skipped: not on the host backend: Thrust";
  lines.push_back(away);

  const auto s = closing_summary(lines, {"/tmp/r.json", true, false});
  std::string all;
  for (const auto& l : s) {
    EXPECT_LE(l.size(), kConsoleWidth) << l;
    all += l + "\n";
  }
  EXPECT_NE(all.find("DRAM copy       2812 GB/s, 83.9 % of peak  (bandwidth/copy/kernel/bytes:1GiB)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("L2 plateau      9050 GB/s"), std::string::npos) << all;
  EXPECT_NE(all.find("SGEMM           40.0 TFLOPS, 81.2 % of cuBLAS"), std::string::npos) << all;
  EXPECT_EQ(all.find("FP16 GEMM"), std::string::npos) << "a failed row is no headline: " << all;
  EXPECT_NE(all.find("noisy (spread over 5 %): 1 row: bandwidth/pcie_h2d/pinned_ce/bytes:1GiB"), std::string::npos)
      << all;
  EXPECT_NE(all.find("throttled: 1 row"), std::string::npos) << all;
  EXPECT_NE(all.find("FAILED: 1 row: compute/hgemm/kernel/m:512,n:512,k:512"), std::string::npos) << all;
  EXPECT_NE(all.find("not on this backend: 1 row"), std::string::npos) << all;
  EXPECT_NE(all.find("result: /tmp/r.json"), std::string::npos) << all;
  EXPECT_EQ(all.find("nothing was saved"), std::string::npos) << all;
}

// Long names: as many as fit in the width, then how many more, never a name cut in the middle.
TEST(ConsoleSummary, ARowListKeepsItsCountWithinTheWidth) {
  std::vector<BenchmarkLine> lines;
  for (int i = 0; i < 5; ++i)
    lines.push_back(line("bandwidth/copy/kernel/bytes:" + std::to_string(i + 1) + "GiB,a_long_parameter:xxxxxxxxxxxxxx",
                         {100, 150, 60}));
  const auto s = closing_summary(lines, {"", true, false});
  const auto noisy = std::find_if(s.begin(), s.end(), [](const std::string& l) { return l.rfind("  noisy", 0) == 0; });
  ASSERT_NE(noisy, s.end());
  EXPECT_LE(noisy->size(), kConsoleWidth) << *noisy;
  EXPECT_EQ(noisy->find('~'), std::string::npos) << "cut: " << *noisy;
  EXPECT_NE(noisy->find("5 rows: bandwidth/copy/kernel/bytes:1GiB,a_long_parameter:xxxxxxxxxxxxxx and 4 more"),
            std::string::npos)
      << *noisy;
}

// The PCIe headline is a sustained transfer: the best row of 256 MiB or more, not a small copy
// that a cache serves (the host's 4 KiB memcpy read 81 GB/s); where no row reaches 256 MiB
// (--quick), the largest size that ran. The host's rows are named as the memcpy they are.
TEST(ConsoleSummary, PcieHeadlineIsTheBestSustainedTransfer) {
  const auto pcie = [](const std::string& name, double gbps, double bytes) {
    BenchmarkLine l = line(name, {gbps, gbps, gbps}, "GBps", "pcie");
    l.working_set_bytes = bytes;
    return l;
  };
  constexpr double MiB = 1 << 20;
  const std::vector<BenchmarkLine> full = {
      pcie("bandwidth/pcie_h2d/pageable_memcpy/bytes:4KiB", 81, 4096),
      pcie("bandwidth/pcie_h2d/pinned_ce/bytes:16MiB", 50, 16 * MiB),
      pcie("bandwidth/pcie_h2d/pinned_sm/bytes:256MiB", 53.5, 256 * MiB),
      pcie("bandwidth/pcie_h2d/pinned_ce/bytes:1GiB", 55.1, 1024 * MiB),
      pcie("bandwidth/pcie_d2h/pageable_memcpy/bytes:4KiB", 80, 4096),
      pcie("bandwidth/pcie_d2h/pinned_ce/bytes:256MiB", 54.9, 256 * MiB),
      pcie("bandwidth/pcie_d2h/pageable_memcpy/bytes:1GiB", 14, 1024 * MiB),
  };
  std::string all;
  for (const auto& l : closing_summary(full, {"", false, false})) all += l + "\n";
  EXPECT_NE(all.find("PCIe H2D        55.1 GB/s  (bandwidth/pcie_h2d/pinned_ce/bytes:1GiB)"), std::string::npos) << all;
  EXPECT_NE(all.find("PCIe D2H        54.9 GB/s  (bandwidth/pcie_d2h/pinned_ce/bytes:256MiB)"), std::string::npos)
      << all;

  const std::vector<BenchmarkLine> quick = {
      pcie("bandwidth/pcie_h2d/pageable_memcpy/bytes:4KiB", 81, 4096),
      pcie("bandwidth/pcie_h2d/pageable_memcpy/bytes:1MiB", 37, 1 * MiB),
      pcie("bandwidth/pcie_h2d/pageable_memcpy/bytes:16MiB", 10.2, 16 * MiB),
  };
  all.clear();
  for (const auto& l : closing_summary(quick, {"", false, true})) all += l + "\n";
  EXPECT_NE(all.find("H2D memcpy      10.2 GB/s  (bandwidth/pcie_h2d/pageable_memcpy/bytes:16MiB)"), std::string::npos)
      << all;
  EXPECT_EQ(all.find("PCIe"), std::string::npos) << "the host has no link: " << all;
}

// The GEMM headlines read gpubench's fastest hand-written row of any variant (the Hopper wgmma
// kernel as well as mma.sync), never a library's, and not the highest % of cuBLAS of a small
// shape; as the HTML report reads them.
TEST(ConsoleSummary, GemmHeadlineIsTheFastestHandWrittenRow) {
  const auto gemm = [](const std::string& name, double tflops, double pct_of_cublas) {
    BenchmarkLine l = line(name, {tflops, tflops, tflops}, "TFLOPS", "none");
    l.pct_of_cublas = pct_of_cublas;
    return l;
  };
  const std::vector<BenchmarkLine> lines = {
      gemm("compute/hgemm/kernel/m:512,n:512,k:512", 60, 120),  // cuBLAS is weak there
      gemm("compute/hgemm/kernel/m:8192,n:8192,k:8192", 366, 51.2),
      gemm("compute/hgemm/wgmma/m:8192,n:8192,k:8192", 690, 96.5),
      gemm("compute/hgemm/cublas/m:8192,n:8192,k:8192", 715, -1),
      gemm("compute/bf16gemm/wgmma/m:4096,n:4096,k:4096", 640, 93.0),
      gemm("compute/bf16gemm/cublas/m:4096,n:4096,k:4096", 688, -1),
  };
  std::string all;
  for (const auto& l : closing_summary(lines, {"", false, false})) all += l + "\n";
  EXPECT_NE(all.find("FP16 GEMM       690 TFLOPS, 96.5 % of cuBLAS  (compute/hgemm/wgmma/m:8192,n:8192,k:8192)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("BF16 GEMM       640 TFLOPS, 93.0 % of cuBLAS  (compute/bf16gemm/wgmma/m:4096,n:4096,k:4096)"),
            std::string::npos)
      << all;
}

// The cache plateau starts at 1/64 of the cache: the host's 16 KiB copy (32 KiB working set, in
// a core's L1) read 393 GB/s and was quoted as its last-level cache; with no set that large no
// plateau (the report and the roofline quote none either), with the cache size unknown the best
// of all.
TEST(ConsoleSummary, CachePlateauStartsAtAFractionOfTheCache) {
  const auto copy = [](const std::string& bytes, double gbps, double working_set) {
    BenchmarkLine l = line("bandwidth/copy/kernel/bytes:" + bytes, {gbps, gbps, gbps}, "GBps", "l2");
    l.working_set_bytes = working_set;
    return l;
  };
  constexpr double KiB = 1024, MiB = KiB * 1024;
  const std::vector<BenchmarkLine> lines = {copy("16KiB", 393, 32 * KiB), copy("256KiB", 160, 512 * KiB),
                                            copy("1MiB", 146, 2 * MiB)};
  const auto summary = [&](const std::vector<BenchmarkLine>& l, double cache) {
    std::string all;
    for (const auto& s : closing_summary(l, {"", false, true, cache})) all += s + "\n";
    return all;
  };
  EXPECT_NE(summary(lines, 32 * MiB).find("cache plateau   160 GB/s  (bandwidth/copy/kernel/bytes:256KiB)"),
            std::string::npos)
      << summary(lines, 32 * MiB);
  EXPECT_EQ(summary({lines[0]}, 32 * MiB).find("cache plateau"), std::string::npos) << summary({lines[0]}, 32 * MiB);
  EXPECT_NE(summary(lines, 0).find("cache plateau   393 GB/s"), std::string::npos);
}

TEST(ConsoleSummary, SaysWhenNothingWasSavedAndNamesTheHostsCache) {
  const auto s =
      closing_summary({line("bandwidth/copy/kernel/bytes:1MiB", {100, 101, 99}, "GBps", "l2")}, {"", false, true});
  std::string all;
  for (const auto& l : s) all += l + "\n";
  EXPECT_NE(all.find("nothing was saved: give --out=FILE or --results-dir=DIR"), std::string::npos) << all;
  EXPECT_NE(all.find("cache plateau"), std::string::npos) << all;
  EXPECT_EQ(all.find("L2 plateau"), std::string::npos) << all;
}

}  // namespace
}  // namespace gpubench
