// The PCIe spin kernel (launched by pcie_spin.cu, which says what it is for): one thread that
// holds its stream until the host writes a release flag in mapped pinned memory, or a timeout
// expires. It reads the GPU's global timer (inline PTX), which the host emulation does not have:
// it runs only on a GPU (gpubench_kernel_check under the device kit).
#pragma once

#include <cstdint>

#include "families/pcie/pcie.h"  // kSpinReleased, kSpinTimedOut

namespace gpubench::kernels {

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

}  // namespace gpubench::kernels
