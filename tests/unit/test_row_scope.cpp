// The rows --validate selects (what the expected bands read, nothing more) and the split
// --device=all makes between one GPU's rows and the rows that load the node's shared links.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "harness/family.h"
#include "harness/row_scope.h"

namespace gpubench {
namespace {

SweepOptions h100_sweep() {
  DeviceDescription d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.l2_bytes = 50ull << 20;
  d.memory_bytes = 80ull << 30;
  d.sm_count = 132;
  return sweep_options(d, "cuda", false);
}

std::set<std::string> names(const std::vector<BenchCase>& rows) {
  std::set<std::string> out;
  for (const BenchCase& c : rows) out.insert(c.name());
  return out;
}

TEST(AcceptanceRows, EachBandHasItsRowsAndNothingElseRuns) {
  const auto table = all_cases(h100_sweep());
  const auto rows = names(acceptance_rows(table, "cuda"));
  for (const char* want : {"bandwidth/copy/kernel/bytes:1GiB", "bandwidth/copy/kernel/bytes:4MiB",
                           "bandwidth/pcie_h2d/pinned_ce/bytes:256MiB", "bandwidth/pcie_d2h/pinned_ce/bytes:1GiB",
                           "compute/sgemm/kernel/m:4096,n:4096,k:4096", "compute/sgemm/cublas/m:4096,n:4096,k:4096",
                           "compute/hgemm/kernel/m:4096,n:4096,k:4096", "compute/hgemm/cublas/m:4096,n:4096,k:4096"})
    EXPECT_TRUE(rows.count(want)) << want;
  EXPECT_TRUE(std::any_of(rows.begin(), rows.end(),
                          [](const std::string& n) { return n.rfind("compute/peak_fp32_fma/", 0) == 0; }));
  for (const std::string& n : rows) {
    EXPECT_EQ(n.find("8192"), std::string::npos) << n;       // one GEMM size
    EXPECT_EQ(n.find("pageable"), std::string::npos) << n;   // pinned copy-engine transfers only
    EXPECT_EQ(n.find("roofline/"), std::string::npos) << n;  // no sweep
    EXPECT_EQ(n.find("memory/"), std::string::npos) << n;
  }
  EXPECT_LT(rows.size(), table.size() / 5);
}

TEST(AcceptanceRows, TheHostGetsItsOwnStandIns) {
  const auto rows = names(acceptance_rows(all_cases(sweep_options(DeviceDescription{}, "host", true)), "host"));
  EXPECT_TRUE(std::any_of(rows.begin(), rows.end(),
                          [](const std::string& n) { return n.rfind("bandwidth/pcie_h2d/pageable_memcpy/", 0) == 0; }));
  EXPECT_TRUE(std::any_of(rows.begin(), rows.end(),
                          [](const std::string& n) { return n.rfind("bandwidth/copy/kernel/", 0) == 0; }));
}

// Host transfers, unified-memory migration and peer copies share the node's links, allocation its
// driver and host memory; the rest stays inside one GPU.
TEST(RowScope, LinkRowsAreThoseOverPcieOrToPeersAndTheAllocationRows) {
  const auto table = all_cases(h100_sweep());
  int links = 0;
  for (const BenchCase& c : table) {
    const bool allocation =
        c.family == "memory" && (c.kernel == "alloc" || c.kernel == "alloc_loop" || c.kernel == "fragmentation");
    const bool link =
        allocation || c.level == "pcie" || c.kernel.rfind("pcie_", 0) == 0 || c.kernel.rfind("p2p_", 0) == 0;
    if (c.key() == "memory/managed/prefetch" || c.key() == "bandwidth/pcie_h2d/pinned_ce" ||
        c.key() == "memory/alloc/pinned_host" || c.key() == "memory/alloc/cuda_malloc" ||
        c.key() == "memory/fragmentation/async_pool") {
      EXPECT_TRUE(link) << c.name();
    }
    if (c.key() == "memory/axpy/fp32" || c.key() == "memory/managed/device_resident") {
      EXPECT_FALSE(in_row_scope(c, Options::RowScope::links)) << c.name();
    }
    if (c.kernel == "copy" || c.kernel == "sgemm") {
      EXPECT_FALSE(link) << c.name();
    }
    EXPECT_EQ(in_row_scope(c, Options::RowScope::links), link) << c.name();
    EXPECT_NE(in_row_scope(c, Options::RowScope::local), in_row_scope(c, Options::RowScope::links)) << c.name();
    EXPECT_TRUE(in_row_scope(c, Options::RowScope::all));
    links += link;
  }
  EXPECT_GT(links, 10);
}

}  // namespace
}  // namespace gpubench
