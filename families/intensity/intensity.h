// Launchers of the roofline intensity-sweep kernels and the peak-FMA kernels
// (families/intensity/intensity.cu; bodies in families/intensity/intensity.cuh). A plain C++ header: no CUDA
// syntax, no CUDA include, so harness code compiled by the host compiler calls these.
//
// Every kernel maps in[i] to out[i] = k steps of x <- x * a + b (families/intensity/reference.h):
//  - FP32 sweep: k FMA per element, or one FMA on every other element (the half-FMA point);
//    2k FLOP and 8 bytes per element, so k / 4 FLOP/byte (1/8 for the half-FMA point).
//  - FP16x2 sweep: elements are packed half2 words (std::uint32_t bit patterns, low half first;
//    kernels/half_bits.h), k fma.rn.f16x2 per word = 4k FLOP per 8 bytes, k / 2 FLOP/byte.
//  - peak FP32 / FP16x2: the same recurrence with k = rounds * kPeakStepsPerRound, register
//    resident, for the empirical compute ceiling.
//
// Launcher conventions (as in families/global_memory/global_memory.h): return the cudaError_t of the launch as an int
// (0 = success; cudaErrorInvalidValue = 1 for arguments the kernel rejects), enqueue on `stream`
// and do not synchronize; buffers come from cudaMalloc (256-byte aligned).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

struct CUstream_st;  // cudaStream_t is `CUstream_st*`

namespace gpubench::kernels {

using Stream = CUstream_st*;

/// FMA counts per element the sweep kernels are instantiated for (powers of two: FP32 spans
/// 1/4..512 FLOP/byte, FP16x2 1/2..1024 FLOP/byte). Each is one template instantiation per
/// architecture, so the list is kept to what the roofline needs.
constexpr std::array<int, 12> kSweepFmaCounts = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048};

/// True when the FP32 sweep is instantiated for `fma_per_elem` FMAs on every `every`-th element
/// (every = 1 for all k in kSweepFmaCounts; every = 2 only with k = 1, the 1/8 FLOP/byte point).
constexpr bool intensity_fp32_supported(int fma_per_elem, int every) {
  if (every == 2) return fma_per_elem == 1;
  if (every != 1) return false;
  for (int k : kSweepFmaCounts) {
    if (k == fma_per_elem) return true;
  }
  return false;
}

/// True when the FP16x2 sweep is instantiated for `fma_per_elem` fma.rn.f16x2 per word.
constexpr bool intensity_fp16x2_supported(int fma_per_elem) { return intensity_fp32_supported(fma_per_elem, 1); }

/// Steps per round of the peak kernels (the unrolled body); a peak run does rounds x this many
/// steps per element.
constexpr int kPeakStepsPerRound = 64;
/// The sweep kernels unroll at most this many steps of a chain; longer chains are a rolled loop of
/// such bodies (the instruction contract counts the body).
constexpr int kSweepMaxUnrolledSteps = 32;
/// Elements per thread of the peak kernels (independent chains) times threads per block: the
/// peak kernels need n to be a multiple of this.
constexpr std::size_t kPeakTileElems = std::size_t{8} * 256;

/// Elements one block covers per iteration of the sweep kernels (256 threads x 8 elements).
constexpr std::size_t kSweepTileElems = std::size_t{256} * 8;

/// Grid of every launcher here: enough blocks to fill each SM at the kernel's occupancy
/// (`blocks_per_sm`, from the occupancy calculator), never more than `work_tiles` (tiles of
/// work; the kernels grid-stride over tiles), at least one. Pure, so it is unit tested.
constexpr std::size_t intensity_grid_blocks(std::size_t work_tiles, int blocks_per_sm, int sm_count) {
  const std::size_t wave = static_cast<std::size_t>(blocks_per_sm > 0 ? blocks_per_sm : 1) *
                           static_cast<std::size_t>(sm_count > 0 ? sm_count : 1);
  const std::size_t want = work_tiles > 0 ? work_tiles : 1;
  return want < wave ? want : wave;
}

/// Sweep tiles of n elements (a partial last tile counts: the kernels' tail covers it).
constexpr std::size_t intensity_sweep_tiles(std::size_t n) { return (n + kSweepTileElems - 1) / kSweepTileElems; }

/// Whether the peak launchers accept n elements and `rounds` rounds (whole tiles, >= 1 round).
constexpr bool peak_args_ok(std::size_t n, int rounds) { return n > 0 && n % kPeakTileElems == 0 && rounds >= 1; }

/// out[i] = fma_per_elem steps of x <- x * a + b from in[i] for i % every == 0, in[i] otherwise;
/// i in [0, n). Any n. in and out 16-byte aligned, not overlapping.
int launch_intensity_fp32(const float* in, float* out, std::size_t n, int fma_per_elem, int every, float a, float b,
                          int sm_count, Stream stream);

/// out[i] = fma_per_elem fma.rn.f16x2 steps from the half2 word in[i], coefficients a and b
/// given as half2 words; i in [0, n) words. Any n; 16-byte aligned buffers.
int launch_intensity_fp16x2(const std::uint32_t* in, std::uint32_t* out, std::size_t n, int fma_per_elem,
                            std::uint32_t a, std::uint32_t b, int sm_count, Stream stream);

/// Peak FP32: out[i] = rounds * kPeakStepsPerRound FMA steps from in[i], i in [0, n);
/// n a positive multiple of kPeakTileElems, rounds >= 1. One full wave of resident blocks.
int launch_peak_fp32(const float* in, float* out, std::size_t n, int rounds, float a, float b, int sm_count,
                     Stream stream);

/// Peak FP16x2: as launch_peak_fp32 on half2 words with fma.rn.f16x2.
int launch_peak_fp16x2(const std::uint32_t* in, std::uint32_t* out, std::size_t n, int rounds, std::uint32_t a,
                       std::uint32_t b, int sm_count, Stream stream);

}  // namespace gpubench::kernels
