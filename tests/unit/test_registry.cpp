// The registry of families (families/CMakeLists.txt): names follow the contract, --filter=bandwidth
// selects exactly the bandwidth family, every row is covered by both backends' workload tables
// (run or declared unavailable, never silently absent), and rows carry their meaning.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/family.h"
#include "harness/name_filter.h"

namespace gpubench {
namespace {

SweepOptions options(const char* kind, bool quick) {
  DeviceDescription d;
  d.cc_major = 9;
  d.sm_count = 132;
  d.sm_clock_kHz = 1.98e6;
  d.l2_bytes = std::uint64_t{50} << 20;
  d.memory_bytes = std::uint64_t{80} << 30;
  return sweep_options(d, kind, quick);
}

TEST(Registry, NamesFollowTheContractAndAreUnique) {
  const RE2 contract("^(bandwidth|compute|roofline|memory)/[a-z0-9_]+/[a-z0-9_]+/[A-Za-z0-9_:,.]+$");
  for (const char* kind : {"cuda", "host"}) {
    for (bool quick : {false, true}) {
      std::set<std::string> seen;
      for (const auto& c : all_cases(options(kind, quick))) {
        EXPECT_TRUE(RE2::FullMatch(c.name(), contract)) << c.name();
        EXPECT_TRUE(seen.insert(c.name()).second) << "duplicate " << c.name();
      }
    }
  }
}

// --quick is a smoke run of everything (#11: under 10 s on an H100): every family/kernel/variant
// of the full sweep runs in it, at fewer sizes, never a row the full sweep lacks the kind of.
TEST(Registry, QuickRunsEveryKernelAndVariantOfTheFullSweepAtFewerRows) {
  for (const char* kind : {"cuda", "host"}) {
    std::set<std::string> full_keys, quick_keys;
    const auto full = all_cases(options(kind, false));
    const auto quick = all_cases(options(kind, true));
    for (const auto& c : full) full_keys.insert(c.key());
    for (const auto& c : quick) quick_keys.insert(c.key());
    std::vector<std::string> missing;
    std::set_difference(full_keys.begin(), full_keys.end(), quick_keys.begin(), quick_keys.end(),
                        std::back_inserter(missing));
    for (const auto& k : missing) ADD_FAILURE() << kind << ": --quick does not run " << k;
    EXPECT_TRUE(std::includes(full_keys.begin(), full_keys.end(), quick_keys.begin(), quick_keys.end())) << kind;
    EXPECT_LT(quick.size(), full.size()) << kind;
  }
}

TEST(Registry, BandwidthFilterSelectsExactlyTheBandwidthFamily) {
  const NameFilter filter("bandwidth");
  int bandwidth = 0;
  for (const auto& c : all_cases(options("cuda", false))) {
    EXPECT_EQ(filter.matches(c.name()), c.family == "bandwidth") << c.name();
    bandwidth += c.family == "bandwidth" ? 1 : 0;
  }
  EXPECT_GT(bandwidth, 50);
}

TEST(Registry, EveryFamilyContributesRows) {
  std::set<std::string> kernels;
  for (const auto& c : every_row()) kernels.insert(c.kernel);
  for (const char* k : {"copy", "chase", "smem", "pcie_h2d", "intensity_fp32", "peak_fp32_fma", "sgemm", "hgemm"})
    EXPECT_EQ(kernels.count(k), 1u) << k;
}

TEST(Registry, TheHostTableCoversEveryRowAndDeclaresWhatItDoesNotRun) {
  const WorkloadTable host = host_workloads();  // throws if a row is neither run nor declared
  int unavailable = 0;
  for (const auto& c : every_row()) {
    const std::string why = host.unavailable_reason(c, 0);
    EXPECT_EQ(why.find("no workload"), std::string::npos) << c.name() << ": " << why;
    unavailable += why.empty() ? 0 : 1;
  }
  EXPECT_GT(unavailable, 0);  // cuBLAS, Thrust, CUB and the GPU transfers at least
  const BenchCase sgemm = [] {
    for (const auto& c : every_row())
      if (c.key() == "compute/sgemm/cublas") return c;
    throw std::logic_error("no compute/sgemm/cublas row");
  }();
  EXPECT_EQ(host.unavailable_reason(sgemm, 0), "cuBLAS needs a GPU");
}

// The completeness check itself: a row without an entry, and an entry no row has (a misspelled
// key), are start-up errors that name them.
TEST(WorkloadTable, ARowNeitherRunNorDeclaredIsAnError) {
  BenchCase c;
  c.family = "bandwidth";
  c.kernel = "copy";
  c.variant = "kernel";
  c.params = "bytes:4KiB";
  WorkloadTable t;
  try {
    t.check_complete({c}, "host");
    FAIL() << "an empty table passed";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("bandwidth/copy/kernel/bytes:4KiB"), std::string::npos) << e.what();
  }
  t.not_here("bandwidth/copy/kernel", "a reason");
  EXPECT_NO_THROW(t.check_complete({c}, "host"));
  EXPECT_EQ(t.unavailable_reason(c, 0), "a reason");
  EXPECT_EQ(t.find(c, 90), nullptr);
  t.not_here("bandwidth/copy/kernal", "misspelled");
  try {
    t.check_complete({c}, "host");
    FAIL() << "a key no row has passed";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("bandwidth/copy/kernal"), std::string::npos) << e.what();
  }
  EXPECT_THROW(t.not_here("bandwidth/copy/kernel", "twice"), std::logic_error);
  EXPECT_THROW(t.not_here("bandwidth/write/kernel", ""), std::logic_error);
}

