// The PCIe facts a CUDA backend publishes: the negotiated link drives peak_pcie_* (not the
// card's datasheet link), the context entries, and --numa-bind's decisions.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "harness/model/card_table.h"
#include "harness/pcie/numa.h"
#include "harness/pcie/pcie_context.h"
#include "tests/sysfs_fixtures.h"

namespace gpubench::pcie {
namespace {

DeviceDescription h100_pcie() {
  DeviceDescription d;
  d.name = "NVIDIA H100 PCIe";
  d.cc_major = 9;
  d.sm_count = 114;
  return d;
}

TEST(PcieContext, NegotiatedLinkSetsThePeakNotTheDatasheet) {
  DeviceDescription d = h100_pcie();
  apply_link(read_pcie_link(kSysfsFixtures, "0000:86:00.0"), d);  // a Gen5 card trained at Gen4
  EXPECT_EQ(d.pcie_gen, 4);
  EXPECT_EQ(d.pcie_width, 16);
  EXPECT_EQ(d.pcie_gen_max, 5);
  EXPECT_EQ(d.pcie_width_max, 16);
  const Peaks p = theoretical_peaks(d);
  EXPECT_EQ(p.source, "card table: h100_pcie");
  EXPECT_NEAR(p.pcie_GBps, 31.5077, 1e-4);
}

TEST(PcieContext, UnknownLinkFallsBackToTheCardTable) {
  DeviceDescription d = h100_pcie();
  apply_link(read_pcie_link(kSysfsFixtures, "0000:01:00.0"), d);  // "Unknown" speed, width 0
  EXPECT_EQ(d.pcie_gen, 0);
  EXPECT_EQ(d.pcie_width, 0);
  EXPECT_NEAR(theoretical_peaks(d).pcie_GBps, 63.0154, 1e-4);  // the card's Gen5 x16
  const auto c = link_context(read_pcie_link(kSysfsFixtures, "0000:01:00.0"), false);
  EXPECT_EQ(c.at("pcie_link"), "unknown");
  EXPECT_EQ(c.at("pcie_peak_source"), "card table (negotiated link unknown)");
  EXPECT_EQ(c.at("gpu_numa_node"), "unknown");
}

TEST(PcieContext, EntriesOfADowngradedLink) {
  const auto c = link_context(read_pcie_link(kSysfsFixtures, "0000:86:00.0"), true);
  EXPECT_EQ(c.at("pcie_address"), "0000:86:00.0");
  EXPECT_EQ(c.at("pcie_link"), "Gen4 x16");
  EXPECT_EQ(c.at("pcie_link_max"), "Gen5 x16");
  EXPECT_EQ(c.at("pcie_link_read"), "under load");
  EXPECT_EQ(c.at("pcie_link_warning"),
            "warning: PCIe link of 0000:86:00.0 runs at Gen4 x16, below its maximum Gen5 x16");
  EXPECT_EQ(c.at("gpu_numa_node"), "1");
  EXPECT_EQ(c.at("pcie_peak_source"), "negotiated link Gen4 x16 (sysfs)");
  EXPECT_NE(c.at("pcie_timing").find("spin kernel"), std::string::npos);
}

TEST(PcieContext, PathAndItsBottleneck) {
  const auto c = link_context(read_pcie_link(kSysfsFixtures, "0000:81:00.0"), false);
  EXPECT_EQ(c.at("pcie_path"), "0000:80:01.0 Gen4 x8 > 0000:81:00.0 Gen5 x16");
  EXPECT_EQ(c.at("pcie_link_warning"),
            "warning: PCIe path of 0000:81:00.0 narrows to Gen4 x8 at 0000:80:01.0, upstream of its own Gen5 x16 link");
  EXPECT_EQ(c.at("pcie_link"), "Gen5 x16");  // the peak stays the card's own negotiated link
}

TEST(PcieContext, LinkFromNvmlIsSaidSo) {
  PcieLink l = read_pcie_link(kSysfsFixtures, "0000:99:00.0");  // not in this sysfs
  fill_unknown_link(l, LinkState{5, 16, 0}, LinkState{5, 16, 0});
  const auto c = link_context(l, false);
  EXPECT_EQ(c.at("pcie_link_source"), "nvml");
  EXPECT_EQ(c.at("pcie_link_read"), "not in sysfs");
  EXPECT_EQ(c.at("pcie_peak_source"), "negotiated link Gen5 x16 (nvml)");
  EXPECT_EQ(link_context(read_pcie_link(kSysfsFixtures, "0000:01:00.0"), false).at("pcie_link_source"), "none");
}

TEST(PcieContext, HealthyLinkAndMissingDevice) {
  const auto ok = link_context(read_pcie_link(kSysfsFixtures, "0000:5e:00.0"), false);
  EXPECT_EQ(ok.at("pcie_link_warning"), "none");
  EXPECT_EQ(ok.at("pcie_link_read"), "idle");
  const auto missing = link_context(read_pcie_link(kSysfsFixtures, "0000:99:00.0"), false);
  EXPECT_EQ(missing.at("pcie_link_read"), "not in sysfs");
  EXPECT_EQ(missing.at("pcie_link"), "unknown");
  EXPECT_EQ(missing.at("pcie_link_warning"), "none");
}

// Pinned to one CPU (the last this process may use), the context names that CPU and its node
// in the fixture tree.
TEST(PcieContext, BenchCpuIsWhereThisThreadRuns) {
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  int last = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &before)) last = cpu;
  ASSERT_GE(last, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const auto c = bench_cpu_context(kSysfsFixtures);
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  EXPECT_EQ(c.at("bench_cpu"), std::to_string(last));
  const int node = node_of_cpu(kSysfsFixtures, last);
  EXPECT_EQ(c.at("bench_cpu_numa_node"), node >= 0 ? std::to_string(node) : "unknown");
}

TEST(PcieNumaBind, RefusesWithoutAKnownGpuNode) {
  const BindResult host = bind_to_gpu_node(std::nullopt, kSysfsFixtures);
  EXPECT_FALSE(host.ok);
  EXPECT_EQ(host.message, "--numa-bind: this backend has no GPU, nothing to bind");
  const BindResult unknown = bind_to_gpu_node(-1, kSysfsFixtures);
  EXPECT_FALSE(unknown.ok);
  EXPECT_NE(unknown.message.find("unknown"), std::string::npos);
  const BindResult memory_only = bind_to_gpu_node(2, kSysfsFixtures);  // empty cpulist
  EXPECT_FALSE(memory_only.ok);
  EXPECT_EQ(memory_only.message, "--numa-bind: cannot bind: NUMA node 2 lists no CPUs");
}

// Without --numa-bind or --no-numa-bind: a binding only where it can matter (a GPU whose node is
// known, two NUMA nodes with CPUs or more: the fixtures' node0 and node1, node2 holds memory only).
TEST(PcieNumaBind, AutomaticBindsOnlyWhereItCanMatter) {
  EXPECT_EQ(nodes_with_cpus(kSysfsFixtures), 2);
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  const auto unchanged = [&before] {
    cpu_set_t now;
    CPU_ZERO(&now);
    return sched_getaffinity(0, sizeof now, &now) == 0 && CPU_EQUAL(&before, &now);
  };
  EXPECT_EQ(auto_bind_to_gpu_node(std::nullopt, kSysfsFixtures).message, "auto: no GPU, not bound");
  EXPECT_EQ(auto_bind_to_gpu_node(-1, kSysfsFixtures).message, "auto: the GPU's NUMA node is unknown, not bound");
  // One node with CPUs (and a memory-only one): nothing to choose between.
  char dir[] = "/tmp/gpubench-numa-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path root(dir);
  std::filesystem::create_directories(root / "devices/system/node/node0");
  std::filesystem::create_directories(root / "devices/system/node/node1");
  std::ofstream(root / "devices/system/node/node0/cpulist") << "0-63\n";
  std::ofstream(root / "devices/system/node/node1/cpulist") << "\n";
  EXPECT_EQ(nodes_with_cpus(root.string()), 1);
  const BindResult single = auto_bind_to_gpu_node(0, root.string());
  EXPECT_FALSE(single.ok);
  EXPECT_EQ(single.message, "auto: one NUMA node with CPUs, not bound");
  std::filesystem::remove_all(root);
  EXPECT_TRUE(unchanged());
  // Two: it binds as --numa-bind does, or says why it could not.
  const BindResult memory_only = auto_bind_to_gpu_node(2, kSysfsFixtures);
  EXPECT_FALSE(memory_only.ok);
  EXPECT_EQ(memory_only.message, "auto: cannot bind: NUMA node 2 lists no CPUs");
  EXPECT_TRUE(unchanged());
  // A fixture node holding a CPU this process may use binds; where none does (a machine whose
  // CPUs are all beyond the fixtures' 16), the attempt says why not.
  int node = -1;
  for (int n : {0, 1})
    for (int c : node_cpus(kSysfsFixtures, n))
      if (CPU_ISSET(c, &before)) node = n;
  const BindResult bound = auto_bind_to_gpu_node(node >= 0 ? node : 0, kSysfsFixtures);
  if (node >= 0) {
    EXPECT_TRUE(bound.ok) << bound.message;
    EXPECT_EQ(bound.message.rfind("auto: bound to NUMA node " + std::to_string(node), 0), 0u) << bound.message;
  } else {
    EXPECT_FALSE(bound.ok);
    EXPECT_NE(bound.message.find("is in this process's affinity mask"), std::string::npos) << bound.message;
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
}

}  // namespace
}  // namespace gpubench::pcie
