// NVML's topology entry points for the stand-in libnvidia-ml (fake_nvml.cpp, the same module):
// what harness/cuda/peer_topology.cpp asks about two GPUs, with the answers set by a test hook.
// Signatures as in nvml.h (enums passed as int). Any two distinct non-null handles are two GPUs.

namespace {
int g_p2p_return = 0;                // what nvmlDeviceGetP2PStatus returns (0: NVML_SUCCESS)
int g_nvlink_status = 0;             // its status for NVML_P2P_CAPS_INDEX_NVLINK (0: NVML_P2P_STATUS_OK)
int g_ancestor_return = 0;           // what nvmlDeviceGetTopologyCommonAncestor returns
int g_level = 10;                    // its level (10: NVML_TOPOLOGY_SINGLE)
constexpr int kInvalidArgument = 2;  // NVML_ERROR_INVALID_ARGUMENT
constexpr int kP2pCapsIndexNvlink = 2;
constexpr int kP2pStatusNotSupported = 5;
}  // namespace

extern "C" {

int nvmlDeviceGetP2PStatus(void* device1, void* device2, int caps_index, int* status) {
  if (!device1 || !device2 || device1 == device2 || !status) return kInvalidArgument;
  if (g_p2p_return != 0) return g_p2p_return;
  *status = caps_index == kP2pCapsIndexNvlink ? g_nvlink_status : kP2pStatusNotSupported;
  return 0;
}

int nvmlDeviceGetTopologyCommonAncestor(void* device1, void* device2, int* level) {
  if (!device1 || !device2 || device1 == device2 || !level) return kInvalidArgument;
  if (g_ancestor_return != 0) return g_ancestor_return;
  *level = g_level;
  return 0;
}

/// Test hook: the answers of the two calls above.
void fake_nvml_set_topology(int p2p_return, int nvlink_status, int ancestor_return, int level) {
  g_p2p_return = p2p_return;
  g_nvlink_status = nvlink_status;
  g_ancestor_return = ancestor_return;
  g_level = level;
}

}  // extern "C"
