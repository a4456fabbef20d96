// NUMA helpers for PCIe transfers: cpulist parsing, node CPUs from sysfs fixtures, and binding.
#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "harness/pcie/link.h"
#include "harness/pcie/numa.h"
#include "tests/sysfs_fixtures.h"

namespace gpubench::pcie {
namespace {

TEST(PcieCpulist, RangesAndSingles) {
  EXPECT_EQ(parse_cpulist("0-3,8-11"), (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(parse_cpulist("5"), (std::vector<int>{5}));
  EXPECT_EQ(parse_cpulist("0,2,4-5\n"), (std::vector<int>{0, 2, 4, 5}));
  EXPECT_EQ(parse_cpulist("8-9,0-1"), (std::vector<int>{0, 1, 8, 9}));  // sorted
  EXPECT_TRUE(parse_cpulist("").empty());
  EXPECT_TRUE(parse_cpulist("\n").empty());
}

TEST(PcieCpulist, MalformedThrows) {
  for (const char* bad : {"3-1", "a", "1,,2", "1-", "-1", "0-3,", " 1", "1 - 2"}) {
    EXPECT_THROW(parse_cpulist(bad), std::invalid_argument) << bad;
  }
}

TEST(PcieNuma, NodeCpusFromFixtures) {
  EXPECT_EQ(node_cpus(kSysfsFixtures, 0), (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(node_cpus(kSysfsFixtures, 1), (std::vector<int>{4, 5, 6, 7, 12, 13, 14, 15}));
  EXPECT_TRUE(node_cpus(kSysfsFixtures, 2).empty());  // memory-only node
  EXPECT_TRUE(node_cpus(kSysfsFixtures, 7).empty());  // no such node
  EXPECT_TRUE(node_cpus(kSysfsFixtures, -1).empty());
}

TEST(PcieNuma, NodeOfCpu) {
  EXPECT_EQ(node_of_cpu(kSysfsFixtures, 9), 0);
  EXPECT_EQ(node_of_cpu(kSysfsFixtures, 12), 1);
  EXPECT_EQ(node_of_cpu(kSysfsFixtures, 16), -1);
  EXPECT_EQ(node_of_cpu(kSysfsFixtures, -1), -1);
}

TEST(PcieNuma, GpuNodeFromLinkThenItsCpus) {
  const PcieLink l = read_pcie_link(kSysfsFixtures, "0000:5E:00.0");
  ASSERT_EQ(l.numa_node, 1);
  EXPECT_EQ(node_cpus(kSysfsFixtures, l.numa_node).front(), 4);
}

TEST(PcieNuma, CurrentCpuIsInTheAffinityMask) {
  const int cpu = current_cpu();
  ASSERT_GE(cpu, 0);
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  EXPECT_TRUE(CPU_ISSET(cpu, &mask));
}

TEST(PcieNuma, BindFailsCleanlyWithoutChangingAnything) {
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  const BindResult unknown = bind_to_numa_node(kSysfsFixtures, -1);
  EXPECT_FALSE(unknown.ok);
  EXPECT_NE(unknown.message.find("unknown"), std::string::npos);
  const BindResult empty = bind_to_numa_node(kSysfsFixtures, 2);
  EXPECT_FALSE(empty.ok);
  EXPECT_NE(empty.message.find("lists no CPUs"), std::string::npos);
  cpu_set_t after;
  CPU_ZERO(&after);
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(PcieNuma, BindToTheNodeOfTheCurrentCpuRestrictsTheMask) {
  // Real sysfs: bind to the node this process runs on now (a single-node machine has node0),
  // which always intersects the allowed CPUs; then restore the mask.
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  const int node = node_of_cpu(kSysfsFixtures, current_cpu());
  if (node < 0) GTEST_SKIP() << "this machine's sysfs lists no NUMA nodes";
  const BindResult r = bind_to_numa_node(kSysfsFixtures, node);
  ASSERT_TRUE(r.ok) << r.message;
  cpu_set_t now;
  CPU_ZERO(&now);
  ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_EQ(CPU_COUNT(&now), static_cast<int>(r.cpus.size()));
  for (int c : r.cpus) EXPECT_TRUE(CPU_ISSET(c, &now));
  const std::vector<int> listed = node_cpus(kSysfsFixtures, node);
  for (int c : r.cpus) EXPECT_TRUE(std::find(listed.begin(), listed.end(), c) != listed.end());
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
}

}  // namespace
}  // namespace gpubench::pcie