TEST(WorkloadTable, AnArchitectureTooOldIsAReason) {
  BenchCase c;
  c.family = "compute";
  c.kernel = "hgemm";
  c.variant = "kernel";
  c.params = "m:1";
  WorkloadTable t;
  t.add(
      "compute/hgemm/kernel", [](const BenchCase&, Backend&) -> std::unique_ptr<Workload> { return nullptr; }, 80);
  EXPECT_EQ(t.unavailable_reason(c, 90), "");
  EXPECT_EQ(t.unavailable_reason(c, 75), "needs compute capability 8.0 or newer; this device is 7.5");
}

TEST(RowLabel, EveryRowSaysItsPeakMetricLevelAndSweep) {
  const RE2 label(
      "^peak=(none|dram|l1|l2|smem|pcie_h2d|pcie_d2h|fp32|fp16_tensor|bf16_tensor|fp8_tensor) "
      "metric=(GBps|TFLOPS|latency_ns|latency_us) "
      "level=(dram|l1|l2|smem|pcie|p2p|none) sweep=[a-z_]+( path=[a-z_]+)?$");
  for (const auto& c : every_row())
    EXPECT_TRUE(RE2::FullMatch(row_label(c), label)) << c.name() << ": " << row_label(c);
}

TEST(RowLabel, CacheResidentRowsAreL2AndDramSizedRowsDram) {
  const auto cases = all_cases(options("cuda", false));  // L2 50 MiB: below 25 MiB is cache-resident
  const auto find = [&](const std::string& name) {
    for (const auto& c : cases)
      if (c.name() == name) return c;
    throw std::logic_error("no row " + name);
  };
  EXPECT_EQ(row_label(find("bandwidth/copy/kernel/bytes:4MiB")), "peak=l2 metric=GBps level=l2 sweep=bytes");
  EXPECT_EQ(row_label(find("bandwidth/copy/kernel/bytes:1GiB")), "peak=dram metric=GBps level=dram sweep=bytes");
  EXPECT_EQ(row_label(find("bandwidth/chase/kernel/bytes:16KiB")), "peak=none metric=latency_ns level=l2 sweep=bytes");
  EXPECT_EQ(row_label(find("bandwidth/pcie_d2h/pinned_ce/bytes:1GiB")),
            "peak=pcie_d2h metric=GBps level=pcie sweep=bytes");
  EXPECT_EQ(row_label(find("compute/sgemm/cublas/m:4096,n:4096,k:4096")), "peak=fp32 metric=TFLOPS level=none sweep=m");
}

}  // namespace
}  // namespace gpubench
