// What every benchmark family folder (families/<name>/) provides, and the registry of them.
// A family is a folder with its case table (cases.cpp), its workloads on each backend
// (host.cpp, cuda.cpp), its kernels and its tests; families/CMakeLists.txt lists the folders
// and generates the registry that calls the three functions GPUBENCH_FAMILY declares.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/workload_table.h"

namespace gpubench {

/// What the tables may size their sweeps by.
struct SweepOptions {
  bool quick = false;              ///< small sizes, for smoke runs and CI
  std::string backend_kind;        ///< "cuda" or "host"
  std::uint64_t l2_bytes = 0;      ///< last-level cache of the device (0 = unknown)
  std::uint64_t memory_bytes = 0;  ///< device (or host) memory (0 = unknown)
  int sm_count = 0;                ///< SMs (GPU) or logical CPUs (host); 0 = unknown
  std::uint64_t l1_bytes = 0;      ///< one SM's L1 and shared memory (GPU; 0 = unknown or the host)
  TrafficGeometry traffic;         ///< what the strided, gather and chase byte models assume
  int device_ordinal = -1;         ///< the CUDA device index the rows run on (-1: the host, or unknown)
  int device_count = 0;            ///< CUDA devices the process sees (peer-to-peer rows need two)
  /// By CUDA ordinal: the link from this device to each other GPU ("nvlink", "pcie_switch", ...,
  /// "unknown"; harness/cuda/peer_topology.h), written into the peer-to-peer rows' labels.
  std::vector<std::string> peer_paths;
};

/// The sweep options of a device on a backend kind ("cuda", "host").
SweepOptions sweep_options(const DeviceDescription& d, const std::string& backend_kind, bool quick);

/// "4KiB", "64MiB", "1GiB": the size token used in benchmark names.
std::string size_token(std::uint64_t bytes);

/// The memory level a working set of `bytes` is measured in: "l2" below half the last-level
/// cache (the rows that stay cache-resident by design), "dram" from there on.
std::string memory_level(double bytes, const SweepOptions& o);

// ---- the registry (generated from families/CMakeLists.txt) ----

/// Every family's rows, in the order of families/CMakeLists.txt.
std::vector<BenchCase> all_cases(const SweepOptions& o);
/// Every row any sweep can produce (quick and full, CUDA and host): what a backend's workload
/// table must cover.
std::vector<BenchCase> every_row();
/// The host backend's workloads of every family, checked complete against every_row().
WorkloadTable host_workloads();
/// The CUDA backend's workloads of every family, checked complete (CUDA builds only; defined in
/// the CUDA part of the registry).
WorkloadTable cuda_workloads();

}  // namespace gpubench

/// Declares the three functions of family `name` (families/<name>/): its case table and the
/// workloads it gives each backend. Every row of the table must be either added or declared
/// unavailable (WorkloadTable::not_here) by each backend's function.
#define GPUBENCH_FAMILY(name)                                                  \
  namespace gpubench::families::name {                                         \
  std::vector<::gpubench::BenchCase> cases(const ::gpubench::SweepOptions& o); \
  void add_host_workloads(::gpubench::WorkloadTable& table);                   \
  void add_cuda_workloads(::gpubench::WorkloadTable& table);                   \
  }
