// The CUDA backend's probe of the device's negotiated PCIe link, run once at start-up.
// Plain C++ header (no CUDA include).
#pragma once

#include <string>

#include "harness/pcie/link.h"

namespace gpubench {

class Nvml;

/// The PCIe link of CUDA device `device_index`, whose bus id (cudaDeviceGetPCIBusId) is
/// `pci_bus_id`, read from sysfs under `sysfs_root`, completed from `nvml` (the device's NVML,
/// nullptr without one) where sysfs does not know the link. An idle NVIDIA GPU lowers its link
/// speed to save power, so when the first read looks downgraded the link is read again while
/// 2 GiB of pinned host-to-device copies are in flight (on a stream of its own, synchronized
/// before it returns); *read_under_load says whether that happened. Makes the device current.
/// Never throws: a malformed id, a failed allocation or a CUDA error gives what was read
/// (unknown fields stay unknown).
pcie::PcieLink probe_cuda_pcie_link(int device_index, const std::string& pci_bus_id, const Nvml* nvml,
                                    bool* read_under_load, const std::string& sysfs_root = pcie::kSysfsRoot);

}  // namespace gpubench
