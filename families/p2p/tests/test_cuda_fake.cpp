// The CUDA peer-to-peer workloads (families/p2p/cuda.cpp) end to end on the host stand-in for the
// CUDA runtime with several devices (tests/cuda/fake_cuda_runtime.cpp, State::device_count):
// every row of every device of a 2- and a 4-GPU node is prepared, poisoned, warmed up, timed and
// verified as the runner does it, on the device of its row, with the peer's buffers on the peer
// and nothing left allocated; a wrong value in what a destination holds is caught and named;
// without peer access the SM rows are skipped with the reason while the copy-engine rows run;
// peer access is enabled once per pair, however many rows ask.
// What this cannot check: the GPUs (real links, real speed, real timing).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "families/p2p/tests/fake_runtime.h"
#include "harness/cuda/cuda_device.h"
#include "harness/family.h"
#include "tests/cuda/fake_backend.h"
#include "tests/cuda/fake_cuda_runtime.h"

GPUBENCH_FAMILY(p2p)

namespace gpubench {
namespace {

using fake_backend::find_case;
using fake_backend::run_like_the_runner;

/// A CUDA backend on fake device `index` of a node of fake_cuda::state().device_count GPUs,
/// running the p2p workloads.
class NodeBackend final : public CudaBackendBase {
 public:
  explicit NodeBackend(int index) : device_(index, description(index), fake_cuda::bus_id(index)) {
    families::p2p::add_cuda_workloads(table_);
  }
  static DeviceDescription description(int index) {
    DeviceDescription d = fake_backend::fake_device();
    d.ordinal = index;
    d.visible_devices = fake_cuda::state().device_count;
    return d;
  }
  std::string kind() const override { return "cuda"; }
  const DeviceDescription& device() const override { return device_.description(); }
  const Peaks& peaks() const override { return peaks_; }
  std::string device_key() const override { return "fake"; }
  std::string unavailable_reason(const BenchCase& c) const override { return table_.unavailable_reason(c, 90); }
  std::unique_ptr<Workload> create(const BenchCase& c) override { return table_.find(c, 90)(c, *this); }
  std::map<std::string, std::string> context() const override { return {}; }
  CudaDevice& cuda_device() override { return device_; }

