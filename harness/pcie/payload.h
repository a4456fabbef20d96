// What a PCIe link can carry after protocol overhead, not only its raw rate: every transaction
// layer packet carries at most the maximum payload size (MPS) of data and about 24 bytes of
// header (16, 64-bit addressing), sequence number and framing (4) and LCRC (4), so a Gen5 x16
// link that moves 63.0 GB/s of symbols per direction carries about 57.6 GB/s of data at 256-byte
// payloads. Flow-control and acknowledgement packets take a little more, so this is an upper
// bound. The MPS is read from the device's PCI Express capability in config space.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "harness/model/device.h"  // kTlpOverheadBytes, pcie_protocol_GBps

namespace gpubench::pcie {

/// The negotiated maximum payload size from a device's config-space bytes: the PCI Express
/// capability's Device Control register (bits 7:5: 128 << value). 0 when the bytes do not reach
/// the capability (an unprivileged read returns only the first 64 bytes) or it is missing.
int max_payload_from_config(const std::vector<unsigned char>& config);

/// max_payload_from_config of <sysfs_root>/bus/pci/devices/<address>/config; 0 when unreadable.
int read_max_payload(const std::string& sysfs_root, const std::string& address);

}  // namespace gpubench::pcie
