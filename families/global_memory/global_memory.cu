// Launchers of the device-memory bandwidth kernels (bodies and bytes model in
// global_memory.cuh, declarations in global_memory.h).
//
// Grid sizing: one wave of resident blocks at most, never more than the work needs for one
// unrolled pass (grid_for, kernels/launch_grid.cuh).
#include <algorithm>
#include <cstdint>

#include "families/global_memory/global_memory.cuh"
#include "families/global_memory/global_memory.h"
#include "kernels/launch.cuh"
#include "kernels/launch_grid.cuh"

namespace gpubench::kernels {
namespace {

using rt::Error;

/// Vectors a thread takes per pass when sizing the grid: one when the launch repeats passes
/// (a small, cache-resident set then spreads over as many SMs as it can feed), the unroll
/// otherwise.
std::size_t vectors_per_thread(const Passes& p) { return p.count > 1 ? 1 : kMemoryUnroll; }

}  // namespace

int launch_copy(const void* src, void* dst, std::size_t bytes, int sm_count, Stream stream, Passes passes) {
  if (sm_count < 1 || src == nullptr || dst == nullptr || !passes_ok(passes, bytes)) return rt::kInvalidValue;
  if (bytes == 0) return rt::kSuccess;
  static OccupancyCache cache(kMemoryBlockThreads);
  const auto kernel = copy_kernel<kMemoryUnroll>;
  int grid = 0;
  const Error err = grid_for(kernel, cache, sm_count, bytes / 16 + 1, vectors_per_thread(passes), &grid);
  if (err != rt::kSuccess) return err;
  return rt::launch(kernel, grid, kMemoryBlockThreads, 0, stream, static_cast<const unsigned char*>(src),
                    static_cast<unsigned char*>(dst), bytes, passes.count, passes.slots, passes.slot_stride);
}

int launch_read(const std::uint32_t* in, std::size_t n, std::uint32_t* partial, int max_blocks, int* blocks,
                int sm_count, Stream stream, Passes passes) {
  if (sm_count < 1 || max_blocks < 1 || blocks == nullptr || in == nullptr || partial == nullptr ||
      !passes_ok(passes, n * 4)) {
    return rt::kInvalidValue;
  }
  *blocks = 0;
  if (n == 0) return rt::kSuccess;
  static OccupancyCache cache(kMemoryBlockThreads);
  const auto kernel = read_kernel<kMemoryUnroll>;
  int grid = 0;
  const Error err = grid_for(kernel, cache, sm_count, n / 4 + 1, vectors_per_thread(passes), &grid);
  if (err != rt::kSuccess) return err;
  grid = std::min(grid, max_blocks);
  *blocks = grid;
  return rt::launch(kernel, grid, kMemoryBlockThreads, 0, stream, in, n, partial, passes.count, passes.slots,
                    passes.slot_stride / 4);
}

int launch_block_set_read(const std::uint32_t* in, std::size_t n, std::uint32_t* partial, int blocks, Stream stream,
                          Passes passes) {
  if (blocks < 1 || in == nullptr || partial == nullptr || n % 4 != 0 ||
      reinterpret_cast<std::uintptr_t>(in) % 16 != 0 || passes.count < 1 || passes.slots != 1) {
    return rt::kInvalidValue;
  }
  return rt::launch(block_set_read_kernel<kMemoryUnroll>, blocks, kMemoryBlockThreads, 0, stream, in, n, partial,
                    passes.count);
}

int launch_write(std::uint32_t* out, std::size_t n, std::uint32_t seed, int sm_count, Stream stream, Passes passes) {
  if (sm_count < 1 || out == nullptr || !passes_ok(passes, n * 4)) return rt::kInvalidValue;
  if (n == 0) return rt::kSuccess;
  static OccupancyCache cache(kMemoryBlockThreads);
  const auto kernel = write_kernel<kMemoryUnroll>;
  int grid = 0;
  const Error err = grid_for(kernel, cache, sm_count, n / 4 + 1, vectors_per_thread(passes), &grid);
  if (err != rt::kSuccess) return err;
  return rt::launch(kernel, grid, kMemoryBlockThreads, 0, stream, out, n, seed, passes.count, passes.slots,
                    passes.slot_stride / 4);
}

int launch_strided_copy(const float* in, float* out, std::size_t n, int stride, int sm_count, Stream stream) {
  if (sm_count < 1 || stride < 1 || in == nullptr || out == nullptr) return rt::kInvalidValue;
  if (n == 0) return rt::kSuccess;
  static OccupancyCache cache(kMemoryBlockThreads);
  const auto kernel = strided_copy_kernel<kGatherUnroll>;
  const std::size_t touched = (n + static_cast<std::size_t>(stride) - 1) / static_cast<std::size_t>(stride);
  int grid = 0;
  const Error err = grid_for(kernel, cache, sm_count, touched, kGatherUnroll, &grid);
  if (err != rt::kSuccess) return err;
  return rt::launch(kernel, grid, kMemoryBlockThreads, 0, stream, in, out, n, stride);
}

int launch_gather(const float* in, const std::uint32_t* idx, float* out, std::size_t n, int sm_count, Stream stream) {
  if (sm_count < 1 || in == nullptr || idx == nullptr || out == nullptr) return rt::kInvalidValue;
  if (n == 0) return rt::kSuccess;
  static OccupancyCache cache(kMemoryBlockThreads);
  const auto kernel = gather_kernel<kGatherUnroll>;
  int grid = 0;
  const Error err = grid_for(kernel, cache, sm_count, n, kGatherUnroll, &grid);
  if (err != rt::kSuccess) return err;
  return rt::launch(kernel, grid, kMemoryBlockThreads, 0, stream, in, idx, out, n);
}

namespace {

template <bool kFloats>
int launch_seeded_fill_of(std::uint32_t* dst, std::size_t bytes, std::uint64_t seed, int sm_count, Stream stream) {
  static OccupancyCache cache(kMemoryBlockThreads);
  const auto kernel = seeded_fill_kernel<kFloats>;
  int grid = 0;
  // One word per thread and pass; the byte tail is one more item (thread 0's).
  const Error err = grid_for(kernel, cache, sm_count, bytes / 4 + 1, 1, &grid);
  if (err != rt::kSuccess) return err;
  return rt::launch(kernel, grid, kMemoryBlockThreads, 0, stream, dst, bytes, seed);
}

}  // namespace

int launch_seeded_fill(void* dst, std::size_t bytes, std::uint64_t seed, SeededData data, int sm_count, Stream stream) {
  const bool floats = data == SeededData::floats;
  if (sm_count < 1 || dst == nullptr || reinterpret_cast<std::uintptr_t>(dst) % 4 != 0 || (floats && bytes % 4 != 0))
    return rt::kInvalidValue;
  if (bytes == 0) return rt::kSuccess;
  auto* words = static_cast<std::uint32_t*>(dst);
  return floats ? launch_seeded_fill_of<true>(words, bytes, seed, sm_count, stream)
                : launch_seeded_fill_of<false>(words, bytes, seed, sm_count, stream);
}

int launch_chase_ring_fill(std::uint32_t* next, std::size_t n, std::uint64_t seed, int sm_count, Stream stream) {
  if (next == nullptr || sm_count < 1 || n == 0 || n > 0xffffffffull) return rt::kInvalidValue;
  static OccupancyCache cache(kMemoryBlockThreads);
  int grid = 0;
  const Error err = grid_for(chase_ring_fill_kernel, cache, sm_count, n, 1, &grid);
  if (err != rt::kSuccess) return err;
  return rt::launch(chase_ring_fill_kernel, grid, kMemoryBlockThreads, 0, stream, next, make_chase_ring_of(n, seed));
}

int launch_pointer_chase(const std::uint32_t* next, std::size_t steps, std::uint32_t start, std::uint32_t* sink,
                         long long* cycles, Stream stream) {
  if (next == nullptr || sink == nullptr || cycles == nullptr) return rt::kInvalidValue;
  return rt::launch(pointer_chase_kernel<kMemoryUnroll>, 1, 1, 0, stream, next, steps, start, sink, cycles);
}

}  // namespace gpubench::kernels
