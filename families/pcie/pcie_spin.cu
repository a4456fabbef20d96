// The PCIe spin kernel and its launcher (declared in families/pcie/pcie.h): one thread that holds
// its stream until the host writes a release flag in mapped pinned memory (or a timeout
// expires). The CUDA workloads queue a batch of small copies behind it, record the start event
// after it, and then release it: the copies run back to back and the host's queueing cost (a
// few us per cudaMemcpyAsync) is not timed. nvbandwidth does the same. Apart from pcie.cu
// because it reads the GPU's global timer (inline PTX), which the host emulation does not have:
// it runs only on a GPU (gpubench_kernel_check under the device kit).
#include <cuda_runtime.h>

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

}  // namespace gpubench::kernels
