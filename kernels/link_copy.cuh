// The copy body the kernels that move data over a link share (families/pcie: the SMs reading or
// writing mapped pinned host memory over PCIe; families/p2p: a peer GPU's memory over NVLink or
// PCIe). Compiled by nvcc and, unchanged, by g++ under the host SIMT shim (kernels/simt/simt.h).
//
// dst[0..bytes) = src[0..bytes): each thread loads kVectorsPerThread 16-byte vectors (one tile =
// blockDim.x x kVectorsPerThread vectors, consecutive threads on consecutive vectors so a warp
// covers 512 contiguous bytes per access), then stores them; grid-stride over tiles. A remote
// read costs a round trip of a microsecond or more: issuing every load of a tile before its first
// store is what keeps enough requests in flight to cover it (remote writes are posted). The last
// bytes % 16 bytes are copied one by one by block 0.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/simt/simt.h"  // under nvcc: only GPUBENCH_UNROLL; under g++: the shim

namespace gpubench::kernels::link_copy {

/// Threads per block.
constexpr int kBlockThreads = 256;
/// 16-byte vectors each thread has in flight per tile.
constexpr int kVectorsPerThread = 4;
/// Resident blocks per SM the grid is sized for (1024 threads, within every architecture's 2048).
constexpr int kBlocksPerSm = 4;
/// Bytes one tile covers.
constexpr std::size_t kTileBytes = static_cast<std::size_t>(kBlockThreads) * kVectorsPerThread * 16;

/// Blocks for a copy of `bytes` on `sm_count` SMs: enough to fill every SM, never more than the
/// tiles there are, at least one.
inline int copy_blocks(std::size_t bytes, int sm_count) {
  const std::size_t tiles = (bytes + kTileBytes - 1) / kTileBytes;
  const std::size_t full = static_cast<std::size_t>(sm_count > 0 ? sm_count : 1) * kBlocksPerSm;
  const std::size_t blocks = tiles < full ? tiles : full;
  return blocks > 0 ? static_cast<int>(blocks) : 1;
}

/// See the file comment. src and dst 16-byte aligned; called by every thread of the grid.
__device__ __forceinline__ void copy(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t bytes) {
  const std::size_t n16 = bytes / 16;
  const std::size_t tile = static_cast<std::size_t>(blockDim.x) * kVectorsPerThread;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * tile; base < n16;
       base += static_cast<std::size_t>(gridDim.x) * tile) {
    uint4 v[kVectorsPerThread] = {};
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

}  // namespace gpubench::kernels::link_copy
