// Host-side CUDA resources the workloads share: host memory of each kind (pageable, pinned,
// write-combined, mapped), a non-blocking stream and an ordering event, each owning what it
// created. Compiled against the runtime API only (the fake-runtime tests stand in for it).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpubench {

enum class HostMemory { pageable, pinned, wc_pinned, mapped };

/// Host memory of one kind. pageable: malloc; pinned: cudaHostAlloc default flags (what
/// cudaMallocHost does); wc_pinned: cudaHostAllocWriteCombined (not snooped by the CPU caches
/// on its way to the GPU; uncached for CPU reads); mapped: cudaHostAllocMapped, with the device
/// pointer from cudaHostGetDevicePointer for the SM-driven copies.
class HostBuffer {
 public:
  /// Allocates `bytes` (at least 1) of `kind`; failure throws SkipCase.
  HostBuffer(std::size_t bytes, HostMemory kind);
  ~HostBuffer();
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  /// The host pointer.
  void* get() const { return ptr_; }
  /// The pointer a kernel uses (mapped memory only).
  void* device_view() const { return device_view_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  void* device_view_ = nullptr;
  std::size_t bytes_;
  HostMemory kind_;
};

/// A created non-blocking stream (no implicit synchronization with the legacy default stream).
class OwnedStream {
 public:
  OwnedStream();
  ~OwnedStream();
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

/// An event for ordering only (stream B waits for stream A's release, or the host for what a
/// stream has done so far); timing disabled.
class OrderEvent {
 public:
  OrderEvent();
  ~OrderEvent();
  OrderEvent(const OrderEvent&) = delete;
  OrderEvent& operator=(const OrderEvent&) = delete;
  /// Makes everything enqueued on `waiter` from now on wait for what is enqueued on `signal` so far.
  void order(cudaStream_t signal, cudaStream_t waiter);
  /// Marks what is enqueued on `s` so far, for wait().
  void mark(cudaStream_t s);
  /// Blocks the host until what was enqueued before the last mark() (or order()) is done
  /// (bounded: wait_for_event).
  void wait();

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace gpubench
