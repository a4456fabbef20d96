// The memory family's table (families/memory/cases.cpp): one filter selects it, each backend
// lists its own rows and no other family's name matches it, the rows carry what their workloads
// need (whole pages, whole chunks, equal bytes per precision) and say what their headline is.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/family.h"

GPUBENCH_FAMILY(memory)

namespace gpubench {
namespace {

DeviceDescription h100() {
  DeviceDescription d;
  d.cc_major = 9;
  d.sm_count = 132;
  d.sm_clock_kHz = 1.98e6;
  d.l2_bytes = std::uint64_t{50} << 20;
  d.memory_bytes = std::uint64_t{80} << 30;
  return d;
}

std::vector<BenchCase> rows(const std::string& backend, bool quick) {
  return families::memory::cases(sweep_options(h100(), backend, quick));
}

std::set<std::string> keys(const std::vector<BenchCase>& cases) {
  std::set<std::string> k;
  for (const BenchCase& c : cases) k.insert(c.key());
  return k;
}

TEST(MemoryCases, OneFilterSelectsTheFamilyAndNothingElse) {
  const RE2 filter("memory");
  for (const char* backend : {"cuda", "host"}) {
    for (const BenchCase& c : all_cases(sweep_options(h100(), backend, false))) {
      const bool ours = c.family == "memory";
      EXPECT_EQ(RE2::PartialMatch(c.name(), filter), ours) << c.name();
    }
  }
}

TEST(MemoryCases, EachBackendListsItsOwnRowsOnly) {
  const std::set<std::string> cuda = keys(rows("cuda", false)), host = keys(rows("host", false));
  EXPECT_EQ(cuda.count("memory/alloc/cuda_malloc"), 1u);
  EXPECT_EQ(cuda.count("memory/managed/demand_fault"), 1u);
  EXPECT_EQ(cuda.count("memory/alloc/malloc"), 0u);
  EXPECT_EQ(cuda.count("memory/first_touch/pages_4k"), 0u);
  EXPECT_EQ(host.count("memory/alloc/malloc"), 1u);
  EXPECT_EQ(host.count("memory/first_touch/pages_2m"), 1u);
  EXPECT_EQ(host.count("memory/overlap/host_threads"), 1u);
  EXPECT_EQ(host.count("memory/managed/prefetch"), 0u);
  EXPECT_EQ(host.count("memory/alloc/cuda_malloc"), 0u);
  // Both measure the precisions and the loop baseline.
  for (const char* shared : {"memory/axpy/fp64", "memory/axpy/bf16", "memory/alloc_loop/allocated_once"}) {
    EXPECT_EQ(cuda.count(shared), 1u) << shared;
    EXPECT_EQ(host.count(shared), 1u) << shared;
  }
}

TEST(MemoryCases, QuickRunsEveryQuestionOnFewerRowsWithUniqueNames) {
  for (const char* backend : {"cuda", "host"}) {
    for (bool quick : {false, true}) {
      std::set<std::string> names;
      for (const BenchCase& c : rows(backend, quick)) EXPECT_TRUE(names.insert(c.name()).second) << c.name();
    }
    EXPECT_LT(rows(backend, true).size(), rows(backend, false).size());
    EXPECT_EQ(keys(rows(backend, true)), keys(rows(backend, false)));
  }
}

TEST(MemoryCases, AllocationRowsSpan4KiBTo1GiBAndReportLatency) {
  std::map<std::string, std::set<double>> sizes;
  for (const BenchCase& c : rows("cuda", false)) {
    if (c.kernel != "alloc") continue;
    sizes[c.variant].insert(c.arg("bytes"));
    EXPECT_EQ(c.work.metric, Metric::latency_us) << c.name();
    EXPECT_EQ(c.work.useful_bytes, 0.0) << c.name();
    EXPECT_NE(row_label(c).find("metric=latency_us"), std::string::npos) << row_label(c);
  }
  EXPECT_EQ(sizes.size(), 6u);
  for (const auto& [variant, s] : sizes) {
    EXPECT_EQ(*s.begin(), 4096.0) << variant;
    EXPECT_EQ(*s.rbegin(), std::pow(2.0, 30)) << variant;
  }
}

TEST(MemoryCases, RowsCarryWhatTheirWorkloadsNeed) {
  for (const char* backend : {"cuda", "host"}) {
    for (bool quick : {false, true}) {
      for (const BenchCase& c : rows(backend, quick)) {
        SCOPED_TRACE(c.name());
        if (c.kernel == "managed" || c.kernel == "first_touch") {
          EXPECT_EQ(std::fmod(c.arg("bytes"), 2.0 * 1024 * 1024), 0.0) << "whole large pages";
        }
        if (c.kernel == "overlap") {
          EXPECT_EQ(std::fmod(c.arg("bytes"), c.arg("chunks") * 16), 0.0) << "whole 16-byte vectors per chunk";
          EXPECT_EQ(c.sweep, backend == std::string("cuda") ? "streams" : "threads");
        }
        if (c.kernel == "axpy") {
          EXPECT_EQ(c.work.useful_bytes, 3.0 * c.arg("bytes")) << "x, y read and the output written";
          EXPECT_EQ(c.work.working_set_bytes, 3.0 * c.arg("bytes")) << "three buffers";
          EXPECT_EQ(c.work.peak, PeakKind::dram);
        }
        if (c.kernel == "alloc_loop") {
          // Against a peak only where DRAM bounds it: a cache-resident iteration is launch-bound.
          EXPECT_EQ(c.work.peak, c.level == "dram" ? PeakKind::dram : PeakKind::none) << c.level;
        }
        if (c.kernel == "fragmentation") {
          EXPECT_LT(c.arg("small"), c.arg("large"));
        }
      }
    }
  }
}

TEST(MemoryCases, ThePrecisionsMoveEqualBytesAndDifferentElementCounts) {
  std::map<std::string, double> bytes, elements;
  for (const BenchCase& c : rows("cuda", false)) {
    if (c.kernel != "axpy") continue;
    bytes[c.variant] = c.arg("bytes");
    elements[c.variant] = c.arg("bytes") / c.arg("elem_bytes");
  }
  ASSERT_EQ(bytes.size(), 4u);
  EXPECT_EQ(bytes["fp64"], bytes["bf16"]);
  EXPECT_EQ(elements["fp16"], 4 * elements["fp64"]);
  EXPECT_EQ(elements["bf16"], 2 * elements["fp32"]);
}

TEST(MemoryCases, OverlapSweepsOneToEightStreams) {
  std::set<double> streams;
  for (const BenchCase& c : rows("cuda", false))
    if (c.kernel == "overlap") streams.insert(c.arg("streams"));
  EXPECT_EQ(streams, (std::set<double>{1, 2, 4, 8}));
}

}  // namespace
}  // namespace gpubench
