// The PCIe family's table: names follow the contract, --filter=bandwidth/pcie selects exactly
// these rows, the sweep and work models are what the README says; and the host backend's
// pageable-to-pageable copy runs and verifies for real.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "harness/family.h"
#include "harness/host/host_backend.h"
#include "harness/runner.h"

GPUBENCH_FAMILY(pcie)

namespace gpubench {
namespace {

const RE2 kNameContract("^(bandwidth|compute|roofline)/[a-z0-9_]+/[a-z0-9_]+/[A-Za-z0-9_:,.]+$");

std::set<std::string> names_of(const std::vector<BenchCase>& cases) {
  std::set<std::string> s;
  for (const auto& c : cases) s.insert(c.name());
  return s;
}

SweepOptions options(bool quick) {
  SweepOptions o;
  o.quick = quick;
  o.backend_kind = "cuda";
  o.l2_bytes = 50ull << 20;
  o.memory_bytes = 80ull << 30;
  return o;
}

TEST(PcieNames, FollowTheContractAndAreUnique) {
  for (bool quick : {false, true}) {
    const auto cases = families::pcie::cases(options(quick));
    ASSERT_FALSE(cases.empty());
    EXPECT_EQ(names_of(cases).size(), cases.size()) << "duplicate names";
    for (const auto& c : cases) {
      EXPECT_TRUE(RE2::FullMatch(c.name(), kNameContract)) << c.name();
      EXPECT_EQ(c.family, "bandwidth");
      EXPECT_EQ(c.kernel.rfind("pcie", 0), 0u) << c.name();
      EXPECT_EQ(c.params, "bytes:" + size_token(static_cast<std::uint64_t>(c.arg("bytes"))));
    }
  }
}

TEST(PcieNames, FilterSelectsExactlyThePcieFamily) {
  for (bool quick : {false, true}) {
    const auto all = all_cases(options(quick));
    const std::set<std::string> pcie = names_of(families::pcie::cases(options(quick)));
    // Google Benchmark's filter is a regex search over the name.
    const RE2 filter("bandwidth/pcie");
    std::set<std::string> selected;
    for (const auto& c : all) {
      if (RE2::PartialMatch(c.name(), filter)) selected.insert(c.name());
    }
    EXPECT_EQ(selected, pcie);
    // And --filter=bandwidth keeps them (they are part of the bandwidth family).
    for (const auto& n : pcie) EXPECT_TRUE(RE2::PartialMatch(n, RE2("bandwidth"))) << n;
  }
}

TEST(PcieNames, TheDocumentedRowsExist) {
  const std::set<std::string> n = names_of(families::pcie::cases(options(false)));
  for (const char* expected :
       {"bandwidth/pcie_h2d/pinned_ce/bytes:16MiB", "bandwidth/pcie_h2d/pageable_ce/bytes:4KiB",
        "bandwidth/pcie_h2d/wc_pinned_ce/bytes:256MiB", "bandwidth/pcie_h2d/pinned_sm/bytes:256MiB",
        "bandwidth/pcie_d2h/pinned_ce/bytes:1MiB", "bandwidth/pcie_d2h/pageable_ce/bytes:16MiB",
        "bandwidth/pcie_d2h/pinned_sm/bytes:64KiB", "bandwidth/pcie_bidir_h2d/pinned_ce/bytes:256MiB",
        "bandwidth/pcie_bidir_d2h/pinned_ce/bytes:256MiB", "bandwidth/pcie_h2d/pageable_memcpy/bytes:4KiB",
        "bandwidth/pcie_d2h/pageable_memcpy/bytes:1GiB"}) {
    EXPECT_EQ(n.count(expected), 1u) << expected;
  }
  // Write-combined memory is for CPU-written, GPU-read buffers: no d2h row.
  for (const auto& name : n) EXPECT_EQ(name.find("pcie_d2h/wc_"), std::string::npos) << name;
}

TEST(PcieSweep, FourKiBTo256MiBBySixteenThenOneGiBAndSmallerWhenQuick) {
  auto sizes = [](bool quick) {
    std::set<double> s;
    for (const auto& c : families::pcie::cases(options(quick))) {
      if (c.key() == "bandwidth/pcie_h2d/pinned_ce") s.insert(c.arg("bytes"));
    }
    return s;
  };
  const std::set<double> full = sizes(false), quick = sizes(true);
  EXPECT_EQ(*full.begin(), 4096.0);
  EXPECT_EQ(*full.rbegin(), 1073741824.0);
  EXPECT_EQ(full, (std::set<double>{4096.0, 65536.0, 1048576.0, 16777216.0, 268435456.0, 1073741824.0}));
  EXPECT_EQ(*quick.begin(), 4096.0);
  EXPECT_EQ(*quick.rbegin(), 16.0 * 1048576.0);
  EXPECT_EQ(quick.size(), 2u);  // the two ends, a smoke run's budget
  EXPECT_LT(quick.size(), full.size());
}

// 1 GiB only for the one-direction pinned copy-engine rows and the host's: every other row
// stops at 256 MiB.
TEST(PcieSweep, OneGiBOnlyForPinnedCopyEngineAndHostRows) {
  std::set<std::string> at_1GiB, largest_256MiB;
  std::map<std::string, double> largest;
  for (const auto& c : families::pcie::cases(options(false))) {
    largest[c.key()] = std::max(largest[c.key()], c.arg("bytes"));
    if (c.arg("bytes") == 1073741824.0) at_1GiB.insert(c.key());
  }
  EXPECT_EQ(at_1GiB,
            (std::set<std::string>{"bandwidth/pcie_h2d/pinned_ce", "bandwidth/pcie_d2h/pinned_ce",
                                   "bandwidth/pcie_h2d/pageable_memcpy", "bandwidth/pcie_d2h/pageable_memcpy"}));
  for (const auto& [key, bytes] : largest) {
    if (!at_1GiB.count(key)) {
      EXPECT_EQ(bytes, 268435456.0) << key;
    }
  }
  EXPECT_EQ(largest.size(), 11u);
}

TEST(PcieWork, TransferCountedOnceAgainstItsDirection) {
  for (const auto& c : families::pcie::cases(options(false))) {
    const double bytes = c.arg("bytes");
    EXPECT_EQ(c.work.useful_bytes, bytes) << c.name();
    EXPECT_EQ(c.work.metric, Metric::GBps);
    const bool d2h = c.kernel.find("d2h") != std::string::npos;
    EXPECT_EQ(c.work.peak, d2h ? PeakKind::pcie_d2h : PeakKind::pcie_h2d) << c.name();
    EXPECT_FALSE(c.needs_flush) << c.name();
  }
  // Percent of link: 1 GiB in 40 ms on a Gen4 x16 link (31.5077 GB/s) is 85.2 %.
  Peaks p;
  p.pcie_GBps = 31.5077;
  const WorkModel w = transfer_work(1073741824.0, PeakKind::pcie_d2h);
  const DerivedCounters d = derive_counters(w, 0.040, p);
  EXPECT_NEAR(d.GBps, 26.8435, 1e-3);
  EXPECT_NEAR(d.pct_of_peak, 85.197, 1e-2);
}

TEST(PcieHost, BackendImplementsOnlyThePageableMemcpyRows) {
  auto host = make_host_backend(host_workloads());
  int supported = 0;
  for (const auto& c : families::pcie::cases(options(true))) {
    EXPECT_EQ(host->supports(c), c.variant == "pageable_memcpy") << c.name();
    supported += host->supports(c) ? 1 : 0;
  }
  EXPECT_EQ(supported, 2 * 2);  // h2d and d2h at the 2 quick sizes
}

TEST(PcieHost, PageableCopyRunsAndVerifiesBothWays) {
  auto host = make_host_backend(host_workloads());
  for (const char* kernel : {"pcie_h2d", "pcie_d2h"}) {
    BenchCase c;
    c.family = "bandwidth";
    c.kernel = kernel;
    c.variant = "pageable_memcpy";
    c.params = "bytes:64KiB";
    c.args["bytes"] = 65536 + 12;  // a tail that is not a multiple of the word size
    c.work = transfer_work(c.args["bytes"], PeakKind::pcie_h2d);
    auto w = host->create(c);
    w->prepare();
    w->poison();
    EXPECT_FALSE(w->verify().ok) << "a poisoned output must fail verification";
    const double s = w->run(3);
    EXPECT_GT(s, 0.0);
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << v.message;
    const auto extra = w->extra_counters(s / 3);
    EXPECT_EQ(extra.at("host_clock_timed"), 1.0);
    EXPECT_EQ(extra.at("spin_held"), 0.0);
  }
  // No link on the host: the percentage is left out, not invented.
  EXPECT_EQ(host->peaks().pcie_GBps, 0.0);
}

}  // namespace
}  // namespace gpubench
