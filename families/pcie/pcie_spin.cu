// The launcher of the PCIe spin kernel (pcie_spin.cuh; declared in families/pcie/pcie.h). The CUDA
// workloads queue a batch of small copies behind the spinning kernel, record the start event
// after it, and then release it: the copies run back to back and the host's queueing cost (a
// few us per cudaMemcpyAsync) is not timed. nvbandwidth does the same. Apart from pcie.cu because
// the kernel reads the GPU's global timer, which the host emulation does not have.
#include <cuda_runtime.h>

#include "families/pcie/pcie.h"
#include "families/pcie/pcie_spin.cuh"

namespace gpubench::kernels {

int launch_pcie_spin(const std::uint32_t* release_flag, std::uint32_t* status, std::uint64_t timeout_ns,
                     Stream stream) {
  pcie_spin_kernel<<<1, 1, 0, stream>>>(release_flag, status, static_cast<unsigned long long>(timeout_ns));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace gpubench::kernels
