// The geometry of a 1-D grid-stride launch, shared by the streaming kernels of every family
// (families/global_memory, families/memory): how many blocks a launch gets (host code, for the
// launchers and kernels/launch_grid.cuh; here so the emulation tests cover it) and where the
// calling thread stands in the grid (device code).
//
// Compiled by nvcc and by the host compiler under the SIMT emulation (kernels/simt/simt.h), so
// no CUDA-only syntax beyond the built-ins the shim provides.
#pragma once

#include <cstddef>

#include "kernels/simt/simt.h"

namespace gpubench::kernels {

/// Blocks of `threads_per_block` threads for `items` work items when each thread takes
/// `per_thread` of them per pass: enough for one pass, never more than `resident` (the blocks
/// that fit on the GPU at once, so large sizes run one wave of grid-stride blocks), at least 1.
inline int grid_blocks(std::size_t items, std::size_t per_thread, int threads_per_block, int resident) {
  const std::size_t per_block = per_thread * static_cast<std::size_t>(threads_per_block);
  std::size_t blocks = (items + per_block - 1) / per_block;
  const std::size_t cap = resident > 0 ? static_cast<std::size_t>(resident) : 1u;
  if (blocks > cap) blocks = cap;
  return blocks < 1 ? 1 : static_cast<int>(blocks);
}

/// Global index of the calling thread and number of threads in the (1-D) grid.
struct GridPosition {
  std::size_t thread;   ///< blockIdx.x * blockDim.x + threadIdx.x
  std::size_t threads;  ///< gridDim.x * blockDim.x
};

/// Where the calling thread stands in the (1-D) grid: the start and step of its grid-stride loop.
__device__ __forceinline__ GridPosition grid_position() {
  return GridPosition{static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                      static_cast<std::size_t>(gridDim.x) * blockDim.x};
}

}  // namespace gpubench::kernels