 private:
  CudaDevice device_;
  Peaks peaks_;
  WorkloadTable table_;
};

class FakeP2p : public ::testing::Test {
 protected:
  void SetUp() override { node(2); }
  void TearDown() override {
    backend_.reset();
    EXPECT_TRUE(fake_cuda::state().sizes.empty()) << "device memory leaked";
    EXPECT_TRUE(fake_cuda::state().device_of.empty());
    EXPECT_EQ(fake_cuda::state().live_streams, 0);
  }
  /// A fresh fake node of `devices` GPUs.
  void node(int devices) {
    backend_.reset();
    fake_cuda::state() = fake_cuda::State{};
    fake_cuda::state().device_count = devices;
    fake_cuda::state().free_bytes = std::size_t{8} << 30;
    fake_p2p::state() = fake_p2p::State{};
  }
  NodeBackend& backend(int index) {
    backend_.reset();
    backend_ = std::make_unique<NodeBackend>(index);
    return *backend_;
  }
  /// The quick rows of device `index` (bytes overridden when `bytes` > 0: smaller, odd sizes).
  std::vector<BenchCase> rows(int index, double bytes = 0) {
    SweepOptions o = sweep_options(NodeBackend::description(index), "cuda", true);
    auto cases = families::p2p::cases(o);
    if (bytes > 0)
      for (auto& c : cases) c.args["bytes"] = bytes;
    return cases;
  }
  /// Runs every row of every device of the current fake node as the runner does; returns the
  /// keys run.
  std::set<std::string> run_every_row(double bytes) {
    const int devices = fake_cuda::state().device_count;
    std::set<std::string> keys;
    for (int self = 0; self < devices; ++self) {
      NodeBackend& b = backend(self);
      const auto cases = rows(self, bytes);
      EXPECT_EQ(cases.size(), static_cast<std::size_t>(6 * (devices - 1)));
      for (const BenchCase& c : cases) {
        SCOPED_TRACE(c.name() + " on device " + std::to_string(self));
        run_one(b, c, self);
        keys.insert(c.key());
      }
    }
    return keys;
  }
  void run_one(NodeBackend& b, const BenchCase& c, int self) {
    ASSERT_TRUE(b.supports(c));
    const int peer = static_cast<int>(c.arg("peer"));
    const int copies_before = fake_cuda::state().peer_copies;
    const int launches_before = fake_p2p::state().sm_copy_launches;
    {
      auto w = b.create(c);
      const Verification v = run_like_the_runner(*w, 3);
      EXPECT_TRUE(v.ok) << v.message;
      const auto k = w->extra_counters(1e-3);
      EXPECT_EQ(k.at("peer"), peer);
      EXPECT_EQ(k.at("peer_access"), 1.0);
      EXPECT_EQ(k.count("sm_copy_blocks"), c.kernel == "p2p_sm" ? 1u : 0u);
      EXPECT_EQ(k.at("cuda_graph"), c.kernel == "p2p_sm" && c.variant != "bidir" ? 1.0 : 0.0);
      // A bidirectional row's directions, each timed on its own device's stream; counted once,
      // then gone until more samples run.
      EXPECT_EQ(k.count("forward_GB/s") + k.count("backward_GB/s"), c.variant == "bidir" ? 2u : 0u);
      if (c.variant == "bidir") {
        EXPECT_GT(k.at("forward_GB/s"), 0.0);
        EXPECT_GT(k.at("backward_GB/s"), 0.0);
        EXPECT_EQ(w->extra_counters(1e-3).count("forward_GB/s"), 0u);
      }
      EXPECT_EQ(fake_cuda::state().current_device, self) << "the run's device is current again";
      // While the workload lives: one buffer per copy end on each of the two devices.
      std::map<int, int> per_device;
      for (const auto& [p, d] : fake_cuda::state().device_of) ++per_device[d];
      const int ends = c.variant == "bidir" ? 2 : 1;
      EXPECT_EQ(per_device[self], ends);
      EXPECT_EQ(per_device[peer], ends);
      EXPECT_EQ(per_device.size(), 2u);
    }
    EXPECT_TRUE(fake_cuda::state().sizes.empty()) << "left allocated";
    if (c.kernel == "p2p_ce") {
      EXPECT_GT(fake_cuda::state().peer_copies, copies_before);
      // Whose copy engine moves what: write pushes I's buffer to J, read pulls J's into I, each
      // issued on I; bidir's last copy is J -> I, issued on J.
      const auto& last = fake_cuda::state().last_peer_copy;
      const bool pull = c.variant != "write";
      EXPECT_EQ(last.src, pull ? peer : self);
      EXPECT_EQ(last.dst, pull ? self : peer);
      EXPECT_EQ(last.issuer, c.variant == "bidir" ? peer : self);
      EXPECT_EQ(fake_p2p::state().sm_copy_launches, launches_before);
    } else {
      EXPECT_EQ(fake_cuda::state().peer_copies, copies_before);
      EXPECT_GT(fake_p2p::state().sm_copy_launches, launches_before);
    }
  }
  std::unique_ptr<NodeBackend> backend_;
};

TEST_F(FakeP2p, EveryRowOfEveryDeviceRunsAndVerifiesOnTwoAndFourGpus) {
  // Two GPUs at the real --quick size; four at an odd size (a byte tail, several tiles).
  EXPECT_EQ(run_every_row(0).size(), 6u);
  EXPECT_EQ(fake_cuda::state().peer_access, (std::set<std::pair<int, int>>{{0, 1}, {1, 0}}));
  node(4);
  EXPECT_EQ(run_every_row((1 << 20) + 4096 + 7).size(), 6u);
  EXPECT_EQ(fake_cuda::state().peer_access.size(), 12u) << "every ordered pair, enabled once";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "enabling an enabled pair must not leave its error behind";
}

// What a destination holds is read back and checked byte for byte: a wrong byte planted first,
// in the middle or last fails verification naming it, on every row of both devices.
TEST_F(FakeP2p, AWrongByteAnywhereFailsVerificationNamingIt) {
  for (int self : {0, 1}) {
    NodeBackend& b = backend(self);
    for (const BenchCase& c : rows(self, 65536 + 5)) {
      for (fake_cuda::Plant where : {fake_cuda::Plant::first, fake_cuda::Plant::middle, fake_cuda::Plant::last}) {
        SCOPED_TRACE(c.name() + " on device " + std::to_string(self));
        auto w = b.create(c);
        w->prepare();
        w->poison();
        w->run(2);
        fake_backend::expect_plant_caught(*w, where, 1, "byte ");
      }
    }
  }
}

// The second direction of a bidirectional row is verified too: the peer's kernel dropped (it
// never wrote this device's buffer) fails, naming that copy.
TEST_F(FakeP2p, ABidirectionalRowChecksBothDirections) {
  NodeBackend& b = backend(0);
  fake_p2p::state().drop_on_device = 1;
  auto w = b.create(find_case(rows(0), "bandwidth/p2p_sm/bidir/peer:1,bytes:16MiB"));
  w->prepare();
  w->poison();
  w->run(2);
  const Verification v = w->verify();
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("(the copy from CUDA device 1 to CUDA device 0)"), std::string::npos) << v.message;
}

// The reason prepare() skips `w` with; a failure (and "") when it does not skip.
std::string skip_reason(Workload& w) {
  try {
    w.prepare();
  } catch (const SkipCase& e) {
    return e.what();
  }
  ADD_FAILURE() << "prepared: an SM row ran without peer access";
  return "";
}

TEST_F(FakeP2p, WithoutPeerAccessSmRowsAreSkippedWithTheReasonAndCopyEngineRowsRun) {
  fake_cuda::state().peer_access_supported = false;
  NodeBackend& b = backend(1);
  int skipped = 0, ran = 0;
  for (const BenchCase& c : rows(1, 65536)) {
    SCOPED_TRACE(c.name());
    auto w = b.create(c);
    if (c.kernel == "p2p_sm") {
      EXPECT_EQ(skip_reason(*w),
                "no peer access between CUDA devices 1 and 0 (cudaDeviceCanAccessPeer): SM copies need it; the "
                "copy-engine rows (p2p_ce) run, staged through host memory");
      ++skipped;
      continue;
    }
    const Verification v = run_like_the_runner(*w, 2);
    EXPECT_TRUE(v.ok) << v.message;
    EXPECT_EQ(w->extra_counters(1e-3).at("peer_access"), 0.0);
    ++ran;
  }
  EXPECT_EQ(skipped, 3);
  EXPECT_EQ(ran, 3);  // the copy-engine rows: write, read, bidir
  EXPECT_TRUE(fake_cuda::state().peer_access.empty()) << "nothing enabled that cannot be";
}

// A node of more GPUs than a device can map peers: once device 0's mappings are used up, its SM
// rows to the next peer are skipped with the reason and its copy-engine rows run, staged.
TEST_F(FakeP2p, PeerMappingsUsedUpAreNotAnError) {
  node(4);
  fake_cuda::state().peer_mappings = 1;
  NodeBackend& b = backend(0);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);  // device 0's one mapping, to peer 1
  int skipped = 0, staged = 0;
  for (const BenchCase& c : rows(0, 65536)) {
    if (c.arg("peer") == 1) continue;
    SCOPED_TRACE(c.name());
    auto w = b.create(c);
    if (c.kernel == "p2p_sm") {
      const std::string why = skip_reason(*w);
      EXPECT_NE(why.find("no peer mappings left (cudaErrorTooManyPeers)"), std::string::npos) << why;
      ++skipped;
      continue;
    }
    const Verification v = run_like_the_runner(*w, 2);
    EXPECT_TRUE(v.ok) << v.message;
    staged += w->extra_counters(1e-3).at("peer_access") == 0.0 ? 1 : 0;
  }
  EXPECT_GT(skipped, 0);
  EXPECT_GT(staged, 0);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the refusal must not stay as the last error";
}

