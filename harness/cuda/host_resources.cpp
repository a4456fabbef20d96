#include "harness/cuda/host_resources.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "harness/backend.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/timing.h"

namespace gpubench {

HostBuffer::HostBuffer(std::size_t bytes, HostMemory kind) : bytes_(bytes), kind_(kind) {
  const std::size_t n = std::max<std::size_t>(bytes, 1);
  if (kind == HostMemory::pageable) {
    ptr_ = std::malloc(n);
    if (!ptr_) throw SkipCase("cannot allocate " + std::to_string(n) + " bytes of pageable host memory");
    return;
  }
  const unsigned flags = kind == HostMemory::wc_pinned ? cudaHostAllocWriteCombined
                         : kind == HostMemory::mapped  ? cudaHostAllocMapped
                                                       : cudaHostAllocDefault;
  // cudaErrorMemoryAllocation (pinned memory is limited by RAM and ulimits) becomes SkipCase.
  GPUBENCH_CUDA_CHECK(cudaHostAlloc(&ptr_, n, flags));
  if (kind != HostMemory::mapped) return;
  try {
    GPUBENCH_CUDA_CHECK(cudaHostGetDevicePointer(&device_view_, ptr_, 0));
  } catch (...) {
    // A constructor that throws runs no destructor: the pinned block would be lost.
    GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(ptr_));
    ptr_ = nullptr;
    throw;
  }
}

HostBuffer::~HostBuffer() {
  if (!ptr_) return;
  if (device_hang_seen() && kind_ != HostMemory::pageable) return;  // cudaFreeHost would wait for the device
  if (kind_ == HostMemory::pageable) {
    std::free(ptr_);
  } else {
    GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(ptr_));
  }
}

OwnedStream::OwnedStream() { GPUBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
OwnedStream::~OwnedStream() {
  if (s_) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s_));
}

OrderEvent::OrderEvent() { GPUBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
OrderEvent::~OrderEvent() {
  if (e_) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e_));
}
void OrderEvent::order(cudaStream_t signal, cudaStream_t waiter) {
  GPUBENCH_CUDA_CHECK(cudaEventRecord(e_, signal));
  GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(waiter, e_, 0));
}
void OrderEvent::mark(cudaStream_t s) { GPUBENCH_CUDA_CHECK(cudaEventRecord(e_, s)); }
void OrderEvent::wait() { wait_for_event(e_, "a stream's marked work"); }

}  // namespace gpubench
