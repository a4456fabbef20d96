// The CUDA backend's PCIe pieces (harness/cuda/pcie_workloads.cpp): the transfer workloads of
// bandwidth/pcie_*, and the link probe the backend runs once to learn the negotiated link.
// Plain C++ header (no CUDA include).
#pragma once

#include <string>

#include "harness/pcie/link.h"
#include "harness/workload_table.h"

namespace gpubench {

/// bandwidth/pcie_{h2d,d2h}/{pinned_ce,pageable_ce,pinned_sm}, bandwidth/pcie_h2d/wc_pinned_ce and
/// bandwidth/pcie_bidir_{h2d,d2h}/pinned_ce on a CUDA device (names in
/// harness/families/pcie_cases.cpp).
void add_cuda_pcie_workloads(WorkloadTable& table);

/// The PCIe link of CUDA device `device_index`, whose bus id (cudaDeviceGetPCIBusId) is
/// `pci_bus_id`, read from sysfs under `sysfs_root`, completed from NVML (when the driver has
/// it) where sysfs does not know the link. An idle NVIDIA GPU lowers its link speed
/// to save power, so when the first read looks downgraded the link is read again while 2 GiB
/// of pinned host-to-device copies are in flight (on a stream of its own, synchronized before
/// it returns); *read_under_load says whether that happened. Makes the device current. Never
/// throws: a malformed id, a failed allocation or a CUDA error gives what was read (unknown
/// fields stay unknown).
pcie::PcieLink probe_cuda_pcie_link(int device_index, const std::string& pci_bus_id, bool* read_under_load,
                                    const std::string& sysfs_root = pcie::kSysfsRoot);

}  // namespace gpubench
