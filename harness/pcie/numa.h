// NUMA placement for host<->device transfers: which node the GPU hangs off, which CPU the
// benchmark runs on, and binding the process to the GPU-local node's CPUs. A transfer staged
// from the far socket crosses the inter-socket link too (a Gen3 node measured 3.8 instead of
// 12.2 GB/s), so the context records both and `--numa-bind` fixes the placement.
// Reads sysfs directly and calls sched_setaffinity: no libnuma dependency.
#pragma once

#include <string>
#include <vector>

namespace gpubench::pcie {

/// Parses a kernel cpulist ("0-3,8-11", "0", "" -> none) into ascending CPU numbers. Throws
/// std::invalid_argument with one line on malformed text ("3-1", "a", "1,,2").
std::vector<int> parse_cpulist(const std::string& text);

/// The CPUs of NUMA node `node` from `<sysfs_root>/devices/system/node/node<N>/cpulist`; empty
/// when the node or the file does not exist.
std::vector<int> node_cpus(const std::string& sysfs_root, int node);

/// The NUMA node whose cpulist holds `cpu`, or -1 when no node lists it.
int node_of_cpu(const std::string& sysfs_root, int cpu);

/// The CPU the calling thread runs on now (sched_getcpu), -1 when unavailable.
int current_cpu();

/// NUMA nodes under <root>/devices/system/node that list CPUs (memory-only nodes, such as
/// HBM or CXL expanders, do not count).
int nodes_with_cpus(const std::string& sysfs_root);

/// Outcome of binding to a node: which CPUs were applied, or why nothing was done.
struct BindResult {
  bool ok = false;
  std::vector<int> cpus;  ///< the CPUs every thread of the process may now run on
  std::string message;    ///< one line: what was done, or why it failed
};

/// Restricts every thread of this process (all of /proc/self/task, so threads the CUDA runtime
/// already started move too; threads started later inherit it) to the CPUs of `node` that the
/// process is allowed to use. Pinned buffers allocated afterwards land on that node's memory
/// through the kernel's default local-allocation policy. Fails (ok = false, no change) when the
/// node is unknown, lists no CPU, or none of its CPUs is in the current affinity mask.
BindResult bind_to_numa_node(const std::string& sysfs_root, int node);

}  // namespace gpubench::pcie
