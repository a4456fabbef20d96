#include "harness/cuda/timing.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>

#include "families/global_memory/global_memory.h"
#include "harness/backend.h"
#include "harness/cli.h"
#include "harness/cuda/cuda_check.h"

namespace gpubench {

// ---- bounded waits ----

namespace {
double g_wait_limit_seconds = 0;  // 0: the default
std::atomic<bool> g_device_hang_seen{false};
}  // namespace

bool device_hang_seen() { return g_device_hang_seen.load(); }
void forget_device_hang() { g_device_hang_seen = false; }

double device_wait_limit_seconds() {
  if (g_wait_limit_seconds > 0) return g_wait_limit_seconds;
  static const double from_environment = [] {
    // gpubench refused a bad value when it started (check_environment).
    const char* v = std::getenv("GPUBENCH_DEVICE_WAIT_SECONDS");
    return v ? device_wait_seconds(v).value_or(120.0) : 120.0;
  }();
  return from_environment;
}
void set_device_wait_limit_seconds(double seconds) { g_wait_limit_seconds = seconds > 0 ? seconds : 0; }

void wait_for_event(CUevent_st* event, const char* what, bool spin) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t q = cudaEventQuery(event);
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) GPUBENCH_CUDA_CHECK(q);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > device_wait_limit_seconds()) {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", device_wait_limit_seconds());
      g_device_hang_seen = true;
      throw DeviceHung(std::string(what) + " did not finish within " + limit +
                       " s: a kernel or copy hung, and the device is left running it");
    }
    // Spin (yielding) through the first 2 ms, as long as a sample lasts, then sleep: a sample's
    // end is seen at once, and a long wait does not hold a core.
    if (spin || waited < 2e-3) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(waited < 0.1 ? 50 : 1000));
    }
  }
}

StreamWaiter::StreamWaiter() { GPUBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming)); }
StreamWaiter::~StreamWaiter() {
  // Destroying an event is no wait, but it is one more call to a hung device: leave it.
  if (!device_hang_seen()) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(done_));
}
void StreamWaiter::wait(CUstream_st* stream, const char* what, bool spin) {
  GPUBENCH_CUDA_CHECK(cudaEventRecord(done_, stream));
  wait_for_event(done_, what, spin);
}

void wait_for_stream(CUstream_st* stream, const char* what, bool spin) { StreamWaiter().wait(stream, what, spin); }

// ---- EventPair ----

EventPair::EventPair() {
  GPUBENCH_CUDA_CHECK(cudaEventCreate(&start_));
  try {
    GPUBENCH_CUDA_CHECK(cudaEventCreate(&stop_));
  } catch (...) {
    GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(start_));
    throw;
  }
}

EventPair::~EventPair() {
  if (start_) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(start_));
  if (stop_) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(stop_));
}

EventPair::EventPair(EventPair&& other) noexcept
    : start_(std::exchange(other.start_, nullptr)), stop_(std::exchange(other.stop_, nullptr)) {}

EventPair& EventPair::operator=(EventPair&& other) noexcept {
  if (this != &other) {
    std::swap(start_, other.start_);
    std::swap(stop_, other.stop_);
  }
  return *this;
}

void EventPair::record_start(CUstream_st* stream) { GPUBENCH_CUDA_CHECK(cudaEventRecord(start_, stream)); }
void EventPair::record_stop(CUstream_st* stream) { GPUBENCH_CUDA_CHECK(cudaEventRecord(stop_, stream)); }

double EventPair::seconds() {
  wait_for_event(stop_, "a timed sample");
  float ms = 0;
  GPUBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return static_cast<double>(ms) * 1e-3;
}

// ---- L2Flusher ----

L2Flusher::L2Flusher(std::uint64_t l2_bytes, int sm_count)
    // 2 x L2, at least 8 MiB in case the runtime reports no L2 size.
    : bytes_(static_cast<std::size_t>(l2_bytes > 0 ? 2 * l2_bytes : (8u << 20)) / 16 * 16), sm_count_(sm_count) {}

void L2Flusher::allocate(CUstream_st* stream) {
  if (buffer_.get()) return;
  const int max_blocks = 64 * (sm_count_ > 0 ? sm_count_ : 1);
  require_device_memory(bytes_ + static_cast<std::size_t>(max_blocks) * 4, "the L2 flush buffer");
  DeviceBuffer buffer(bytes_);
  DeviceBuffer partials(static_cast<std::size_t>(max_blocks) * 4);
  // Its contents never matter; set them once so the reads touch defined memory.
  GPUBENCH_CUDA_CHECK(cudaMemsetAsync(buffer.get(), 0x5a, bytes_, stream));
  wait_for_stream(stream, "the L2 flush buffer's fill");
  buffer_ = std::move(buffer);
  partials_ = std::move(partials);
}

void L2Flusher::flush(CUstream_st* stream) {
  allocate(stream);
  int blocks = 0;
  GPUBENCH_CUDA_CHECK(kernels::launch_read(buffer_.as<std::uint32_t>(), bytes_ / 4, partials_.as<std::uint32_t>(),
                                           static_cast<int>(partials_.bytes() / 4), &blocks, sm_count_, stream));
}

