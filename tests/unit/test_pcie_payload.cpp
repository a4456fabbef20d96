// What a PCIe link carries after protocol overhead: the max payload size read from config space
// and the TLP-overhead model, and the pct_of_protocol_limit counter of PCIe rows.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "harness/pcie/payload.h"
#include "harness/runner.h"

namespace gpubench::pcie {
namespace {

// A 256-byte config space with a power-management capability at 0x40 and the PCI Express
// capability at 0x60 whose Device Control register encodes `mps_code` (128 << code bytes).
std::vector<unsigned char> config_space(unsigned mps_code) {
  std::vector<unsigned char> c(256, 0);
  c[0x06] = 0x10;  // capabilities list present
  c[0x34] = 0x40;
  c[0x40] = 0x01;                                       // power management
  c[0x41] = 0x60;                                       // next
  c[0x60] = 0x10;                                       // PCI Express
  c[0x61] = 0x00;                                       // last
  const unsigned control = (mps_code << 5u) | 0x2000u;  // max read request bits set too
  c[0x68] = static_cast<unsigned char>(control & 0xff);
  c[0x69] = static_cast<unsigned char>(control >> 8u);
  return c;
}

TEST(PciePayload, MaxPayloadFromTheExpressCapability) {
  EXPECT_EQ(max_payload_from_config(config_space(0)), 128);
  EXPECT_EQ(max_payload_from_config(config_space(1)), 256);
  EXPECT_EQ(max_payload_from_config(config_space(5)), 4096);
  EXPECT_EQ(max_payload_from_config(config_space(6)), 0);  // reserved encoding
  auto first64 = config_space(1);
  first64.resize(64);  // what an unprivileged read returns
  EXPECT_EQ(max_payload_from_config(first64), 0);
  auto no_list = config_space(1);
  no_list[0x06] = 0;
  EXPECT_EQ(max_payload_from_config(no_list), 0);
  auto loop = config_space(1);
  loop[0x60] = 0x05;  // no Express capability; the list points back to itself
  loop[0x61] = 0x40;
  EXPECT_EQ(max_payload_from_config(loop), 0);
}

TEST(PciePayload, ReadFromSysfs) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "gpubench_payload_sysfs";
  fs::remove_all(root);
  const fs::path dev = root / "bus" / "pci" / "devices" / "0000:3b:00.0";
  fs::create_directories(dev);
  const auto bytes = config_space(1);
  std::ofstream(dev / "config", std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), 256);
  EXPECT_EQ(read_max_payload(root.string(), "0000:3b:00.0"), 256);
  EXPECT_EQ(read_max_payload(root.string(), "0000:01:00.0"), 0);  // no such device
  fs::remove_all(root);
}

// FLIT mode: 121.0 GB/s of a Gen6 x16 link's 128 reach the link layer (242 of every 256-byte
// flit), 236 of those 242 carry TLPs, and a TLP costs its 16-byte header alone.
TEST(PciePayload, ProtocolLimitOfAGen6x16LinkInFlitMode) {
  const double raw = pcie_GBps_per_direction(6, 16);
  EXPECT_NEAR(raw, 121.0, 1e-9);                               // 128 x 242 / 256
  EXPECT_NEAR(pcie_protocol_GBps(raw, 256, 6), 111.06, 0.01);  // 121 x 236 / 242 x 256 / 272
  EXPECT_NEAR(pcie_protocol_GBps(raw, 512, 6), 114.43, 0.01);  // x 512 / 528
  DeviceDescription d;
  d.pcie_gen = 6;
  d.pcie_width = 16;
  EXPECT_NEAR(formula_peaks(d).pcie_protocol_GBps, 111.06, 0.01);
}

TEST(PciePayload, ProtocolLimitOfAGen5x16Link) {
  const double raw = pcie_GBps_per_direction(5, 16);          // 63.0 GB/s
  EXPECT_NEAR(pcie_protocol_GBps(raw, 256, 5), 57.61, 0.01);  // 63.015 x 256 / 280
  EXPECT_NEAR(pcie_protocol_GBps(raw, 128, 5), 53.07, 0.01);  // 63.015 x 128 / 152
  EXPECT_EQ(pcie_protocol_GBps(raw, 0, 5), 0);
  DeviceDescription d;
  d.pcie_gen = 5;
  d.pcie_width = 16;
  EXPECT_NEAR(formula_peaks(d).pcie_protocol_GBps, 57.61, 0.01);  // 256 B assumed when unread
  d.pcie_max_payload_bytes = 128;
  EXPECT_NEAR(formula_peaks(d).pcie_protocol_GBps, 53.07, 0.01);
}

TEST(PciePayload, RowsReportBothLimits) {
  Peaks peaks;
  peaks.pcie_GBps = 63.0;
  peaks.pcie_protocol_GBps = 57.6;
  const DerivedCounters d = derive_counters(transfer_work(1e9, PeakKind::pcie_h2d), 1e9 / 55.2e9, peaks);
  EXPECT_NEAR(d.pct_of_peak, 100.0 * 55.2 / 63.0, 1e-9);
  EXPECT_NEAR(d.pct_of_protocol_limit, 100.0 * 55.2 / 57.6, 1e-9);
  EXPECT_LT(derive_counters(copy_work(1e9), 1e-3, peaks).pct_of_protocol_limit, 0);  // not a PCIe row
}

}  // namespace
}  // namespace gpubench::pcie
