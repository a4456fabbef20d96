// The link between two GPUs of a node, as NVML's topology reports it: NVLink, or the PCIe
// hierarchy the two share (the same board, one switch, several switches, a host bridge, a NUMA
// node, or a path across CPU sockets). The peer-to-peer rows (families/p2p) carry it in their
// label (path=...), so a matrix of results explains itself: 750 GB/s over NVLink, 25 over a host
// bridge.
//
// NVML is reached through the loader (harness/cuda/nvml.h: Nvml::symbol, Nvml::device_handle);
// the peer's handle comes from its PCI bus id (cudaDeviceGetPCIBusId). Without NVML, or when a
// query fails, the path is "unknown": never an error.
#pragma once

#include <string>
#include <vector>

namespace gpubench {

class Nvml;

/// The link between two GPUs (see peer_path_name for the words written into results).
enum class PeerPath {
  unknown,            ///< no NVML, or it could not say
  nvlink,             ///< nvmlDeviceGetP2PStatus(NVLINK) is OK
  pcie_same_board,    ///< NVML_TOPOLOGY_INTERNAL: two GPUs on one board
  pcie_switch,        ///< NVML_TOPOLOGY_SINGLE: one PCIe switch between them
  pcie_switches,      ///< NVML_TOPOLOGY_MULTIPLE: several switches, no host bridge
  pcie_host_bridge,   ///< NVML_TOPOLOGY_HOSTBRIDGE: through one host bridge (root complex)
  pcie_numa_node,     ///< NVML_TOPOLOGY_NODE: host bridges of one NUMA node
  pcie_cross_socket,  ///< NVML_TOPOLOGY_SYSTEM: across the CPUs' interconnect (QPI/UPI, xGMI)
};

/// "nvlink", "pcie_switch", ..., "unknown": the word a row's label carries as path=.
const char* peer_path_name(PeerPath p);

/// NVML's values (nvml.h, NVML API reference), passed as int like every enum through the loader.
namespace nvml_topology {
constexpr int kSuccess = 0;             ///< NVML_SUCCESS
constexpr int kP2pCapsIndexNvlink = 2;  ///< NVML_P2P_CAPS_INDEX_NVLINK (nvmlGpuP2PCapsIndex_t)
constexpr int kP2pStatusOk = 0;         ///< NVML_P2P_STATUS_OK (nvmlGpuP2PStatus_t)
constexpr int kInternal = 0;            ///< NVML_TOPOLOGY_INTERNAL (nvmlGpuTopologyLevel_t)
constexpr int kSingle = 10;             ///< NVML_TOPOLOGY_SINGLE
constexpr int kMultiple = 20;           ///< NVML_TOPOLOGY_MULTIPLE
constexpr int kHostBridge = 30;         ///< NVML_TOPOLOGY_HOSTBRIDGE
constexpr int kNode = 40;               ///< NVML_TOPOLOGY_NODE (formerly NVML_TOPOLOGY_CPU)
constexpr int kSystem = 50;             ///< NVML_TOPOLOGY_SYSTEM
}  // namespace nvml_topology

/// The PCIe path of a nvmlGpuTopologyLevel_t value; unknown for a value NVML does not define.
PeerPath pcie_path_of_level(int level);

/// The three NVML entry points the topology needs (nullptr where the driver's NVML lacks one).
struct NvmlTopologyApi {
  /// nvmlDeviceGetP2PStatus(device1, device2, nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t*)
  int (*p2p_status)(void*, void*, int, int*) = nullptr;
  /// nvmlDeviceGetTopologyCommonAncestor(device1, device2, nvmlGpuTopologyLevel_t*)
  int (*common_ancestor)(void*, void*, int*) = nullptr;
  /// nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id, nvmlDevice_t*)
  int (*handle_by_bus_id)(const char*, void**) = nullptr;
};

/// The entry points from a loaded NVML (Nvml::symbol).
NvmlTopologyApi nvml_topology_api(const Nvml& nvml);

/// The link between the GPUs with NVML handles `self` and `peer`: NVLink when NVML says P2P
/// over NVLink is OK, else the PCIe level of their common ancestor, else unknown.
PeerPath peer_path(const NvmlTopologyApi& api, void* self, void* peer);

/// The path from the GPU of handle `self` to each CUDA device 0..count-1 by name ("" for
/// `index` itself), each peer found by its PCI bus id (cudaDeviceGetPCIBusId, then
/// api.handle_by_bus_id). Never throws: a peer that cannot be found is "unknown".
std::vector<std::string> peer_link_paths(const NvmlTopologyApi& api, void* self, int index, int count);

/// The same from the device's loaded NVML; every peer "unknown" when `nvml` is nullptr.
std::vector<std::string> peer_link_paths(const Nvml* nvml, int index, int count);

}  // namespace gpubench
