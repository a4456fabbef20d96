// PCIe family kernels: host<->device transfer helpers (bandwidth/pcie_*).
//
// What they measure and their work model: the family moves `bytes` across the link once per
// transfer (transfer_work(bytes, pcie_h2d | pcie_d2h)); percent of peak is against the
// negotiated link's per-direction rate (harness/pcie/link.h).
//
// Kernels:
//  - pcie_spin_kernel (pcie_spin.cu): holds a stream until the host releases it.
//  - pcie_sm_copy_kernel (families/pcie/pcie.cuh, launched here): the SM-driven variant
//    (`*_sm`): 16-byte loads and stores through mapped pinned host memory instead of the copy
//    engines.
// Variants of the family (names in families/pcie/cases.cpp): pinned_ce, pageable_ce,
// wc_pinned_ce (copy engines), pinned_sm (this file), for h2d, d2h and both at once.
#include "families/pcie/pcie.cuh"
#include "families/pcie/pcie.h"
#include "kernels/launch.cuh"

namespace gpubench::kernels {

int pcie_sm_copy_blocks(std::size_t bytes, int sm_count) { return pcie::sm_copy_blocks(bytes, sm_count); }

int launch_pcie_sm_copy(const void* src, void* dst, std::size_t bytes, int sm_count, Stream stream) {
  if (bytes == 0) return rt::kSuccess;
  const int blocks = pcie::sm_copy_blocks(bytes, sm_count);
  return rt::launch(pcie::pcie_sm_copy_kernel, blocks, pcie::kBlockThreads, 0, stream, static_cast<const uint4*>(src),
                    static_cast<uint4*>(dst), bytes);
}

}  // namespace gpubench::kernels
