#include "harness/pcie/pcie_context.h"

#include <cstdlib>
#include <string>

#include "harness/pcie/payload.h"

namespace gpubench::pcie {

const char* const kPcieTiming =
    "pinned and mapped (copy engine and SM-driven) transfers: CUDA events; a batch of any size is "
    "queued in chunks of at most 127 operations, each behind its own spin kernel and released once "
    "queued, so neither queueing nor the first submission is timed (the next chunk is queued while "
    "the previous one runs). pageable transfers: host steady_clock around the batch (host_clock_timed=1). "
    "bidirectional: the measured direction on its own stream while the other direction runs on a "
    "second stream with twice the batch and one more, so it overlaps the whole timed interval. Bytes counted "
    "once per transfer; pct_of_peak against the negotiated link per direction, pct_of_protocol_limit "
    "against what it carries after TLP overhead at the max payload size (peak_pcie_protocol_GBps)";

void apply_link(const PcieLink& link, DeviceDescription& d) {
  if (link.current.known()) {
    d.pcie_gen = link.current.gen;
    d.pcie_width = link.current.width;
  }
  if (link.max.known()) {
    d.pcie_gen_max = link.max.gen;
    d.pcie_width_max = link.max.width;
  }
  d.pcie_max_payload_bytes = link.max_payload_bytes;
}

std::map<std::string, std::string> link_context(const PcieLink& link, bool read_under_load) {
  std::map<std::string, std::string> c;
  c["pcie_address"] = link.address.empty() ? "unknown" : link.address;
  c["pcie_link"] = link_name(link.current);
  c["pcie_link_max"] = link_name(link.max);
  c["pcie_link_read"] = !link.found ? "not in sysfs" : (read_under_load ? "under load" : "idle");
  std::string warnings;
  for (const std::string& w : link_warnings(link.address, link)) warnings += (warnings.empty() ? "" : " | ") + w;
  c["pcie_link_warning"] = warnings.empty() ? "none" : warnings;
  c["pcie_path"] = path_description(link);
  c["gpu_numa_node"] = link.numa_node >= 0 ? std::to_string(link.numa_node) : "unknown";
  c["pcie_link_source"] = link.source.empty() ? "none" : link.source;
  c["pcie_peak_source"] = link.current.known()
                              ? "negotiated link " + link_name(link.current) + " (" + c["pcie_link_source"] + ")"
                              : "card table (negotiated link unknown)";
  c["pcie_timing"] = kPcieTiming;
  c["pcie_max_payload"] = link.max_payload_bytes > 0
                              ? std::to_string(link.max_payload_bytes) + " B (config space)"
                              : std::to_string(kAssumedMaxPayloadBytes) + " B (assumed: config space not readable)";
  return c;
}

std::map<std::string, std::string> bench_cpu_context(const std::string& sysfs_root) {
  const int cpu = current_cpu();
  const int node = node_of_cpu(sysfs_root, cpu);
  return {{"bench_cpu", cpu >= 0 ? std::to_string(cpu) : "unknown"},
          {"bench_cpu_numa_node", node >= 0 ? std::to_string(node) : "unknown"}};
}

BindResult bind_to_gpu_node(std::optional<int> gpu_node, const std::string& sysfs_root) {
  if (!gpu_node) {
    BindResult r;
    r.message = "--numa-bind: this backend has no GPU, nothing to bind";
    return r;
  }
  if (*gpu_node < 0) {
    BindResult r;
    r.message = "--numa-bind: the GPU's NUMA node is unknown (single-node machine or no sysfs entry); not bound";
    return r;
  }
  BindResult r = bind_to_numa_node(sysfs_root, *gpu_node);
  r.message = "--numa-bind: " + r.message;
  return r;
}

BindResult auto_bind_to_gpu_node(std::optional<int> gpu_node, const std::string& sysfs_root) {
  BindResult r;
  if (!gpu_node) {
    r.message = "auto: no GPU, not bound";
  } else if (*gpu_node < 0) {
    r.message = "auto: the GPU's NUMA node is unknown, not bound";
  } else if (nodes_with_cpus(sysfs_root) < 2) {
    r.message = "auto: one NUMA node with CPUs, not bound";
  } else {
    r = bind_to_numa_node(sysfs_root, *gpu_node);
    r.message = "auto: " + r.message;
  }
  return r;
}

}  // namespace gpubench::pcie
