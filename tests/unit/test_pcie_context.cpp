// The PCIe facts a CUDA backend publishes: the negotiated link drives peak_pcie_* (not the
// card's datasheet link), the context entries, and --numa-bind's decisions.
#include <gtest/gtest.h>
#include <sched.h>

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

}  // namespace
}  // namespace gpubench::pcie
