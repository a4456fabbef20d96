// CUDA workloads of the peer-to-peer family: copies between this GPU (device I, the run's) and a
// peer GPU J through the copy engines (cudaMemcpyPeerAsync) and through the SMs (families/p2p/p2p.h:
// a kernel loading from or storing to the peer's memory through peer access), one direction at a
// time or both at once.
//
// Peer access: enabled both ways (cudaDeviceEnablePeerAccess) whenever cudaDeviceCanAccessPeer
// says both devices can, for every row, and left enabled (it is the process's state, and a copy
// engine row measured before an SM row must not take a different route from one measured after
// it). The SM rows need it and are skipped with the reason without it; the copy-engine rows then
// still run: the driver stages cudaMemcpyPeerAsync through host memory (counter peer_access = 0).
//
// Timing (real_time = one operation: one copy, or one copy each way for bidir):
//  - write / read: CUDA events around the batch on device I's stream (harness/cuda/timing.h): the
//    SM copies captured in a CUDA graph, the copy-engine copies issued to the stream one call per
//    operation (a captured cudaMemcpy becomes a slower graph memcpy node).
//  - bidir: device I's stream records the start event and releases device J's stream (an event
//    J waits on); the batch's copies are issued alternately to both streams, each on its own
//    device (I -> J on I's stream, J -> I on J's); J's stream then releases I's, which records
//    the stop event. The interval covers both directions from the first copy to the last.
// Verification, after the timed runs: every destination (poisoned before the runs) is read back
// and compared byte for byte with the seeded random data its source was filled with.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "families/p2p/p2p.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/cuda_workload.h"
#include "harness/cuda/device_buffer.h"
#include "harness/cuda/host_resources.h"
#include "harness/cuda/timing.h"
#include "harness/family.h"
#include "harness/verify.h"

GPUBENCH_FAMILY(p2p)

namespace gpubench {

namespace {

enum class Engine { copy, sm };
enum class Direction { write, read, bidir };

/// Makes `device` current for the scope, and the previous device current again after it.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    GPUBENCH_CUDA_CHECK(cudaGetDevice(&previous_));
    GPUBENCH_CUDA_CHECK(cudaSetDevice(device));
  }
  ~ScopedDevice() { GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(previous_)); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

bool can_access_peer(int device, int peer) {
  int can = 0;
  GPUBENCH_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, peer));
  return can != 0;
}

/// Lets `from`'s kernels and copies reach `to`'s memory directly; false when the device has no
/// peer mappings left (cudaErrorTooManyPeers: a node of more GPUs than a device can map, whose
/// earlier rows enabled the others). Enabling twice is no error here: an earlier row (or a
/// library) may have done it.
bool enable_peer_access(int from, int to) {
  ScopedDevice on(from);
  const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorTooManyPeers) {
    (void)cudaGetLastError();  // the runtime records it as the last error too
    return e == cudaErrorPeerAccessAlreadyEnabled;
  }
  GPUBENCH_CUDA_CHECK(e);
  return true;
}

/// One copy of the row: `src` on device src_device -> `dst` on device dst_device, issued on
/// device `issuer` (whose SMs run the SM copy). `reference` is what `src` holds.
struct Copy {
  int src_device = -1;
  int dst_device = -1;
  int issuer = -1;
  DeviceBuffer src;
  DeviceBuffer dst;
  std::vector<unsigned char> reference;
};

class P2pWorkload final : public CudaWorkload {
 public:
  P2pWorkload(const BenchCase& c, CudaDevice& dev, Engine engine, Direction direction)
      : CudaWorkload(c, dev),
        engine_(engine),
        direction_(direction),
        bytes_(count_arg("bytes")),
        self_(dev.index()),
        peer_(static_cast<int>(c.arg("peer"))) {}

  ~P2pWorkload() override { release_peer_side(); }
  P2pWorkload(const P2pWorkload&) = delete;
  P2pWorkload& operator=(const P2pWorkload&) = delete;

