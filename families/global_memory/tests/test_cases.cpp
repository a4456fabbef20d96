// The naming contract over the full registry, and the sweeps' coverage.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <map>
#include <set>
#include <string>

#include "harness/family.h"
#include "harness/model/device.h"

GPUBENCH_FAMILY(global_memory)

namespace gpubench {
namespace {

std::vector<BenchCase> every_case(bool quick) {
  SweepOptions o;
  o.quick = quick;
  o.l2_bytes = 50ull << 20;  // H100
  o.memory_bytes = 80ull << 30;
  o.backend_kind = "cuda";
  return all_cases(o);
}

TEST(Families, NamesFollowTheContract) {
  const RE2 re("^(bandwidth|compute|roofline|memory)/[a-z0-9_]+/[a-z0-9_]+/[A-Za-z0-9_:,.]+$");
  for (bool quick : {false, true}) {
    std::set<std::string> seen;
    for (const auto& c : every_case(quick)) {
      EXPECT_TRUE(RE2::FullMatch(c.name(), re)) << c.name();
      EXPECT_TRUE(seen.insert(c.name()).second) << "duplicate " << c.name();
      // (a management operation's work is its latency: no bytes moved, no FLOP)
      EXPECT_TRUE(c.work.useful_bytes > 0 || c.work.flop > 0 || c.work.metric == Metric::latency_us)
          << c.name() << " has no work model";
    }
  }
}

TEST(Families, BandwidthFilterSelectsExactlyTheBandwidthFamily) {
  const RE2 filter("bandwidth");  // what --filter=bandwidth matches (search, as Google Benchmark does)
  for (const auto& c : every_case(false)) {
    EXPECT_EQ(RE2::PartialMatch(c.name(), filter), c.family == "bandwidth") << c.name();
  }
}

TEST(Families, MemorySweepSpansCachesToDram) {
  SweepOptions o;
  o.l2_bytes = 50ull << 20;
  o.memory_bytes = 80ull << 30;
  double smallest = 1e30, largest = 0;
  for (const auto& c : families::global_memory::cases(o)) {
    if (c.kernel != "copy" || c.variant != "kernel") continue;
    smallest = std::min(smallest, c.arg("bytes"));
    largest = std::max(largest, c.arg("bytes"));
  }
  EXPECT_LE(smallest, 8 * 1024);
  EXPECT_GE(largest, 8.0 * (50 << 20));
  EXPECT_GE(largest, 1024.0 * 1024 * 1024);
}

// The per-SM cache read is labelled l1 only where one SM's L1 can hold its set (256 KiB of L1
// and shared memory on an H100: its 256 KiB and 1 MiB sets are read from the L2).
TEST(Families, PerSmCacheReadIsL1OnlyWhereTheSetFits) {
  DeviceDescription h100;
  h100.cc_major = 9;
  h100.sm_count = 132;
  h100.l2_bytes = 50ull << 20;
  h100.memory_bytes = 80ull << 30;
  std::map<std::string, std::string> level;
  for (const auto& c : families::global_memory::cases(sweep_options(h100, "cuda", false)))
    if (c.kernel == "block_set_read") level[size_token(static_cast<std::uint64_t>(c.arg("bytes")))] = c.level;
  EXPECT_EQ(level, (std::map<std::string, std::string>{
                       {"4KiB", "l1"}, {"16KiB", "l1"}, {"64KiB", "l1"}, {"256KiB", "l2"}, {"1MiB", "l2"}}));
  for (const auto& c : families::global_memory::cases(sweep_options(h100, "host", false))) {
    if (c.kernel == "block_set_read") {
      EXPECT_EQ(c.level, "l1") << c.name();  // the per-core caches
    }
  }
  EXPECT_EQ(l1_shared_bytes_per_sm(8, 0), 192u * 1024);
  EXPECT_EQ(l1_shared_bytes_per_sm(12, 0), 128u * 1024);
  EXPECT_EQ(l1_shared_bytes_per_sm(5, 2), 0u);
}

TEST(Families, QuickIsSmall) {
  SweepOptions o;
  o.quick = true;
  for (const auto& c : families::global_memory::cases(o))
    EXPECT_LE(c.work.working_set_bytes, 64.0 * (1 << 20)) << c.name();
}

TEST(Families, LargeStreamingSetsRotateOtherLargeSetsFlush) {
  SweepOptions o;
  o.l2_bytes = 50ull << 20;
  int rotating = 0, flushed = 0;
  for (const auto& c : families::global_memory::cases(o)) {
    const double ws = c.work.working_set_bytes;
    if (c.kernel == "copy" || c.kernel == "read" || c.kernel == "write") {
      EXPECT_FALSE(c.needs_flush) << c.name();
      if (ws >= 25.0 * (1 << 20)) {
        // together at least 4 x L2, and no more copies than that needs
        EXPECT_GE(c.slots * ws, 4.0 * (50 << 20)) << c.name();
        EXPECT_LT((c.slots - 1) * ws, 4.0 * (50 << 20)) << c.name();
        ++rotating;
      } else {
        EXPECT_EQ(c.slots, 1) << c.name();
      }
    } else if (c.kernel != "chase" && ws >= 25.0 * (1 << 20)) {
      EXPECT_TRUE(c.needs_flush) << c.name();
      EXPECT_EQ(c.slots, 1) << c.name();
      ++flushed;
    }
  }
  EXPECT_GT(rotating, 0);
  EXPECT_GT(flushed, 0);
}

TEST(Families, HostTrafficIsCountedInCacheLines) {
  SweepOptions o;
  o.quick = true;
  o.backend_kind = "host";
  o.traffic = traffic_geometry(DeviceDescription{}, true);  // as the app sets it for the host backend
  for (const auto& c : families::global_memory::cases(o)) {
    if (c.kernel == "gather") {
      EXPECT_DOUBLE_EQ(c.work.traffic_bytes, c.arg("bytes") / 4 * (4 + 4 + 64)) << c.name();
    }
  }
}

TEST(Families, GpuTrafficFollowsTheDevicesFetchUnitAndEcc) {
  SweepOptions o;
  o.quick = true;
  o.backend_kind = "cuda";
  DeviceDescription h100;
  h100.l2_fetch_bytes = 64;
  h100.ecc = true;
  o.traffic = traffic_geometry(h100, false);
  int strided = 0;
  for (const auto& c : families::global_memory::cases(o)) {
    if (c.kernel == "gather") {
      EXPECT_DOUBLE_EQ(c.work.traffic_bytes, c.arg("bytes") / 4 * (4 + 4 + 64)) << c.name();
    }
    if (c.kernel == "strided" && c.arg("stride") == 8) {
      // read 32 + write 32 + read-fill 32 bytes per touched element
      EXPECT_DOUBLE_EQ(c.work.traffic_bytes, c.work.useful_bytes / 8 * 96) << c.name();
      ++strided;
    }
  }
  EXPECT_EQ(strided, 1);
}

TEST(Families, SizeTokens) {
  EXPECT_EQ(size_token(4096), "4KiB");
  EXPECT_EQ(size_token(64ull << 20), "64MiB");
  EXPECT_EQ(size_token(1ull << 30), "1GiB");
  EXPECT_EQ(size_token(1000), "1000B");
  EXPECT_EQ(size_token(1536), "1536B");
}

}  // namespace
}  // namespace gpubench
