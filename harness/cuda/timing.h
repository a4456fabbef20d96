// Timing device work with CUDA events, the way DESIGN.md "Measuring right" asks:
//
//   BatchTimer timer(stream);
//   double s = timer.time(batch, [&](cudaStream_t st, int k) {
//     return kernels::launch_copy(in, out, bytes, sm_count, st);   // int cudaError_t
//   }, needs_flush ? &flusher : nullptr);
//
// Two measurement modes, chosen by whether the L2 must be flushed:
//  - hot (no flusher; working set meant to stay cache-resident): the `batch` enqueues are
//    captured once into a CUDA graph, and the graph is launched between two events, so the
//    CPU cost of ~2-3 us per launch is not what is timed (a graph node costs ~1 us less and
//    is already on the device). The instantiated graphs of the last two batch sizes are
//    cached (batch sizing runs run(1) beside run(batch), and the single operation's graph is
//    wanted again later). The first capture is preceded by one plain execution (lazy module
//    loading cannot happen inside a capture on drivers older than CUDA 12.3), and so is the
//    first timed run of a row timed by plain launches. If the operation cannot be captured (a
//    library call that synchronizes), the timer falls back for good to plain stream launches
//    between the same two events and says so in used_graph().
//  - cold (flusher given; working sets >= L2/2): for each of the `batch` executions, the L2
//    is flushed, then an event pair brackets that one execution; the result is the sum of the
//    bracketed intervals. The first call starts with one plain, untimed execution (lazy
//    loading). The flush is never inside a timed interval (nvbench measures its cold runs the
//    same way). Each execution here is a DRAM-sized run (>= L2/2 of data), long compared with
//    the CPU cost of queueing the next flush + launch, so the queue never drains inside a
//    timed interval.
// Events are read only after cudaEventSynchronize on the last stop event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "harness/cuda/device_buffer.h"

struct CUevent_st;
struct CUgraphExec_st;

namespace gpubench {

/// Enqueues execution number `k` (0-based within the batch) of an operation on the stream and
/// returns its cudaError_t as an int. Must only enqueue: no synchronous CUDA call (no
/// cudaMalloc, cudaMemcpy, stream/device synchronize), because it may be captured into a graph.
using EnqueueFn = std::function<int(CUstream_st* stream, int k)>;

/// How long a wait for the device may last before the work waited for is taken to be hung
/// (DeviceHung): 120 s, far beyond any sample or single operation gpubench times, unless the
/// environment's GPUBENCH_DEVICE_WAIT_SECONDS (a number above 0) says otherwise (a run under
/// compute-sanitizer, whose kernels run many times slower).
double device_wait_limit_seconds();
/// Tests: a shorter limit (<= 0 restores the default).
void set_device_wait_limit_seconds(double seconds);
/// Whether a wait has given up on hung work (DeviceHung) in this process. From then on nothing
/// is freed (DeviceBuffer, HostBuffer, managed memory): cudaFree and cudaFreeHost wait for the
/// device, and the buffers of a hung row's preparation are destroyed as its exception unwinds.
bool device_hang_seen();
/// Tests: forget the hang (the fake device is reset after it).
void forget_device_hang();
/// Waits until `event` has completed (cudaEventSynchronize, bounded): a CUDA error as
/// GPUBENCH_CUDA_CHECK raises it, DeviceHung after device_wait_limit_seconds(). `what` names
/// the wait in that error.
/// `spin`: never sleep between polls (a wait timed by the host clock must end when the work does).
void wait_for_event(CUevent_st* event, const char* what, bool spin = false);
/// The same for everything queued so far on `stream` (cudaStreamSynchronize, bounded); the
/// stream's device must be current.
void wait_for_stream(CUstream_st* stream, const char* what, bool spin = false);
/// wait_for_stream with one event kept for every wait (created on the current device): for a
/// wait inside a host-timed interval, which would otherwise time an event's creation too. The
/// event is left undestroyed after a hang (one call fewer to a hung device).
class StreamWaiter {
 public:
  StreamWaiter();
  ~StreamWaiter();
  StreamWaiter(const StreamWaiter&) = delete;
  StreamWaiter& operator=(const StreamWaiter&) = delete;
  void wait(CUstream_st* stream, const char* what, bool spin = false);

