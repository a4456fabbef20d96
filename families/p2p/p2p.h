// Launcher of the peer-to-peer SM copy (families/p2p/p2p.cu). A plain C++ header (no CUDA syntax
// or include); conventions as in families/global_memory/global_memory.h: the launcher returns the
// cudaError_t of the launch as an int (0 = success), enqueues on `stream` and does not
// synchronize.
#pragma once

#include <cstddef>

struct CUstream_st;  // cudaStream_t is `CUstream_st*`

namespace gpubench::kernels {

using Stream = CUstream_st*;

/// dst[0..bytes) = src[0..bytes) by the SMs of the current device with 16-byte loads and stores
/// (several in flight per thread), byte-wise tail. One side is a peer GPU's memory, reached
/// through peer access (the current device must have it enabled towards that peer); `stream`
/// belongs to the current device. Both pointers 16-byte aligned (cudaMalloc gives 256). Any
/// byte count.
int launch_p2p_copy(const void* src, void* dst, std::size_t bytes, int sm_count, Stream stream);

/// Blocks launch_p2p_copy uses for `bytes` on `sm_count` SMs (enough to fill every SM, at most
/// one per tile, at least one).
int p2p_copy_blocks(std::size_t bytes, int sm_count);

}  // namespace gpubench::kernels
