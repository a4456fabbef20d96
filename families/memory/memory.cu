// Launchers of the memory-management family's kernels (bodies and design in memory.cuh,
// declarations in memory.h).
//
// Grid sizing: one wave of resident blocks at most, never more than the work needs for one
// unrolled pass (grid_for, kernels/launch_grid.cuh).
//
// Uses only the names in kernels/launch.cuh's rt:: (no CUDA runtime call of its own): the same
// file is built as C++ with its kernels under the SIMT emulation (gpubench_kernel_check_emulated).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "families/memory/memory.cuh"
#include "families/memory/memory.h"
#include "kernels/launch.cuh"
#include "kernels/launch_grid.cuh"

namespace gpubench::kernels {
namespace {

using rt::Error;
namespace mk = memory_kernels;

constexpr std::size_t kVectorBytes = 16;

bool aligned(const void* p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

/// True when [a, a + bytes) and [b, b + bytes) share a byte.
bool overlap(const void* a, const void* b, std::size_t bytes) {
  const auto pa = reinterpret_cast<std::uintptr_t>(a);
  const auto pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + bytes && pb < pa + bytes;
}

/// launch_axpy for one element type (arguments already checked, n > 0).
template <class T>
int launch_axpy_as(typename T::Scalar a, const void* x, const void* y, void* out, std::size_t n, int sm_count,
                   Stream stream) {
  static OccupancyCache cache(mk::kBlockThreads);
  const auto kernel = mk::axpy_kernel<T, mk::kAxpyUnroll>;
  int grid = 0;
  const Error err = grid_for(kernel, cache, sm_count, n / T::kPerVector + 1, mk::kAxpyUnroll, &grid);
  if (err != rt::kSuccess) return err;
  return rt::launch(kernel, grid, mk::kBlockThreads, 0, stream, a, static_cast<const uint4*>(x),
                    static_cast<const uint4*>(y), static_cast<uint4*>(out), n);
}

}  // namespace

int launch_axpy(AxpyType type, double a, const void* x, const void* y, void* out, std::size_t n, int sm_count,
                Stream stream) {
  if (type != AxpyType::fp64 && type != AxpyType::fp32 && type != AxpyType::fp16 && type != AxpyType::bf16) {
    return rt::kInvalidValue;
  }
  const std::size_t bytes = n * static_cast<std::size_t>(axpy_elem_bytes(type));
  if (sm_count < 1 || x == nullptr || y == nullptr || out == nullptr || !aligned(x, kVectorBytes) ||
      !aligned(y, kVectorBytes) || !aligned(out, kVectorBytes) || overlap(out, x, bytes) || overlap(out, y, bytes)) {
    return rt::kInvalidValue;
  }
  if (n == 0) return rt::kSuccess;
  switch (type) {
    case AxpyType::fp64: return launch_axpy_as<mk::AxpyFp64>(a, x, y, out, n, sm_count, stream);
    case AxpyType::fp32: return launch_axpy_as<mk::AxpyFp32>(static_cast<float>(a), x, y, out, n, sm_count, stream);
    case AxpyType::fp16: return launch_axpy_as<mk::AxpyFp16>(static_cast<float>(a), x, y, out, n, sm_count, stream);
    case AxpyType::bf16: return launch_axpy_as<mk::AxpyBf16>(static_cast<float>(a), x, y, out, n, sm_count, stream);
  }
  return rt::kInvalidValue;
}

int launch_checksum(const std::uint32_t* in, std::size_t n, std::uint32_t* partial, int max_blocks, int* blocks,
                    int sm_count, Stream stream) {
  if (blocks != nullptr) *blocks = 0;
  if (sm_count < 1 || max_blocks < 1 || blocks == nullptr || in == nullptr || partial == nullptr ||
      !aligned(in, sizeof(std::uint32_t)) || !aligned(partial, sizeof(std::uint32_t))) {
    return rt::kInvalidValue;
  }
  static OccupancyCache cache(mk::kBlockThreads);
  const auto kernel = mk::checksum_kernel<mk::kChecksumUnroll>;
  int grid = 0;
  // n == 0 still launches one block: it writes the partial (0) the caller adds up.
  const Error err = grid_for(kernel, cache, sm_count, n / 4 + 1, mk::kChecksumUnroll, &grid);
  if (err != rt::kSuccess) return err;
  grid = std::min(grid, max_blocks);
  const Error launched = rt::launch(kernel, grid, mk::kBlockThreads, 0, stream, in, n, partial);
  if (launched == rt::kSuccess) *blocks = grid;
  return launched;
}

int launch_transform(std::uint32_t* data, std::size_t n, int rounds, int sm_count, Stream stream) {
  if (sm_count < 1 || rounds < 0 || data == nullptr || !aligned(data, sizeof(std::uint32_t))) {
    return rt::kInvalidValue;
  }
  if (n == 0) return rt::kSuccess;
  static OccupancyCache cache(mk::kBlockThreads);
  const auto kernel = mk::transform_kernel<mk::kTransformUnroll>;
  int grid = 0;
  const Error err = grid_for(kernel, cache, sm_count, n / 4 + 1, mk::kTransformUnroll, &grid);
  if (err != rt::kSuccess) return err;
  return rt::launch(kernel, grid, mk::kBlockThreads, 0, stream, data, n, rounds);
}

}  // namespace gpubench::kernels