 private:
  CUevent_st* done_ = nullptr;
};

/// A start/stop pair of CUDA events (timing enabled). Move-only.
class EventPair {
 public:
  EventPair();
  ~EventPair();
  EventPair(EventPair&& other) noexcept;
  EventPair& operator=(EventPair&& other) noexcept;
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  void record_start(CUstream_st* stream);
  void record_stop(CUstream_st* stream);
  /// Seconds between the two records; waits for the stop event first.
  double seconds();

 private:
  CUevent_st* start_ = nullptr;
  CUevent_st* stop_ = nullptr;
};

/// Evicts the L2 before a cold timed run by reading a buffer of 2 x L2 with the read kernel.
/// Reading (rather than writing) leaves the L2 full of clean lines, so the timed kernel does
/// not pay for writing back the flush's dirty lines; the reads also force the write-back of
/// any dirty lines a previous run left, outside the timed region. This relies on
/// kernels::launch_read using plain (L2-allocating) loads, not evict-first/streaming hints.
class L2Flusher {
 public:
  L2Flusher(std::uint64_t l2_bytes, int sm_count);
  /// Bytes the flush buffer needs (for require_device_memory before allocate()).
  std::size_t buffer_bytes() const { return bytes_; }
  /// Allocates and fills the buffer once (later calls do nothing). Throws SkipCase if it
  /// does not fit.
  void allocate(CUstream_st* stream);
  /// Enqueues the flush on `stream` (allocating first if needed; allocation synchronizes).
  void flush(CUstream_st* stream);

 private:
  std::size_t bytes_;
  int sm_count_;
  DeviceBuffer buffer_;
  DeviceBuffer partials_;
};

/// Times `batch` executions of an operation (see the top of this file).
class BatchTimer {
 public:
  explicit BatchTimer(CUstream_st* stream);
  ~BatchTimer();
  BatchTimer(const BatchTimer&) = delete;
  BatchTimer& operator=(const BatchTimer&) = delete;

  /// Seconds the device spent on the `batch` executions. `flusher` non-null: cold mode.
  double time(int batch, const EnqueueFn& enqueue, L2Flusher* flusher);
  /// Drops the cached graphs: call when the enqueued arguments change (a reallocated buffer).
  void invalidate();
  /// False once capture failed and the timer fell back to plain stream launches.
  bool graph_capable() const { return graph_ok_; }
  /// Hot mode with plain stream launches between the two events, never a graph: for library
  /// calls long enough not to need one (a captured cudaMemcpyAsync becomes a graph memcpy node,
  /// which moved 1 GiB at 2434 GB/s on an H100 against 3034 GB/s issued to a stream).
  void use_stream_launches() { graph_ok_ = false; }
  /// Whether the last hot-mode time() ran a CUDA graph.
  bool used_graph() const { return last_used_graph_; }

 private:
  double time_hot(int batch, const EnqueueFn& enqueue);
  double time_cold(int batch, const EnqueueFn& enqueue, L2Flusher& flusher);
  /// The cached graph for `batch`, capturing it if needed; nullptr when not capturable.
  CUgraphExec_st* graph_for(int batch, const EnqueueFn& enqueue);

  CUstream_st* stream_;
  std::optional<EventPair> whole_;  // created on first use: workloads allocate in prepare() only
  std::vector<EventPair> per_run_;
  /// Instantiated graphs by batch size, oldest first: sizing runs run(1) beside run(batch), so
  /// two entries avoid re-capturing.
  std::vector<std::pair<int, CUgraphExec_st*>> graphs_;
  static constexpr std::size_t kMaxGraphs = 2;
  bool graph_ok_ = true;
  bool warmed_ = false;
  bool last_used_graph_ = false;
};

}  // namespace gpubench
