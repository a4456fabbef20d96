#include "harness/cuda/peer_topology.h"

#include <cuda_runtime_api.h>

#include "harness/cuda/nvml.h"

namespace gpubench {

const char* peer_path_name(PeerPath p) {
  switch (p) {
    case PeerPath::nvlink: return "nvlink";
    case PeerPath::pcie_same_board: return "pcie_same_board";
    case PeerPath::pcie_switch: return "pcie_switch";
    case PeerPath::pcie_switches: return "pcie_switches";
    case PeerPath::pcie_host_bridge: return "pcie_host_bridge";
    case PeerPath::pcie_numa_node: return "pcie_numa_node";
    case PeerPath::pcie_cross_socket: return "pcie_cross_socket";
    case PeerPath::unknown: break;
  }
  return "unknown";
}

PeerPath pcie_path_of_level(int level) {
  using namespace nvml_topology;
  switch (level) {
    case kInternal: return PeerPath::pcie_same_board;
    case kSingle: return PeerPath::pcie_switch;
    case kMultiple: return PeerPath::pcie_switches;
    case kHostBridge: return PeerPath::pcie_host_bridge;
    case kNode: return PeerPath::pcie_numa_node;
    case kSystem: return PeerPath::pcie_cross_socket;
    default: return PeerPath::unknown;
  }
}

NvmlTopologyApi nvml_topology_api(const Nvml& nvml) {
  NvmlTopologyApi api;
  api.p2p_status = reinterpret_cast<int (*)(void*, void*, int, int*)>(nvml.symbol("nvmlDeviceGetP2PStatus"));
  api.common_ancestor =
      reinterpret_cast<int (*)(void*, void*, int*)>(nvml.symbol("nvmlDeviceGetTopologyCommonAncestor"));
  api.handle_by_bus_id =
      reinterpret_cast<int (*)(const char*, void**)>(nvml.symbol("nvmlDeviceGetHandleByPciBusId_v2"));
  return api;
}

PeerPath peer_path(const NvmlTopologyApi& api, void* self, void* peer) {
  using namespace nvml_topology;
  if (!self || !peer) return PeerPath::unknown;
  // NVLink first: GPUs joined by NVLink also share some PCIe ancestor, which is not the path
  // their peer-to-peer traffic takes.
  int status = -1;
  if (api.p2p_status && api.p2p_status(self, peer, kP2pCapsIndexNvlink, &status) == kSuccess && status == kP2pStatusOk)
    return PeerPath::nvlink;
  int level = -1;
  if (api.common_ancestor && api.common_ancestor(self, peer, &level) == kSuccess) return pcie_path_of_level(level);
  return PeerPath::unknown;
}

std::vector<std::string> peer_link_paths(const NvmlTopologyApi& api, void* self, int index, int count) {
  std::vector<std::string> paths;
  for (int j = 0; j < count; ++j) {
    if (j == index) {
      paths.emplace_back();
      continue;
    }
    PeerPath p = PeerPath::unknown;
    char bus[64] = {};
    void* peer = nullptr;
    if (cudaDeviceGetPCIBusId(bus, static_cast<int>(sizeof bus), j) != cudaSuccess) {
      (void)cudaGetLastError();  // a failed query must not fail the next checked call
    } else if (api.handle_by_bus_id && api.handle_by_bus_id(bus, &peer) == nvml_topology::kSuccess) {
      p = peer_path(api, self, peer);
    }
    paths.emplace_back(peer_path_name(p));
  }
  return paths;
}

std::vector<std::string> peer_link_paths(const Nvml* nvml, int index, int count) {
  if (!nvml) return peer_link_paths(NvmlTopologyApi{}, nullptr, index, count);
  return peer_link_paths(nvml_topology_api(*nvml), nvml->device_handle(), index, count);
}

}  // namespace gpubench