  void prepare() override {
    // One buffer of each copy on each device: a source on one end, a destination on the other.
    const std::size_t per_device = bytes_ * (direction_ == Direction::bidir ? 2 : 1);
    begin_prepare(per_device);
    int count = 0;
    GPUBENCH_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (peer_ == self_ || peer_ < 0 || peer_ >= count)
      throw SkipCase("peer " + std::to_string(peer_) + " is not another CUDA device of this process (" +
                     std::to_string(count) + " visible)");
    peer_access_ = can_access_peer(self_, peer_) && can_access_peer(peer_, self_);
    if (engine_ == Engine::sm && !peer_access_)
      throw SkipCase("no peer access between CUDA devices " + std::to_string(self_) + " and " + std::to_string(peer_) +
                     " (cudaDeviceCanAccessPeer): SM copies need it; the copy-engine rows (p2p_ce) run, staged "
                     "through host memory");
    if (peer_access_) {
      peer_access_ = enable_peer_access(self_, peer_) && enable_peer_access(peer_, self_);
      if (engine_ == Engine::sm && !peer_access_)
        throw SkipCase("CUDA devices " + std::to_string(self_) + " and " + std::to_string(peer_) +
                       " have no peer mappings left (cudaErrorTooManyPeers): SM copies need one; the copy-engine "
                       "rows (p2p_ce) run, staged through host memory");
    }
    {
      ScopedDevice on_peer(peer_);
      require_device_memory(per_device, c_.name() + " on its peer, CUDA device " + std::to_string(peer_));
      peer_stream_ = std::make_unique<OwnedStream>();
      peer_done_ = std::make_unique<OrderEvent>();  // recorded on the peer's stream: made there
      if (direction_ == Direction::bidir) backward_timer_ = std::make_unique<EventPair>();
      GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&peer_sms_, cudaDevAttrMultiProcessorCount, peer_));
    }
    switch (direction_) {
      case Direction::write: add_copy(self_, peer_, self_); break;
      case Direction::read: add_copy(peer_, self_, self_); break;
      case Direction::bidir:
        add_copy(self_, peer_, self_);
        add_copy(peer_, self_, peer_);
        break;
    }
    if (direction_ == Direction::bidir) {
      self_go_ = std::make_unique<OrderEvent>();
      bidir_timer_ = std::make_unique<EventPair>();
      forward_timer_ = std::make_unique<EventPair>();
    } else if (engine_ == Engine::copy) {
      timer_.use_stream_launches();
    }
  }

  void poison() override {
    for (Copy& k : copies_) {
      ScopedDevice on(k.dst_device);
      poison_device(k.dst.get(), bytes_, stream_of(k.dst_device));
    }
  }

  double run(int batch) override {
    if (direction_ != Direction::bidir) {
      const Copy& k = copies_.front();
      return timed(batch, [this, &k](cudaStream_t s, int) { return enqueue(k, s); });
    }
    return run_bidir(batch);
  }

  Verification verify() override {
    for (std::size_t i = 0; i < copies_.size(); ++i) {
      const Copy& k = copies_[i];
      for (const int d : {self_, peer_}) {
        ScopedDevice on(d);
        GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_of(d)));
      }
      ScopedDevice on(k.dst_device);
      Verification v =
          check_copy(k.reference.data(), fetch_to_host(k.dst.get(), bytes_, stream_of(k.dst_device)), bytes_);
      if (!v.ok) {
        v.message += " (the copy from CUDA device " + std::to_string(k.src_device) + " to CUDA device " +
                     std::to_string(k.dst_device) + ")";
        return v;
      }
    }
    return Verification::pass();
  }

  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    std::map<std::string, double> k = CudaWorkload::extra_counters(seconds_per_op);
    if (direction_ == Direction::bidir) k["cuda_graph"] = 0.0;  // stream launches on two devices
    k["peer"] = peer_;
    k["peer_access"] = peer_access_ ? 1.0 : 0.0;
    if (engine_ == Engine::sm) k["sm_copy_blocks"] = kernels::p2p_copy_blocks(bytes_, sms());
    // Each direction's rate from its own stream's events, over the samples since the last call:
    // forward_GB/s (I -> J while J -> I runs) is what nvbandwidth's bidirectional tests report
    // (one direction's rate under the opposite copy, not a sum); the row's GB/s counts both
    // directions' bytes over the time until both have finished, which hides a lagging
    // direction that these two show.
    if (direction_ == Direction::bidir && forward_seconds_ > 0 && backward_seconds_ > 0) {
      const double bytes = static_cast<double>(bytes_) * static_cast<double>(bidir_ops_);
      k["forward_GB/s"] = bytes / forward_seconds_ / 1e9;
      k["backward_GB/s"] = bytes / backward_seconds_ / 1e9;
    }
    forward_seconds_ = backward_seconds_ = 0;
    bidir_ops_ = 0;
    return k;
  }

 private:
  /// Allocates the two ends of a copy (each on its device) and fills the source.
  void add_copy(int src_device, int dst_device, int issuer) {
    Copy k;
    k.src_device = src_device;
    k.dst_device = dst_device;
    k.issuer = issuer;
    k.reference.resize(bytes_);
    fill_random_u32(k.reference.data(), bytes_, seed_ + copies_.size());
    {
      ScopedDevice on(dst_device);
      k.dst = DeviceBuffer(bytes_);
    }
    ScopedDevice on(src_device);
    k.src = DeviceBuffer(bytes_);
    copy_to_device(k.src.get(), k.reference.data(), bytes_, stream_of(src_device));
    copies_.push_back(std::move(k));
  }

  cudaStream_t stream_of(int device) const { return device == self_ ? stream() : peer_stream_->get(); }

  /// Enqueues one execution of copy `k` on `s` (a stream of k.issuer, which is current).
  int enqueue(const Copy& k, cudaStream_t s) const {
    if (engine_ == Engine::sm)
      return kernels::launch_p2p_copy(k.src.get(), k.dst.get(), bytes_, k.issuer == self_ ? sms() : peer_sms_, s);
    return cudaMemcpyPeerAsync(k.dst.get(), k.dst_device, k.src.get(), k.src_device, bytes_, s);
  }

  double run_bidir(int batch) {
    dev_.activate();
    const Copy& forward = copies_[0];   // I -> J, issued on I
    const Copy& backward = copies_[1];  // J -> I, issued on J
    bidir_timer_->record_start(stream());
    forward_timer_->record_start(stream());
    self_go_->order(stream(), peer_stream_->get());
    {
      ScopedDevice on_peer(peer_);  // an event is recorded on a stream of its own device
      backward_timer_->record_start(peer_stream_->get());
    }
    for (int i = 0; i < batch; ++i) {
      GPUBENCH_CUDA_CHECK(enqueue(forward, stream()));
      ScopedDevice on_peer(peer_);  // a kernel is launched on a stream of the current device
      GPUBENCH_CUDA_CHECK(enqueue(backward, peer_stream_->get()));
    }
    forward_timer_->record_stop(stream());
    {
      ScopedDevice on_peer(peer_);
      backward_timer_->record_stop(peer_stream_->get());
    }
    peer_done_->order(peer_stream_->get(), stream());
    bidir_timer_->record_stop(stream());
    const double both = bidir_timer_->seconds();
    forward_seconds_ += forward_timer_->seconds();
    {
      ScopedDevice on_peer(peer_);
      backward_seconds_ += backward_timer_->seconds();
    }
    bidir_ops_ += batch;
    return both;
  }

  /// Frees what lives on the peer with the peer current (never throws: a destructor's path).
  void release_peer_side() noexcept {
    // Nothing of this row may still run when its buffers go: a sample that threw midway can
    // leave a copy queued on either device that reads or writes the other's memory.
    if (peer_stream_) {
      (void)cudaStreamSynchronize(stream());
      (void)cudaStreamSynchronize(peer_stream_->get());
    }
    try {
      ScopedDevice on_peer(peer_);
      for (Copy& k : copies_) {
        if (k.dst_device == peer_) k.dst = DeviceBuffer();
        if (k.src_device == peer_) k.src = DeviceBuffer();
      }
      backward_timer_.reset();
      peer_done_.reset();
      peer_stream_.reset();
    } catch (...) {
      // deliberately swallowed: the device is lost or the peer never became current; what is
      // left is freed below, as well as the runtime can.
    }
  }

  Engine engine_;
  Direction direction_;
  std::size_t bytes_;
  int self_;
  int peer_;
  int peer_sms_ = 0;
  bool peer_access_ = false;
  std::unique_ptr<OwnedStream> peer_stream_;
  std::unique_ptr<OrderEvent> peer_done_;  ///< the peer's stream releases this device's (bidir)
  std::unique_ptr<OrderEvent> self_go_;    ///< this device's stream releases the peer's (bidir)
  std::unique_ptr<EventPair> bidir_timer_;
  std::unique_ptr<EventPair> forward_timer_;   ///< bidir: I's copies on I's stream
  std::unique_ptr<EventPair> backward_timer_;  ///< bidir: J's copies on J's stream (made on J)
  double forward_seconds_ = 0;                 ///< bidir: summed since the last extra_counters
  double backward_seconds_ = 0;
  std::int64_t bidir_ops_ = 0;
  std::vector<Copy> copies_;
};

template <Engine E, Direction D>
std::unique_ptr<Workload> make(const BenchCase& c, Backend& b) {
  return std::make_unique<P2pWorkload>(c, cuda_device_of(b), E, D);
}

}  // namespace

void families::p2p::add_cuda_workloads(WorkloadTable& table) {
  table.add("bandwidth/p2p_ce/write", make<Engine::copy, Direction::write>);
  table.add("bandwidth/p2p_ce/read", make<Engine::copy, Direction::read>);
  table.add("bandwidth/p2p_ce/bidir", make<Engine::copy, Direction::bidir>);
  table.add("bandwidth/p2p_sm/write", make<Engine::sm, Direction::write>);
  table.add("bandwidth/p2p_sm/read", make<Engine::sm, Direction::read>);
  table.add("bandwidth/p2p_sm/bidir", make<Engine::sm, Direction::bidir>);
}

}  // namespace gpubench
