// What the PCIe family adds to a CUDA backend: the negotiated link in the device description
// (so peak_pcie_* is the per-direction rate of the link actually trained, not of the card's
// datasheet), the link, NUMA and timing facts in the result context, and --numa-bind.
// Pure C++: the CUDA backend calls these with what it read; tests call them with fixtures.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "harness/model/device.h"
#include "harness/pcie/link.h"
#include "harness/pcie/numa.h"

namespace gpubench::pcie {

/// Copies the known parts of `link` into `d`: pcie_gen/pcie_width from the negotiated link,
/// pcie_gen_max/pcie_width_max from the maximum. Unknown parts leave `d` as it was (the card
/// table may still supply a figure; pcie_peak_source in the context says which).
void apply_link(const PcieLink& link, DeviceDescription& d);

/// How the transfers are timed, for the context (pcie_timing).
extern const char* const kPcieTiming;

/// Context entries of the link: pcie_address, pcie_link, pcie_link_max, pcie_link_source
/// ("sysfs", "nvml", "sysfs+nvml", "none"), pcie_link_read ("idle", "under load", "not in
/// sysfs"), pcie_link_warning ("none" or link_warnings joined by " | "), pcie_path
/// (path_description),
/// gpu_numa_node ("unknown" or N), pcie_peak_source, pcie_timing. `read_under_load`: whether
/// the link had to be re-read under traffic (read_pcie_link_under_load's reread).
std::map<std::string, std::string> link_context(const PcieLink& link, bool read_under_load);

/// bench_cpu (the CPU the calling thread runs on now) and bench_cpu_numa_node, read at the
/// time of the call: after --numa-bind, they show where the benchmark really ran.
std::map<std::string, std::string> bench_cpu_context(const std::string& sysfs_root);

/// --numa-bind: binds the process to `gpu_node`, the GPU's NUMA node (Backend::gpu_numa_node).
/// No GPU (nullopt: the host backend) or an unknown node (< 0) gives ok = false and a one-line
/// message saying why; nothing is changed then.
BindResult bind_to_gpu_node(std::optional<int> gpu_node, const std::string& sysfs_root);

/// Neither --numa-bind nor --no-numa-bind: binds as --numa-bind does where that can matter (a
/// GPU whose node is known on a machine with two NUMA nodes with CPUs or more), as nvbandwidth
/// binds by default; elsewhere changes nothing. The message starts with "auto: ".
BindResult auto_bind_to_gpu_node(std::optional<int> gpu_node, const std::string& sysfs_root);

}  // namespace gpubench::pcie