TEST_F(FakeP2p, NoSuchPeerOrNoRoomIsASkip) {
  NodeBackend& b = backend(0);
  BenchCase c = find_case(rows(0), "bandwidth/p2p_ce/write/peer:1,bytes:16MiB");
  for (double peer : {0.0, 2.0, 7.0}) {
    c.args["peer"] = peer;
    auto w = b.create(c);
    EXPECT_THROW(w->prepare(), SkipCase) << "peer " << peer;
  }
  c.args["peer"] = 1;
  fake_cuda::state().free_bytes = std::size_t{64} << 20;  // below the 256 MiB margin
  auto w = b.create(c);
  EXPECT_THROW(w->prepare(), SkipCase);
}

// The fake itself keeps the multi-device rules the workloads rely on.
TEST_F(FakeP2p, TheFakeKeepsTheRuntimesMultiDeviceRules) {
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(cudaSetDevice(2), cudaErrorInvalidDevice);
  (void)cudaGetLastError();
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  cudaStream_t on1 = nullptr;
  cudaEvent_t e1 = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&on1, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&e1), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(fake_cuda::as_kernel(on1, [] {}), cudaErrorInvalidResourceHandle) << "a kernel into device 1's stream";
  cudaEvent_t e0 = nullptr;
  ASSERT_EQ(cudaEventCreate(&e0), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(e0, on1), cudaErrorInvalidResourceHandle) << "device 0's event, device 1's stream";
  EXPECT_EQ(cudaEventRecord(e1, on1), cudaSuccess);
  (void)cudaGetLastError();
  int can = -1;
  EXPECT_EQ(cudaDeviceCanAccessPeer(&can, 0, 0), cudaSuccess);
  EXPECT_EQ(can, 0);
  EXPECT_EQ(cudaDeviceCanAccessPeer(&can, 0, 1), cudaSuccess);
  EXPECT_EQ(can, 1);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
  EXPECT_EQ(cudaGetLastError(), cudaErrorPeerAccessAlreadyEnabled) << "also the last error, as on a GPU";
  void* a = nullptr;
  void* on_peer = nullptr;
  ASSERT_EQ(cudaMalloc(&a, 256), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on_peer, 256), cudaSuccess);
  EXPECT_EQ(fake_cuda::device_holding(a, 256), 0);
  EXPECT_EQ(fake_cuda::device_holding(static_cast<char*>(on_peer) + 128, 128), 1);
  EXPECT_EQ(fake_cuda::device_holding(on_peer, 257), -1);
  EXPECT_FALSE(fake_cuda::reachable_from(1, a, 256)) << "device 1 has no access to device 0 yet";
  EXPECT_TRUE(fake_cuda::reachable_from(0, on_peer, 256));
  EXPECT_EQ(cudaMemcpyPeerAsync(on_peer, 0, a, 0, 256, on1), cudaErrorInvalidValue) << "the wrong device named";
  (void)cudaGetLastError();
  EXPECT_EQ(cudaMemcpyPeerAsync(on_peer, 1, a, 0, 256, on1), cudaSuccess);
  EXPECT_EQ(cudaFree(a), cudaSuccess);
  EXPECT_EQ(cudaFree(on_peer), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(e0), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(e1), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(on1), cudaSuccess);
}

}  // namespace
}  // namespace gpubench
