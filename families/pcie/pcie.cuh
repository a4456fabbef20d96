// Kernel body of the SM-driven PCIe copy (bandwidth/pcie_{h2d,d2h}/pinned_sm). Compiled by nvcc
// (families/pcie/pcie.cu) and, unchanged, by g++ under the host SIMT shim (kernels/simt/simt.h) for the
// emulation test (tests/unit/test_pcie_emulation.cpp).
//
// pcie_sm_copy_kernel: dst[0..bytes) = src[0..bytes) by kernels/link_copy.cuh's body (16-byte
// vectors, every load of a tile before its first store, grid-stride, byte-wise tail). When one
// side is mapped pinned host memory each warp access becomes PCIe read requests (h2d) or posted
// writes (d2h); several loads in flight per thread is what keeps enough read requests
// outstanding to cover the link's round trip.
// Work: `bytes` cross the link once (transfer_work).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/link_copy.cuh"

namespace gpubench::kernels::pcie {

using link_copy::kBlocksPerSm;
using link_copy::kBlockThreads;
using link_copy::kVectorsPerThread;

/// Blocks for a copy of `bytes` on `sm_count` SMs (link_copy::copy_blocks).
inline int sm_copy_blocks(std::size_t bytes, int sm_count) { return link_copy::copy_blocks(bytes, sm_count); }

/// See the file comment. src and dst 16-byte aligned.
__global__ void __launch_bounds__(kBlockThreads)
    pcie_sm_copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t bytes) {
  link_copy::copy(src, dst, bytes);
}

}  // namespace gpubench::kernels::pcie
