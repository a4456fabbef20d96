// The link between two GPUs from NVML's topology (harness/cuda/peer_topology.cpp), against the
// stand-in libnvidia-ml (tests/cuda/fake_nvml.cpp + fake_nvml_topology.cpp, loaded through the
// real loader) and the fake CUDA runtime's devices (their PCI bus ids): NVLink first, else each
// PCIe level NVML defines, else unknown; a peer NVML cannot find, a failed query or no NVML at
// all is "unknown", never an error.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "harness/cuda/nvml.h"
#include "harness/cuda/peer_topology.h"
#include "tests/cuda/fake_cuda_runtime.h"

namespace gpubench {
namespace {

namespace nt = nvml_topology;

TEST(PeerPath, EveryNvmlLevelHasItsWord) {
  EXPECT_STREQ(peer_path_name(pcie_path_of_level(nt::kInternal)), "pcie_same_board");
  EXPECT_STREQ(peer_path_name(pcie_path_of_level(nt::kSingle)), "pcie_switch");
  EXPECT_STREQ(peer_path_name(pcie_path_of_level(nt::kMultiple)), "pcie_switches");
  EXPECT_STREQ(peer_path_name(pcie_path_of_level(nt::kHostBridge)), "pcie_host_bridge");
  EXPECT_STREQ(peer_path_name(pcie_path_of_level(nt::kNode)), "pcie_numa_node");
  EXPECT_STREQ(peer_path_name(pcie_path_of_level(nt::kSystem)), "pcie_cross_socket");
  EXPECT_STREQ(peer_path_name(pcie_path_of_level(35)), "unknown");  // not an NVML level
  EXPECT_STREQ(peer_path_name(PeerPath::nvlink), "nvlink");
  EXPECT_STREQ(peer_path_name(PeerPath::unknown), "unknown");
  // NVML's numbers (nvml.h): levels spaced by 10, NVLink's capability index 2, status OK 0.
  EXPECT_EQ(nt::kSystem, 50);
  EXPECT_EQ(nt::kP2pCapsIndexNvlink, 2);
  EXPECT_EQ(nt::kP2pStatusOk, 0);
}

#ifdef GPUBENCH_FAKE_NVML

using SetTopology = void (*)(int, int, int, int);

class PeerTopology : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_cuda::state() = fake_cuda::State{};
    fake_cuda::state().device_count = 3;
    hooks_ = dlopen(GPUBENCH_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(hooks_, nullptr) << dlerror();
    set_ = reinterpret_cast<SetTopology>(dlsym(hooks_, "fake_nvml_set_topology"));
    ASSERT_NE(set_, nullptr);
    std::string why;
    nvml_ = Nvml::open(fake_cuda::bus_id(0), &why, GPUBENCH_FAKE_NVML);
    ASSERT_NE(nvml_, nullptr) << why;
  }
  void TearDown() override {
    if (set_) set_(0, nt::kP2pStatusOk, 0, nt::kSingle);  // the module's defaults
    nvml_.reset();
    if (hooks_) dlclose(hooks_);
  }
  void* hooks_ = nullptr;
  SetTopology set_ = nullptr;
  std::unique_ptr<Nvml> nvml_;
  int other_gpu_ = 0;  // any handle other than the device's own is another GPU to the stand-in
};

TEST_F(PeerTopology, NvlinkFirstThenThePcieLevel) {
  const NvmlTopologyApi api = nvml_topology_api(*nvml_);
  ASSERT_NE(api.p2p_status, nullptr);
  ASSERT_NE(api.common_ancestor, nullptr);
  ASSERT_NE(api.handle_by_bus_id, nullptr);
  void* self = nvml_->device_handle();
  set_(0, nt::kP2pStatusOk, 0, nt::kSystem);
  EXPECT_EQ(peer_path(api, self, &other_gpu_), PeerPath::nvlink) << "NVLink wins over the PCIe ancestor";
  constexpr int kNotSupported = 5;  // NVML_P2P_STATUS_NOT_SUPPORTED
  for (const auto& [level, path] : std::vector<std::pair<int, PeerPath>>{{nt::kInternal, PeerPath::pcie_same_board},
                                                                         {nt::kSingle, PeerPath::pcie_switch},
                                                                         {nt::kMultiple, PeerPath::pcie_switches},
                                                                         {nt::kHostBridge, PeerPath::pcie_host_bridge},
                                                                         {nt::kNode, PeerPath::pcie_numa_node},
                                                                         {nt::kSystem, PeerPath::pcie_cross_socket}}) {
    set_(0, kNotSupported, 0, level);
    EXPECT_EQ(peer_path(api, self, &other_gpu_), path) << "level " << level;
  }
  constexpr int kNvmlErrorNotSupported = 3;
  set_(kNvmlErrorNotSupported, nt::kP2pStatusOk, 0, nt::kHostBridge);  // an old driver: no P2P status
  EXPECT_EQ(peer_path(api, self, &other_gpu_), PeerPath::pcie_host_bridge);
  set_(kNvmlErrorNotSupported, nt::kP2pStatusOk, kNvmlErrorNotSupported, nt::kHostBridge);
  EXPECT_EQ(peer_path(api, self, &other_gpu_), PeerPath::unknown);
  set_(0, nt::kP2pStatusOk, 0, nt::kSingle);
  EXPECT_EQ(peer_path(api, self, nullptr), PeerPath::unknown);
  EXPECT_EQ(peer_path(NvmlTopologyApi{}, self, &other_gpu_), PeerPath::unknown) << "a driver without them";
}

// Peers are found by their PCI bus id. The stand-in NVML knows only device 0's, so through the
// loaded NVML every peer is unknown; with a lookup that finds them, each gets its path.
TEST_F(PeerTopology, EachPeerByItsBusIdAndUnknownWhereNvmlCannotFindIt) {
  set_(0, nt::kP2pStatusOk, 0, nt::kSingle);
  EXPECT_EQ(peer_link_paths(nvml_.get(), 0, 3), (std::vector<std::string>{"", "unknown", "unknown"}));
  EXPECT_EQ(peer_link_paths(nullptr, 1, 3), (std::vector<std::string>{"unknown", "", "unknown"})) << "no NVML";
  EXPECT_EQ(peer_link_paths(nullptr, 0, 1), (std::vector<std::string>{""})) << "one GPU: no peer";

  NvmlTopologyApi api = nvml_topology_api(*nvml_);
  static int handles[3];
  api.handle_by_bus_id = [](const char* bus, void** device) -> int {
    for (int i = 0; i < 3; ++i) {
      if (std::strcmp(bus, fake_cuda::bus_id(i)) == 0) {
        *device = &handles[i];
        return 0;
      }
    }
    return 6;  // NVML_ERROR_NOT_FOUND
  };
  EXPECT_EQ(peer_link_paths(api, &handles[2], 2, 3), (std::vector<std::string>{"nvlink", "nvlink", ""}));
  set_(0, 5, 0, nt::kNode);
  EXPECT_EQ(peer_link_paths(api, &handles[0], 0, 3),
            (std::vector<std::string>{"", "pcie_numa_node", "pcie_numa_node"}));
  fake_cuda::state().device_count = 4;  // a device whose bus id NVML does not know
  EXPECT_EQ(peer_link_paths(api, &handles[0], 0, 4),
            (std::vector<std::string>{"", "pcie_numa_node", "pcie_numa_node", "unknown"}));
}

#endif  // GPUBENCH_FAKE_NVML

}  // namespace
}  // namespace gpubench
