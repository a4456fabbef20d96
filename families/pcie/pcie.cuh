// Kernel body of the SM-driven PCIe copy (bandwidth/pcie_{h2d,d2h}/pinned_sm). Compiled by nvcc
// (families/pcie/pcie.cu) and, unchanged, by g++ under the host SIMT shim (kernels/simt/simt.h) for the
// emulation test (tests/unit/test_pcie_emulation.cpp).
//
// pcie_sm_copy_kernel: dst[0..bytes) = src[0..bytes). Each thread loads kVectorsPerThread
// 16-byte vectors (one tile = blockDim.x x kVectorsPerThread vectors, consecutive threads on
// consecutive vectors so a warp covers 512 contiguous bytes per access), then stores them;
// grid-stride over tiles. When one side is mapped pinned host memory each warp access becomes
// PCIe read requests (h2d) or posted writes (d2h); several loads in flight per thread is what
// keeps enough read requests outstanding to cover the link's round trip. The last bytes % 16
// bytes are copied one by one by block 0.
// Work: `bytes` cross the link once (transfer_work).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/simt/simt.h"  // under nvcc: only GPUBENCH_UNROLL; under g++: the shim

namespace gpubench::kernels::pcie {

/// Threads per block.
constexpr int kBlockThreads = 256;
/// 16-byte vectors each thread has in flight per tile.
constexpr int kVectorsPerThread = 4;
/// Resident blocks per SM the grid is sized for (1024 threads, within every architecture's 2048).
constexpr int kBlocksPerSm = 4;

/// Blocks for a copy of `bytes` on `sm_count` SMs: enough to fill every SM, never more than the
/// tiles there are, at least one.
inline int sm_copy_blocks(std::size_t bytes, int sm_count) {
  const std::size_t tile_bytes = static_cast<std::size_t>(kBlockThreads) * kVectorsPerThread * 16;
  const std::size_t tiles = (bytes + tile_bytes - 1) / tile_bytes;
  const std::size_t full = static_cast<std::size_t>(sm_count > 0 ? sm_count : 1) * kBlocksPerSm;
  const std::size_t blocks = tiles < full ? tiles : full;
  return blocks > 0 ? static_cast<int>(blocks) : 1;
}

/// See the file comment. src and dst 16-byte aligned.
__global__ void __launch_bounds__(kBlockThreads)
    pcie_sm_copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t bytes) {
  const std::size_t n16 = bytes / 16;
  const std::size_t tile = static_cast<std::size_t>(blockDim.x) * kVectorsPerThread;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * tile; base < n16;
       base += static_cast<std::size_t>(gridDim.x) * tile) {
    uint4 v[kVectorsPerThread] = {};
    // All loads first, then all stores: kVectorsPerThread requests in flight per thread.
    GPUBENCH_UNROLL
    for (int u = 0; u < kVectorsPerThread; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * blockDim.x + threadIdx.x;
      if (i < n16) v[u] = src[i];
    }
    GPUBENCH_UNROLL
    for (int u = 0; u < kVectorsPerThread; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * blockDim.x + threadIdx.x;
      if (i < n16) dst[i] = v[u];
    }
  }
  if (blockIdx.x == 0) {
    const auto* s = reinterpret_cast<const unsigned char*>(src);
    auto* d = reinterpret_cast<unsigned char*>(dst);
    for (std::size_t b = n16 * 16 + threadIdx.x; b < bytes; b += blockDim.x) d[b] = s[b];
  }
}

}  // namespace gpubench::kernels::pcie
