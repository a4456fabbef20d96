// Grid sizing for the launchers of grid-stride kernels (families/global_memory/global_memory.cu,
// families/memory/memory.cu): a kernel gets as many blocks as can be resident at once (SM count
// x blocks per SM from the runtime's occupancy answer, cached per kernel and device), never more
// than the work needs for one pass (grid_blocks, kernels/grid.cuh), so small sizes launch small
// grids and large sizes run one wave of persistent grid-stride blocks (no tail wave).
//
// Uses only the names in kernels/launch.cuh's rt::, as a launcher must: it compiles under nvcc and
// as host C++ with the kernels under the SIMT emulation.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>

#include "kernels/grid.cuh"
#include "kernels/launch.cuh"

namespace gpubench::kernels {

/// The resident blocks per SM of one kernel at `threads_per_block` threads (no dynamic shared
/// memory), per device, asked of the runtime once: one static instance per kernel, in its
/// launcher.
class OccupancyCache {
 public:
  explicit OccupancyCache(int threads_per_block) : threads_per_block_(threads_per_block) {}

  /// Threads per block the kernel is launched with.
  int threads_per_block() const { return threads_per_block_; }

  /// Blocks of `kernel` resident on the whole current GPU at once: sm_count x blocks per SM (at
  /// least one per SM).
  template <class Kernel>
  rt::Error resident_blocks(Kernel kernel, int sm_count, int* blocks) {
    int device = 0;
    rt::Error err = rt::current_device(&device);
    if (err != rt::kSuccess) return err;
    const bool cached = device >= 0 && device < kMaxDevices;
    int per_sm = cached ? blocks_per_sm_[device].load() : 0;
    if (per_sm == 0) {
      err = rt::max_active_blocks(&per_sm, kernel, threads_per_block_, 0);
      if (err != rt::kSuccess) return err;
      per_sm = std::max(per_sm, 1);
      if (cached) blocks_per_sm_[device].store(per_sm);
    }
    *blocks = sm_count * per_sm;
    return rt::kSuccess;
  }

 private:
  static constexpr int kMaxDevices = 64;
  int threads_per_block_;
  std::atomic<int> blocks_per_sm_[kMaxDevices] = {};  ///< 0 = not asked yet
};

/// Blocks of `cache`'s kernel for `items` work items of which each thread takes `per_thread` per
/// pass: one wave of resident blocks at most, at least one block.
template <class Kernel>
rt::Error grid_for(Kernel kernel, OccupancyCache& cache, int sm_count, std::size_t items, std::size_t per_thread,
                   int* grid) {
  int resident = 0;
  const rt::Error err = cache.resident_blocks(kernel, sm_count, &resident);
  if (err != rt::kSuccess) return err;
  *grid = grid_blocks(items, per_thread, cache.threads_per_block(), resident);
  return rt::kSuccess;
}

}  // namespace gpubench::kernels
