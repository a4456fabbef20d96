#include "harness/pcie/payload.h"

#include <fstream>
#include <iterator>

namespace gpubench::pcie {

namespace {

constexpr std::size_t kStatus = 0x06;         // Status register; bit 4: capabilities list present
constexpr std::size_t kCapabilityPtr = 0x34;  // first capability
constexpr unsigned char kPciExpressCapId = 0x10;
constexpr std::size_t kDeviceControl = 0x08;  // within the PCI Express capability

}  // namespace

int max_payload_from_config(const std::vector<unsigned char>& config) {
  if (config.size() <= kCapabilityPtr || (config[kStatus] & 0x10) == 0) return 0;
  std::size_t at = config[kCapabilityPtr] & 0xfcu;
  // The list is at most 48 entries long in the 256-byte space; a loop in it ends there too.
  for (int hops = 0; hops < 48 && at >= 0x40 && at + 1 < config.size(); ++hops) {
    if (config[at] == kPciExpressCapId) {
      if (at + kDeviceControl + 1 >= config.size()) return 0;
      const unsigned control = config[at + kDeviceControl] | (config[at + kDeviceControl + 1] << 8u);
      const unsigned encoded = (control >> 5u) & 0x7u;
      return encoded <= 5 ? 128 << encoded : 0;  // 6 and 7 are reserved
    }
    at = config[at + 1] & 0xfcu;
  }
  return 0;
}

int read_max_payload(const std::string& sysfs_root, const std::string& address) {
  std::ifstream in(sysfs_root + "/bus/pci/devices/" + address + "/config", std::ios::binary);
  if (!in) return 0;
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return max_payload_from_config(bytes);
}

}  // namespace gpubench::pcie
