// PCIe family kernels: host<->device transfer helpers (bandwidth/pcie_*).
//
// What they measure and their work model: the family moves `bytes` across the link once per
// transfer (transfer_work(bytes, pcie_h2d | pcie_d2h)); percent of peak is against the
// negotiated link's per-direction rate (harness/pcie/link.h).
//
// Kernels:
//  - pcie_spin_kernel: one thread that holds its stream until the host writes a release flag
//    in mapped pinned memory (or a timeout expires). The CUDA workloads queue a batch of small
//    copies behind it, record the start event after it, and then release it: the copies run
//    back to back and the host's queueing cost (a few us per cudaMemcpyAsync) is not timed.
//    nvbandwidth does the same.
//  - pcie_sm_copy_kernel (families/pcie/pcie.cuh): the SM-driven variant (`*_sm`): 16-byte
//    loads and stores through mapped pinned host memory instead of the copy engines.
// Variants of the family (names in families/pcie/cases.cpp): pinned_ce, pageable_ce,
// wc_pinned_ce (copy engines), pinned_sm (this file), for h2d, d2h and both at once.
#include <cuda_runtime.h>

#include "families/pcie/pcie.cuh"
#include "families/pcie/pcie.h"

namespace gpubench::kernels {

namespace {

/// The GPU's global nanosecond timer: independent of the SM clock, so the timeout is in real
/// time whatever the clocks do.
__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void pcie_spin_kernel(const volatile std::uint32_t* release_flag, volatile std::uint32_t* status,
                                 unsigned long long timeout_ns) {
  const unsigned long long start = global_timer_ns();
  std::uint32_t result = kSpinTimedOut;
  // volatile: every iteration reads the host's flag across the link (a cached copy would never
  // change); the sleep keeps the polling from flooding the link with reads.
  while (global_timer_ns() - start < timeout_ns) {
    if (*release_flag != 0) {
      result = kSpinReleased;
      break;
    }
    __nanosleep(256);
  }
  *status = result;
  __threadfence_system();
}

}  // namespace

int launch_pcie_spin(const std::uint32_t* release_flag, std::uint32_t* status, std::uint64_t timeout_ns,
                     Stream stream) {
  pcie_spin_kernel<<<1, 1, 0, stream>>>(release_flag, status, static_cast<unsigned long long>(timeout_ns));
  return static_cast<int>(cudaGetLastError());
}

int pcie_sm_copy_blocks(std::size_t bytes, int sm_count) { return pcie::sm_copy_blocks(bytes, sm_count); }

int launch_pcie_sm_copy(const void* src, void* dst, std::size_t bytes, int sm_count, Stream stream) {
  if (bytes == 0) return static_cast<int>(cudaSuccess);
  const int blocks = pcie::sm_copy_blocks(bytes, sm_count);
  pcie::pcie_sm_copy_kernel<<<blocks, pcie::kBlockThreads, 0, stream>>>(static_cast<const uint4*>(src),
                                                                        static_cast<uint4*>(dst), bytes);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace gpubench::kernels
