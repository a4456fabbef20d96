// The peer-to-peer table: rows only on the CUDA backend of a process that sees two GPUs or more,
// row I of the matrix on device I (every other GPU as the peer), names that follow the contract,
// --filter=bandwidth/p2p selecting exactly them, the sizes, the work model (bytes once per
// direction, no peak) and the label with the link's path.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <set>
#include <string>

#include "harness/family.h"
#include "harness/host/host_backend.h"
#include "harness/name_filter.h"
#include "harness/runner.h"

GPUBENCH_FAMILY(p2p)

namespace gpubench {
namespace {

constexpr double MiB = 1024.0 * 1024.0;

SweepOptions options(int ordinal, int count, bool quick, const char* kind = "cuda") {
  DeviceDescription d;
  d.cc_major = 9;
  d.sm_count = 132;
  d.l2_bytes = std::uint64_t{50} << 20;
  d.memory_bytes = std::uint64_t{80} << 30;
  d.ordinal = ordinal;
  d.visible_devices = count;
  SweepOptions o = sweep_options(d, kind, quick);
  EXPECT_EQ(o.device_ordinal, ordinal);
  EXPECT_EQ(o.device_count, count);
  return o;
}

std::set<std::string> names_of(const std::vector<BenchCase>& cases) {
  std::set<std::string> s;
  for (const auto& c : cases) s.insert(c.name());
  return s;
}

TEST(P2pRows, NoneOnTheHostOnOneGpuOrWhenTheDeviceIsUnknown) {
  EXPECT_TRUE(families::p2p::cases(options(-1, 0, false, "host")).empty());
  EXPECT_TRUE(families::p2p::cases(options(0, 2, false, "host")).empty());  // host backend: never
  EXPECT_TRUE(families::p2p::cases(options(0, 1, false)).empty());          // one GPU
  EXPECT_TRUE(families::p2p::cases(options(-1, 0, false)).empty());         // --list without a GPU
  EXPECT_TRUE(families::p2p::cases(options(-1, 4, false)).empty());         // no device of its own
  // And so the whole registry has none of them there.
  for (const auto& c : all_cases(options(0, 1, false))) EXPECT_NE(c.kernel.rfind("p2p", 0), 0u) << c.name();
}

TEST(P2pRows, RowIOfTheMatrix) {
  const std::set<std::string> n = names_of(families::p2p::cases(options(1, 3, false)));
  EXPECT_EQ(n, (std::set<std::string>{
                   "bandwidth/p2p_ce/write/peer:0,bytes:256MiB", "bandwidth/p2p_ce/read/peer:0,bytes:256MiB",
                   "bandwidth/p2p_ce/bidir/peer:0,bytes:256MiB", "bandwidth/p2p_ce/read/peer:2,bytes:256MiB",
                   "bandwidth/p2p_sm/write/peer:0,bytes:256MiB", "bandwidth/p2p_sm/read/peer:0,bytes:256MiB",
                   "bandwidth/p2p_sm/bidir/peer:0,bytes:256MiB", "bandwidth/p2p_ce/write/peer:2,bytes:256MiB",
                   "bandwidth/p2p_ce/bidir/peer:2,bytes:256MiB", "bandwidth/p2p_sm/write/peer:2,bytes:256MiB",
                   "bandwidth/p2p_sm/read/peer:2,bytes:256MiB", "bandwidth/p2p_sm/bidir/peer:2,bytes:256MiB"}));
  for (int count : {2, 4, 8}) {
    for (int self = 0; self < count; ++self) {
      const auto cases = families::p2p::cases(options(self, count, true));
      EXPECT_EQ(cases.size(), static_cast<std::size_t>(6 * (count - 1)));
      std::set<int> peers;
      for (const auto& c : cases) peers.insert(static_cast<int>(c.arg("peer")));
      EXPECT_EQ(peers.size(), static_cast<std::size_t>(count - 1));
      EXPECT_EQ(peers.count(self), 0u) << "a device is not its own peer";
    }
  }
}

TEST(P2pRows, NamesFollowTheContractAndTheFilterSelectsExactlyThem) {
  const RE2 contract("^bandwidth/p2p_(ce|sm)/(write|read|bidir)/peer:[0-9]+,bytes:[0-9]+(MiB|GiB)$");
  for (bool quick : {false, true}) {
    const auto cases = families::p2p::cases(options(0, 4, quick));
    const std::set<std::string> p2p = names_of(cases);
    EXPECT_EQ(p2p.size(), cases.size()) << "duplicate names";
    for (const auto& c : cases) {
      EXPECT_TRUE(RE2::FullMatch(c.name(), contract)) << c.name();
      EXPECT_EQ(c.family, "bandwidth");
      EXPECT_EQ(c.params, "peer:" + std::to_string(static_cast<int>(c.arg("peer"))) +
                              ",bytes:" + size_token(static_cast<std::uint64_t>(c.arg("bytes"))));
    }
    const NameFilter filter("bandwidth/p2p"), bandwidth("bandwidth");
    std::set<std::string> selected;
    for (const auto& c : all_cases(options(0, 4, quick))) {
      if (filter.matches(c.name())) selected.insert(c.name());
    }
    EXPECT_EQ(selected, p2p);
    for (const auto& name : p2p) EXPECT_TRUE(bandwidth.matches(name)) << name;
  }
}

TEST(P2pSweep, TwoHundredFiftySixMiBAndSixteenWhenQuick) {
  for (bool quick : {false, true}) {
    for (const auto& c : families::p2p::cases(options(0, 2, quick))) {
      EXPECT_EQ(c.arg("bytes"), (quick ? 16 : 256) * MiB) << c.name();
      EXPECT_FALSE(c.needs_flush) << "far past L2 or link-bound: " << c.name();
    }
  }
}

TEST(P2pWork, BytesOncePerDirectionNoPeak) {
  for (const auto& c : families::p2p::cases(options(0, 2, false))) {
    const double bytes = c.arg("bytes");
    const double directions = c.variant == "bidir" ? 2 : 1;
    EXPECT_EQ(c.work.useful_bytes, directions * bytes) << c.name();
    EXPECT_EQ(c.work.working_set_bytes, 2 * directions * bytes) << c.name();
    EXPECT_EQ(c.work.flop, 0.0);
    EXPECT_EQ(c.work.peak, PeakKind::none) << "no theoretical link figure: no percent of peak";
    EXPECT_EQ(c.work.metric, Metric::GBps);
    EXPECT_EQ(c.level, "p2p");
    EXPECT_EQ(c.sweep, "peer");
  }
  // 2 x 256 MiB each way in 1.5 ms: 357.9 GB/s, no percentage.
  const auto cases = families::p2p::cases(options(0, 2, false));
  for (const auto& c : cases) {
    if (c.key() != "bandwidth/p2p_ce/bidir") continue;
    Peaks p;
    p.dram_GBps = 3350;
    const DerivedCounters d = derive_counters(c.work, 1.5e-3, p);
    EXPECT_NEAR(d.GBps, 357.913941, 1e-5);
    EXPECT_LT(d.pct_of_peak, 0.0) << "left out";
  }
}

TEST(P2pLabel, CarriesTheLinkPath) {
  SweepOptions o = options(1, 4, false);
  o.peer_paths = {"nvlink", "", "pcie_switch"};  // peer 3 beyond the list: unknown
  for (const auto& c : families::p2p::cases(o)) {
    const int peer = static_cast<int>(c.arg("peer"));
    const std::string path = peer == 0 ? "nvlink" : peer == 2 ? "pcie_switch" : "unknown";
    EXPECT_EQ(c.path, path) << c.name();
    EXPECT_EQ(row_label(c), "peak=none metric=GBps level=p2p sweep=peer path=" + path) << c.name();
  }
  // Rows of other families carry no path.
  for (const auto& c : all_cases(options(0, 1, false))) EXPECT_TRUE(c.path.empty()) << c.name();
}

TEST(P2pHost, TheHostBackendRunsNoneAndSaysWhy) {
  auto host = make_host_backend(host_workloads());
  for (const auto& c : families::p2p::cases(options(0, 2, true))) {
    EXPECT_FALSE(host->supports(c)) << c.name();
    EXPECT_NE(host->unavailable_reason(c).find("a copy between two GPUs"), std::string::npos)
        << host->unavailable_reason(c);
  }
}

}  // namespace
}  // namespace gpubench