// ---- BatchTimer ----

BatchTimer::BatchTimer(CUstream_st* stream) : stream_(stream) {}

BatchTimer::~BatchTimer() { invalidate(); }

void BatchTimer::invalidate() {
  // No throw from here: called by the destructor.
  for (auto& [batch, exec] : graphs_) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(exec));
  graphs_.clear();
}

double BatchTimer::time(int batch, const EnqueueFn& enqueue, L2Flusher* flusher) {
  if (batch < 1) batch = 1;
  return flusher ? time_cold(batch, enqueue, *flusher) : time_hot(batch, enqueue);
}

CUgraphExec_st* BatchTimer::graph_for(int batch, const EnqueueFn& enqueue) {
  for (const auto& [b, exec] : graphs_)
    if (b == batch) return exec;
  if (!warmed_) {
    // One plain execution first: with lazy module loading (the default since CUDA 12.2) the
    // first launch loads the kernel, which drivers older than CUDA 12.3 cannot do inside a
    // capture, and a row timed by plain launches (no graph) must not time that load either.
    // Its output is overwritten by every later run.
    GPUBENCH_CUDA_CHECK(enqueue(stream_, 0));
    wait_for_stream(stream_, "the first, untimed run");
    warmed_ = true;
  }
  if (!graph_ok_) return nullptr;
  // ThreadLocal: any unsafe call from this thread (a synchronize, cudaMalloc) inside the
  // enqueues fails the capture instead of silently serializing.
  GPUBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  auto abandon = [this] {  // never leave the stream capturing
    cudaGraph_t partial = nullptr;
    (void)cudaStreamEndCapture(stream_, &partial);
    if (partial) (void)cudaGraphDestroy(partial);
  };
  int err = 0;
  for (int k = 0; k < batch && err == 0; ++k) {
    try {
      err = enqueue(stream_, k);
    } catch (const DeviceLost&) {
      abandon();
      throw;
    } catch (...) {
      // A library that throws while captured: treat as not capturable; a genuine error is
      // thrown again by the plain launches.
      abandon();
      (void)cudaGetLastError();
      graph_ok_ = false;
      return nullptr;
    }
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
  if (err != 0 || end != cudaSuccess) {
    if (graph) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph));
    const int code = err != 0 ? err : static_cast<int>(end);
    if (is_sticky_cuda_error(code)) GPUBENCH_CUDA_CHECK(code);
    // Not capturable (a library call that synchronizes or allocates) or a genuine error: either
    // way, plain launches from now on; a genuine error shows up again there and is thrown.
    (void)cudaGetLastError();
    graph_ok_ = false;
    return nullptr;
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph));
  GPUBENCH_CUDA_CHECK(inst);
  if (graphs_.size() >= kMaxGraphs) {
    GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(graphs_.front().second));
    graphs_.erase(graphs_.begin());
  }
  graphs_.emplace_back(batch, exec);
  // Upload now so the first timed launch does not pay for moving the graph to the device.
  GPUBENCH_CUDA_CHECK(cudaGraphUpload(exec, stream_));
  return exec;
}

double BatchTimer::time_hot(int batch, const EnqueueFn& enqueue) {
  CUgraphExec_st* const exec = graph_for(batch, enqueue);
  if (!whole_) whole_.emplace();
  whole_->record_start(stream_);
  if (exec) {
    GPUBENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
  } else {
    for (int k = 0; k < batch; ++k) GPUBENCH_CUDA_CHECK(enqueue(stream_, k));
  }
  whole_->record_stop(stream_);
  last_used_graph_ = exec != nullptr;
  return whole_->seconds();
}

double BatchTimer::time_cold(int batch, const EnqueueFn& enqueue, L2Flusher& flusher) {
  flusher.allocate(stream_);  // synchronous the first time: before any event is recorded
  if (!warmed_) {
    // One plain execution first, so lazy module loading (the launch blocks while the kernel is
    // loaded) never falls between a start and a stop event, not even in the runner's warm-up
    // run from which it sizes the batch.
    GPUBENCH_CUDA_CHECK(enqueue(stream_, 0));
    wait_for_stream(stream_, "the first, untimed run");
    warmed_ = true;
  }
  while (per_run_.size() < static_cast<std::size_t>(batch)) per_run_.emplace_back();
  for (int k = 0; k < batch; ++k) {
    flusher.flush(stream_);
    per_run_[k].record_start(stream_);
    GPUBENCH_CUDA_CHECK(enqueue(stream_, k));
    per_run_[k].record_stop(stream_);
  }
  // The last stop event completes after every earlier one (one stream, in order).
  double total = per_run_[batch - 1].seconds();
  for (int k = 0; k + 1 < batch; ++k) total += per_run_[k].seconds();
  last_used_graph_ = false;
  return total;
}

}  // namespace gpubench
