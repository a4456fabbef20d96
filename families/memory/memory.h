// Launchers of the memory-management family's kernels (families/memory/memory.cu, bodies in
// memory.cuh): the streaming update of the precision rows, the checksum that consumes managed,
// mapped or copied memory, and the chunk transform of the overlap pipeline. A plain C++ header:
// no CUDA syntax, no CUDA include, so harness code compiled by the host compiler calls these.
// The reference functions are constexpr/inline so the host references, the kernels and the
// tests share one definition.
//
// Conventions (as in every family): each launcher returns the cudaError_t of the launch as an
// int (0 = success), enqueues on `stream` without synchronizing, sizes its grid from
// `sm_count`; pointers are device-accessible (cudaMalloc, managed, or a mapped host view);
// invalid arguments return cudaErrorInvalidValue (1) without launching.
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;  // cudaStream_t is `CUstream_st*`

namespace gpubench::kernels {

using Stream = CUstream_st*;

/// Element types of the streaming update. fp16 and bf16 are stored as 16-bit patterns and
/// computed in FP32 (one rounding to the storage type per element); fp64 in FP64; fp32 in FP32.
enum class AxpyType { fp64, fp32, fp16, bf16 };

/// Bytes per element of `t`.
constexpr int axpy_elem_bytes(AxpyType t) { return t == AxpyType::fp64 ? 8 : t == AxpyType::fp32 ? 4 : 2; }

/// out[i] = a * x[i] + y[i] for i in [0, n), elements of `type` (x, y, out 16-byte aligned, out
/// distinct from x and y; any n: 16-byte vectors for the bulk, a scalar tail). Written to its own
/// output (BabelStream's triad form) so that repeated launches leave the same result and a
/// poisoned output is caught; the bytes moved are y = a*x + y's. The FMA is one fused operation
/// in the compute type (fma in FP64, fmaf in FP32 with `a` rounded to float), then rounded to the
/// storage type (nearest even), so the host reference (axpy_element in
/// families/memory/reference.h) is exact.
int launch_axpy(AxpyType type, double a, const void* x, const void* y, void* out, std::size_t n, int sm_count,
                Stream stream);

/// Reads in[0..n) (16-byte loads for the bulk, any n) and writes one wrapping uint32 sum per
/// block into partial[0..blocks): their sum mod 2^32 is the sum of in[]. *blocks receives the
/// count used (1 <= blocks <= max_blocks; partial holds max_blocks words).
int launch_checksum(const std::uint32_t* in, std::size_t n, std::uint32_t* partial, int max_blocks, int* blocks,
                    int sm_count, Stream stream);

/// One step of the overlap pipeline's transform: a 32-bit LCG.
constexpr std::uint32_t transform_step(std::uint32_t x) { return x * 1664525u + 1013904223u; }
/// `rounds` steps applied to x: what transform leaves in each word.
constexpr std::uint32_t transform_word(std::uint32_t x, int rounds) {
  for (int r = 0; r < rounds; ++r) x = transform_step(x);
  return x;
}
/// `rounds` steps as one affine map x -> a * x + c (mod 2^32), composed by doubling in
/// O(log rounds): the host's check of a transform of ~1000 rounds over 64 Mi words (the overlap
/// rows on an H100) is one multiply-add per word instead of a minute's loop.
struct TransformMap {
  std::uint32_t a = 1, c = 0;
  constexpr std::uint32_t operator()(std::uint32_t x) const { return a * x + c; }
};
constexpr TransformMap transform_map(int rounds) {
  TransformMap result, power{1664525u, 1013904223u};  // identity; transform_step's map
  for (unsigned r = rounds > 0 ? static_cast<unsigned>(rounds) : 0u; r != 0; r >>= 1) {
    // The maps commute (all are powers of one step): result = power o result when the bit is set.
    if (r & 1u) result = TransformMap{power.a * result.a, power.a * result.c + power.c};
    power = TransformMap{power.a * power.a, power.a * power.c + power.c};
  }
  return result;
}
/// data[i] = transform_word(data[i], rounds) for i in [0, n), in place (rounds >= 0; the work
/// per word, which the overlap workload sizes so the kernel takes about as long as a chunk's copy).
int launch_transform(std::uint32_t* data, std::size_t n, int rounds, int sm_count, Stream stream);

}  // namespace gpubench::kernels
