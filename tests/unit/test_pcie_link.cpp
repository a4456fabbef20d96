// PCIe link reading from sysfs fixtures (tests/fixtures/sysfs, described in its README), the
// per-direction arithmetic, and the downgraded-link warning.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "harness/model/device.h"
#include "harness/pcie/link.h"
#include "tests/sysfs_fixtures.h"

namespace gpubench::pcie {
namespace {

TEST(PcieBusId, CudaFormatMapsToLowerCaseSysfsName) {
  EXPECT_EQ(sysfs_pci_address("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(sysfs_pci_address("0000:AF:1F.7"), "0000:af:1f.7");
  EXPECT_EQ(sysfs_pci_address("0000:3b:00.0"), "0000:3b:00.0");  // already sysfs form
}

TEST(PcieBusId, NvmlEightDigitDomainAndMissingDomain) {
  EXPECT_EQ(sysfs_pci_address("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(sysfs_pci_address("3B:00.0"), "0000:3b:00.0");            // lspci without -D
  EXPECT_EQ(sysfs_pci_address("00010000:E1:00.0"), "10000:e1:00.0");  // VMD domain kept whole
}

TEST(PcieBusId, MalformedAddressesThrow) {
  for (const char* bad :
       {"", "3b", "0000:3b:00", "0000:3G:00.0", "0000:3b:20.0", "0000:3b:00.8", "0000:3b.00:0", "000000000:3b:00.0"}) {
    EXPECT_THROW(sysfs_pci_address(bad), std::invalid_argument) << bad;
  }
}

TEST(PcieSpeed, EveryGenerationInNewAndOldKernelFormats) {
  double rate = -1;
  EXPECT_EQ(parse_link_speed_gen("2.5 GT/s", &rate), 1);
  EXPECT_DOUBLE_EQ(rate, 2.5);
  EXPECT_EQ(parse_link_speed_gen("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(parse_link_speed_gen("5.0 GT/s PCIe"), 2);
  EXPECT_EQ(parse_link_speed_gen("5 GT/s"), 2);
  EXPECT_EQ(parse_link_speed_gen("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(parse_link_speed_gen("8 GT/s"), 3);
  EXPECT_EQ(parse_link_speed_gen("16.0 GT/s PCIe", &rate), 4);
  EXPECT_DOUBLE_EQ(rate, 16.0);
  EXPECT_EQ(parse_link_speed_gen("16 GT/s"), 4);
  EXPECT_EQ(parse_link_speed_gen("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(parse_link_speed_gen("64.0 GT/s PCIe"), 6);
}

TEST(PcieSpeed, UnknownAndGarbageAreZero) {
  double rate = -1;
  EXPECT_EQ(parse_link_speed_gen("Unknown", &rate), 0);
  EXPECT_DOUBLE_EQ(rate, 0.0);
  EXPECT_EQ(parse_link_speed_gen("Unknown speed"), 0);
  EXPECT_EQ(parse_link_speed_gen(""), 0);
  EXPECT_EQ(parse_link_speed_gen("16.0"), 0);            // no unit
  EXPECT_EQ(parse_link_speed_gen("12.0 GT/s PCIe"), 0);  // no such generation
  EXPECT_EQ(parse_link_speed_gen("16.0 Gb/s"), 0);
}

TEST(PcieWidth, Parses) {
  EXPECT_EQ(parse_link_width("16"), 16);
  EXPECT_EQ(parse_link_width("x8"), 8);
  EXPECT_EQ(parse_link_width("1"), 1);
  EXPECT_EQ(parse_link_width("0"), 0);   // link down
  EXPECT_EQ(parse_link_width("64"), 0);  // no such link
  EXPECT_EQ(parse_link_width("16x"), 0);
  EXPECT_EQ(parse_link_width(""), 0);
}

TEST(PcieLinkSysfs, Gen3Gen4Gen5Gen6FromFixtures) {
  struct Case {
    const char* bus_id;
    int gen, width, numa;
  };
  for (const Case& c : {Case{"0000:17:00.0", 3, 16, 0}, Case{"0000:3B:00.0", 4, 16, 0}, Case{"0000:5E:00.0", 5, 16, 1},
                        Case{"0000:D8:00.0", 6, 16, 0}}) {
    const PcieLink l = read_pcie_link(kSysfsFixtures, c.bus_id);
    EXPECT_TRUE(l.found) << c.bus_id;
    EXPECT_EQ(l.current.gen, c.gen) << c.bus_id;
    EXPECT_EQ(l.current.width, c.width) << c.bus_id;
    EXPECT_EQ(l.max.gen, c.gen) << c.bus_id;
    EXPECT_EQ(l.max.width, c.width) << c.bus_id;
    EXPECT_EQ(l.numa_node, c.numa) << c.bus_id;
    EXPECT_FALSE(l.downgraded()) << c.bus_id;
    EXPECT_EQ(downgraded_link_warning("GPU 0", l), "") << c.bus_id;
  }
}

TEST(PcieLinkSysfs, OldKernelFormatNarrowLink) {
  const PcieLink l = read_pcie_link(kSysfsFixtures, "0000:af:00.0");
  EXPECT_EQ(link_name(l.current), "Gen4 x8");
  EXPECT_EQ(link_name(l.max), "Gen4 x16");
  EXPECT_TRUE(l.downgraded());
  EXPECT_EQ(downgraded_link_warning("0000:af:00.0", l),
            "warning: PCIe link of 0000:af:00.0 runs at Gen4 x8, below its maximum Gen4 x16");
}

TEST(PcieLinkSysfs, DowngradedGenerationWarning) {
  const PcieLink l = read_pcie_link(kSysfsFixtures, "0000:86:00.0");
  EXPECT_EQ(l.address, "0000:86:00.0");
  EXPECT_EQ(link_name(l.current), "Gen4 x16");
  EXPECT_EQ(link_name(l.max), "Gen5 x16");
  EXPECT_TRUE(l.downgraded());
  EXPECT_EQ(downgraded_link_warning("NVIDIA H100 PCIe (0000:86:00.0)", l),
            "warning: PCIe link of NVIDIA H100 PCIe (0000:86:00.0) runs at Gen4 x16, below its maximum Gen5 x16");
  // The ceiling is the negotiated link, not the maximum.
  EXPECT_NEAR(link_GBps_per_direction(l.current), 31.5077, 1e-4);
}

TEST(PcieLinkSysfs, UnknownSpeedAndZeroWidth) {
  const PcieLink l = read_pcie_link(kSysfsFixtures, "0000:01:00.0");
  EXPECT_TRUE(l.found);
  EXPECT_FALSE(l.current.known());
  EXPECT_FALSE(l.max.known());
  EXPECT_EQ(l.numa_node, -1);
  EXPECT_EQ(link_name(l.current), "unknown");
  EXPECT_EQ(link_GBps_per_direction(l.current), 0.0);
  EXPECT_FALSE(l.downgraded());  // unknown is not evidence of a fault
}

TEST(PcieLinkSysfs, MissingFilesLeaveFieldsUnknown) {
  const PcieLink l = read_pcie_link(kSysfsFixtures, "0000:02:00.0");
  EXPECT_TRUE(l.found);
  EXPECT_EQ(l.current.gen, 0);
  EXPECT_EQ(l.current.width, 0);
  EXPECT_EQ(link_name(l.max), "Gen5 x16");
  EXPECT_EQ(l.numa_node, -1);
  EXPECT_FALSE(l.downgraded());
  EXPECT_EQ(downgraded_link_warning("GPU 0", l), "");
}

TEST(PcieLinkSysfs, MissingDeviceAndMissingRoot) {
  const PcieLink a = read_pcie_link(kSysfsFixtures, "0000:99:00.0");
  EXPECT_FALSE(a.found);
  EXPECT_EQ(a.address, "0000:99:00.0");
  EXPECT_FALSE(a.current.known());
  const PcieLink b = read_pcie_link(kSysfsFixtures + "/does-not-exist", "0000:3b:00.0");
  EXPECT_FALSE(b.found);
  EXPECT_EQ(link_name(b.current), "unknown");
}

TEST(PcieLinkSysfs, FiveDigitDomain) {
  const PcieLink l = read_pcie_link(kSysfsFixtures, "00010000:E1:00.0");
  EXPECT_TRUE(l.found);
  EXPECT_EQ(link_name(l.current), "Gen2 x4");
}

TEST(PciePath, NarrowRootPortAboveAFullSpeedCard) {
  // bus/pci/devices/0000:81:00.0 links to devices/pci0000:80/0000:80:01.0/0000:81:00.0.
  const PcieLink l = read_pcie_link(kSysfsFixtures, "0000:81:00.0");
  ASSERT_EQ(l.upstream.size(), 1u);
  EXPECT_EQ(l.upstream[0].address, "0000:80:01.0");
  EXPECT_EQ(link_name(l.upstream[0].current), "Gen4 x8");
  EXPECT_FALSE(l.downgraded());  // the card's own link is at its maximum...
  const PathHop* b = upstream_bottleneck(l);
  ASSERT_NE(b, nullptr);  // ...but the root port above it is not
  EXPECT_EQ(b->address, "0000:80:01.0");
  EXPECT_EQ(path_description(l), "0000:80:01.0 Gen4 x8 > 0000:81:00.0 Gen5 x16");
  EXPECT_EQ(link_warnings("GPU 0", l),
            (std::vector<std::string>{
                "warning: PCIe path of GPU 0 narrows to Gen4 x8 at 0000:80:01.0, upstream of its own Gen5 x16 link"}));
}

TEST(PciePath, HealthyPathThroughASwitch) {
  const PcieLink l = read_pcie_link(kSysfsFixtures, "0000:C3:00.0");
  ASSERT_EQ(l.upstream.size(), 3u);  // root port, switch upstream port, switch downstream port
  EXPECT_EQ(l.upstream[0].address, "0000:c0:01.0");
  EXPECT_EQ(l.upstream[2].address, "0000:c2:08.0");
  EXPECT_EQ(upstream_bottleneck(l), nullptr);
  EXPECT_TRUE(link_warnings("GPU 1", l).empty());
  EXPECT_EQ(path_description(l),
            "0000:c0:01.0 Gen5 x16 > 0000:c1:00.0 Gen5 x16 > 0000:c2:08.0 Gen5 x16 > 0000:c3:00.0 Gen5 x16");
  EXPECT_EQ(l.numa_node, 0);
}

TEST(PciePath, NoUpstreamKnownAndBothWarnings) {
  const PcieLink flat = read_pcie_link(kSysfsFixtures, "0000:3b:00.0");  // a plain directory: no path
  EXPECT_TRUE(flat.upstream.empty());
  EXPECT_EQ(path_description(flat), "0000:3b:00.0 Gen4 x16");
  // A downgraded card below a narrower port: both lines, the card's own first.
  PcieLink both = read_pcie_link(kSysfsFixtures, "0000:86:00.0");
  both.upstream.push_back(PathHop{"0000:85:00.0", LinkState{3, 16, 8.0}});
  const auto w = link_warnings("GPU 2", both);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "warning: PCIe link of GPU 2 runs at Gen4 x16, below its maximum Gen5 x16");
  EXPECT_EQ(w[1], "warning: PCIe path of GPU 2 narrows to Gen3 x16 at 0000:85:00.0, upstream of its own Gen4 x16 link");
  // An upstream hop as fast as the card (or unknown) is no bottleneck.
  PcieLink same = read_pcie_link(kSysfsFixtures, "0000:3b:00.0");
  same.upstream = {PathHop{"0000:3a:00.0", LinkState{4, 16, 16.0}}, PathHop{"0000:39:00.0", LinkState{}}};
  EXPECT_EQ(upstream_bottleneck(same), nullptr);
}

TEST(PcieLinkNvml, FillsOnlyWhatSysfsDoesNotKnow) {
  PcieLink partial = read_pcie_link(kSysfsFixtures, "0000:02:00.0");  // current_* files missing
  EXPECT_EQ(partial.source, "sysfs");
  EXPECT_TRUE(fill_unknown_link(partial, LinkState{4, 16, 0}, LinkState{3, 8, 0}));
  EXPECT_EQ(link_name(partial.current), "Gen4 x16");
  EXPECT_DOUBLE_EQ(partial.current.speed_GTps, 16.0);
  EXPECT_EQ(link_name(partial.max), "Gen5 x16");  // sysfs knew it: NVML's value is ignored
  EXPECT_EQ(partial.source, "sysfs+nvml");
  EXPECT_TRUE(partial.downgraded());

  PcieLink absent = read_pcie_link(kSysfsFixtures, "0000:99:00.0");
  EXPECT_EQ(absent.source, "");
  EXPECT_TRUE(fill_unknown_link(absent, LinkState{5, 16, 0}, LinkState{5, 16, 0}));
  EXPECT_EQ(absent.source, "nvml");
  EXPECT_EQ(link_name(absent.current), "Gen5 x16");
  EXPECT_FALSE(absent.downgraded());

  PcieLink full = read_pcie_link(kSysfsFixtures, "0000:3b:00.0");
  EXPECT_FALSE(fill_unknown_link(full, LinkState{1, 1, 0}, LinkState{1, 1, 0}));
  EXPECT_EQ(link_name(full.current), "Gen4 x16");
  EXPECT_EQ(full.source, "sysfs");
}

TEST(PcieLinkNvml, FailedQueriesFillNothing) {
  PcieLink l = read_pcie_link(kSysfsFixtures, "0000:01:00.0");  // "Unknown" in sysfs
  EXPECT_EQ(l.source, "");
  EXPECT_FALSE(fill_unknown_link(l, LinkState{}, LinkState{7, 16, 0}));  // 0 = failed; Gen7 invalid
  EXPECT_FALSE(fill_unknown_link(l, LinkState{4, 0, 0}, LinkState{4, 64, 0}));
  EXPECT_EQ(link_name(l.current), "unknown");
  EXPECT_EQ(l.source, "");
}

TEST(PcieLinkSysfs, NoLoadNeededWhenFullSpeed) {
  bool reread = true;
  int loads = 0;
  const PcieLink l = read_pcie_link_under_load(
      kSysfsFixtures, "0000:5e:00.0", [&] { ++loads; }, &reread);
  EXPECT_EQ(loads, 0);
  EXPECT_FALSE(reread);
  EXPECT_EQ(link_name(l.current), "Gen5 x16");
}

/// A writable copy of the idle-GPU fixture (0000:03:00.0, Gen1 of Gen5) in a temporary root.
class IdleLinkCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpubench_sysfs_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/bus/pci/devices/0000:03:00.0";
    for (const std::string& d : {root_ + "/bus", root_ + "/bus/pci", root_ + "/bus/pci/devices", dir_}) {
      ASSERT_EQ(::mkdir(d.c_str(), 0700), 0) << d;
    }
    for (const char* f :
         {"current_link_speed", "current_link_width", "max_link_speed", "max_link_width", "numa_node"}) {
      std::ifstream in(kSysfsFixtures + "/bus/pci/devices/0000:03:00.0/" + f);
      std::ofstream out(dir_ + "/" + f);
      out << in.rdbuf();
      files_.push_back(dir_ + "/" + f);
    }
  }
  void TearDown() override {
    for (const std::string& f : files_) std::remove(f.c_str());
    for (const std::string& d : {dir_, root_ + "/bus/pci/devices", root_ + "/bus/pci", root_ + "/bus", root_}) {
      ::rmdir(d.c_str());
    }
  }
  std::string root_, dir_;
  std::vector<std::string> files_;
};

TEST_F(IdleLinkCopy, LoadRaisesTheLinkBeforeTheSecondRead) {
  EXPECT_EQ(link_name(read_pcie_link(root_, "0000:03:00.0").current), "Gen1 x16");
  bool reread = false;
  int loads = 0;
  // The "load" does what a GPU under traffic does: the link trains up to its full speed.
  const PcieLink l = read_pcie_link_under_load(
      root_, "0000:03:00.0",
      [&] {
        ++loads;
        std::ofstream(dir_ + "/current_link_speed") << "32.0 GT/s PCIe\n";
      },
      &reread);
  EXPECT_EQ(loads, 1);
  EXPECT_TRUE(reread);
  EXPECT_EQ(link_name(l.current), "Gen5 x16");
  EXPECT_FALSE(l.downgraded());
}

// A link slow to retrain: still at its idle speed on the first reads under load, then up.
TEST(PcieLinkUnderLoad, RereadsUntilTheLinkHasTrained) {
  const auto link_at = [](int gen) {
    PcieLink l;
    l.current = LinkState{gen, 16, gen == 5 ? 32.0 : 2.5};
    l.max = LinkState{5, 16, 32.0};
    return l;
  };
  for (const int slow_reads : {1, 3, kLinkReadsUnderLoad}) {
    int reads = 0, loads = 0;
    bool reread = false;
    const PcieLink l = read_link_under_load(
        // The idle read, then `slow_reads` reads under load at Gen1 before the link is at Gen5.
        [&] { return link_at(reads++ <= slow_reads ? 1 : 5); }, [&] { ++loads; }, &reread,
        std::chrono::milliseconds(0));
    EXPECT_EQ(loads, 1);
    EXPECT_TRUE(reread);
    if (slow_reads < kLinkReadsUnderLoad) {
      EXPECT_FALSE(l.downgraded()) << slow_reads;
      EXPECT_EQ(reads, slow_reads + 2) << "no read once the link is up";
    } else {
      EXPECT_TRUE(l.downgraded()) << "a link that never trains is reported as it reads";
      EXPECT_EQ(reads, 1 + kLinkReadsUnderLoad) << "the reads under load are bounded";
    }
  }
}

TEST_F(IdleLinkCopy, StillDowngradedUnderLoadWarns) {
  const PcieLink l = read_pcie_link_under_load(root_, "0000:03:00.0", [] {});
  EXPECT_TRUE(l.downgraded());
  EXPECT_EQ(downgraded_link_warning("GPU 0", l),
            "warning: PCIe link of GPU 0 runs at Gen1 x16, below its maximum Gen5 x16");
}

TEST(PciePerDirection, ArithmeticMatchesReference) {
  // GT/s x lanes x 128/130 / 8 (harness/model/REFERENCE_FIGURES.md): Gen3 15.75, Gen4 31.5, Gen5 63.0 GB/s at x16.
  EXPECT_NEAR(pcie_GBps_per_direction(3, 16), 15.7538, 1e-4);
  EXPECT_NEAR(pcie_GBps_per_direction(4, 16), 31.5077, 1e-4);
  EXPECT_NEAR(pcie_GBps_per_direction(5, 16), 63.0154, 1e-4);
  EXPECT_NEAR(pcie_GBps_per_direction(4, 8), 15.7538, 1e-4);
  EXPECT_DOUBLE_EQ(pcie_GBps_per_direction(0, 16), 0.0);
  EXPECT_DOUBLE_EQ(pcie_GBps_per_direction(5, 0), 0.0);
  // From the fixtures: the same figures come out of the sysfs reader.
  EXPECT_NEAR(link_GBps_per_direction(read_pcie_link(kSysfsFixtures, "0000:17:00.0").current), 15.7538, 1e-4);
  EXPECT_NEAR(link_GBps_per_direction(read_pcie_link(kSysfsFixtures, "0000:3b:00.0").current), 31.5077, 1e-4);
  EXPECT_NEAR(link_GBps_per_direction(read_pcie_link(kSysfsFixtures, "0000:5e:00.0").current), 63.0154, 1e-4);
  EXPECT_NEAR(link_GBps_per_direction(read_pcie_link(kSysfsFixtures, "0000:af:00.0").current), 15.7538, 1e-4);
}

}  // namespace
}  // namespace gpubench::pcie
