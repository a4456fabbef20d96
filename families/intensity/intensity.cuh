// Kernel bodies of the roofline family (intensity sweep) and of the peak-FMA benchmarks.
// Compiled by nvcc (families/intensity/intensity.cu) and, unchanged, by g++ under the host SIMT shim
// (kernels/simt/simt.h) for the emulation tests.
//
// Every kernel applies the same recurrence to each element: x <- x * a + b, k times, in
// registers (families/intensity/reference.h states it in plain C++):
//  - intensity_fp32_kernel<K, kEvery>: loads each float, does K dependent FMAs on it (only on
//    elements whose index is a multiple of kEvery; kEvery = 2 gives half an FMA per element,
//    the 1/8 FLOP/byte point), stores it. 8 elements per thread per iteration (two 16-byte
//    loads), interleaved so 8 independent chains hide the FMA latency.
//    Work: 2 * K / kEvery FLOP and 8 bytes (4 read + 4 written) per element.
//  - intensity_fp16x2_kernel<K>: the same on packed half2 words with fma.rn.f16x2 (two FMA =
//    4 FLOP per instruction). Work: 4 * K FLOP and 8 bytes per half2 word.
//  - peak_fp32_kernel<kChains, kUnroll>, peak_fp16x2_kernel<...>: kChains independent chains per
//    thread held in registers, `rounds` x kUnroll steps each (a runtime loop around a fully
//    unrolled body), loaded once and stored once (so the compiler cannot drop the chains): the
//    empirical compute ceiling.
//
// FMA-count contract (tests/contract, read from the PTX): K is a template parameter and the
// step loop is unrolled up to B = min(K, kMaxUnrolledSteps) steps (a rolled loop of K / B rounds
// around it beyond that), so each instantiation's body holds an exact FMA count:
//  intensity fp32:   B * (8 / kEvery) in the vector loop + 1 in the scalar tail's step loop
//                    (kept rolled with `#pragma unroll 1`: the tail is under one tile);
//  intensity fp16x2: B * 8 in the vector loop + 1 in the tail's step loop;
//  peak:             kChains * kUnroll in the (rolled) rounds loop.
#pragma once

#include <cstddef>
#include <cstdint>

#if !defined(__CUDACC__)
#include "families/intensity/reference.h"
#include "kernels/simt/simt.h"
#endif

// Loop pragmas for nvcc only (g++ warns on `#pragma unroll`, and the emulation needs none).
// Undefined again at the end of this header.
#if defined(__CUDACC__)
#define GPUBENCH_INTENSITY_UNROLLED _Pragma("unroll")
#define GPUBENCH_INTENSITY_ROLLED _Pragma("unroll 1")
#else
#define GPUBENCH_INTENSITY_UNROLLED
#define GPUBENCH_INTENSITY_ROLLED
#endif

namespace gpubench::kernels::intensity {

/// Threads per block of every kernel here (the launchers and the contract use it).
constexpr int kBlockThreads = 256;
/// 16-byte vectors per thread per iteration of the sweep kernels (8 elements, 8 chains).
constexpr int kVectorsPerThread = 2;
/// The longest FMA chain segment written out in straight-line code (see chain_body_steps).
constexpr int kMaxUnrolledSteps = 32;
/// Independent chains per thread and unrolled steps per round of the peak kernels: 8, as in the
/// sweep. On an H100 SXM 4 chains reached the FP32 peak (98.9 %) but only 93.4 TFLOPS of FP16x2,
/// where the sweep's 8 chains reached 128.5 (results/h100_80gb_hbm3-*/VALIDATION.md): HFMA2 needs
/// more independent work per thread than FFMA. 64 steps amortise the loop branch; the tile
/// (256 x 8 elements) stays small beside the rows' 64M elements, so tiles spread evenly over the SMs.
constexpr int kPeakChains = 8;
/// Steps per round of the peak kernels (the fully unrolled body of the rolled rounds loop).
constexpr int kPeakUnroll = 64;

/// fma.rn.f32: one rounding, so the host reference reproduces it bit for bit.
__device__ __forceinline__ float fma_f32(float x, float a, float b) {
#if defined(__CUDACC__)
  return __fmaf_rn(x, a, b);
#else
  return fma_step_f32(x, a, b);
#endif
}

/// fma.rn.f16x2 on packed half2 words (low half in bits 0..15). Inline PTX so the instruction is
/// exactly the one counted by the contract and no cuda_fp16.h type leaks into the interface.
__device__ __forceinline__ std::uint32_t fma_f16x2(std::uint32_t x, std::uint32_t a, std::uint32_t b) {
#if defined(__CUDACC__)
  std::uint32_t r;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(a), "r"(b));
  return r;
#else
  return fma_step_f16x2(x, a, b);
#endif
}

/// K steps on each of N interleaved chains (only chains whose index is a multiple of kEvery):
/// the step loop is outside so consecutive FMAs are independent.
/// Chains longer than kMaxBody (kMaxUnrolledSteps for the sweep; the peak kernels keep their
/// 64-step bodies) run as a rolled loop of K / kMaxBody rounds around an unrolled body: fully unrolled, K = 2048 on 8
/// chains was 16k FFMA (256 KiB of SASS), beyond the SM's instruction caches, and measured 65-72 % of the FP32 peak on
/// an H100 against 94 % at K = 256 (results/h100_80gb_hbm3-*/VALIDATION.md).
template <int K, int kMaxBody>
constexpr int chain_body_steps() {
  return K > kMaxBody ? kMaxBody : K;
}

template <int K, int kEvery, int kMaxBody, int N>
__device__ __forceinline__ void fma_chains_f32(float (&v)[N], float a, float b) {
  constexpr int kBody = chain_body_steps<K, kMaxBody>();
  static_assert(K % kBody == 0, "K is a whole number of bodies");
  GPUBENCH_INTENSITY_ROLLED
  for (int r = 0; r < K / kBody; ++r) {
    GPUBENCH_INTENSITY_UNROLLED
    for (int s = 0; s < kBody; ++s) {
      GPUBENCH_INTENSITY_UNROLLED
      for (int e = 0; e < N; e += kEvery) v[e] = fma_f32(v[e], a, b);
    }
  }
}

/// K fma.rn.f16x2 steps on each of N interleaved half2 chains.
template <int K, int kMaxBody, int N>
__device__ __forceinline__ void fma_chains_f16x2(std::uint32_t (&v)[N], std::uint32_t a, std::uint32_t b) {
  constexpr int kBody = chain_body_steps<K, kMaxBody>();
  static_assert(K % kBody == 0, "K is a whole number of bodies");
  GPUBENCH_INTENSITY_ROLLED
  for (int r = 0; r < K / kBody; ++r) {
    GPUBENCH_INTENSITY_UNROLLED
    for (int s = 0; s < kBody; ++s) {
      GPUBENCH_INTENSITY_UNROLLED
      for (int e = 0; e < N; ++e) v[e] = fma_f16x2(v[e], a, b);
    }
  }
}

/// out[i] = K steps of x <- x * a + b from in[i] when i % kEvery == 0, else in[i]; i in [0, n).
/// in/out 16-byte aligned. Grid-stride over tiles of blockDim.x * 8 elements, then a scalar
/// grid-stride tail over the last n mod tile elements.
template <int K, int kEvery>
__global__ void __launch_bounds__(kBlockThreads)
    intensity_fp32_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t n, float a, float b) {
  static_assert(K >= 1 && (kEvery == 1 || kEvery == 2), "K >= 1 steps, every element or every other");
  constexpr int kElems = 4 * kVectorsPerThread;
  const std::size_t tile = static_cast<std::size_t>(blockDim.x) * kElems;
  const std::size_t tiles = n / tile;
  const float4* in4 = reinterpret_cast<const float4*>(in);
  float4* out4 = reinterpret_cast<float4*>(out);
  GPUBENCH_INTENSITY_ROLLED
  for (std::size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    // Vector j of a thread is at tile-relative float4 index j * blockDim.x + threadIdx.x, so each
    // load instruction of a warp covers 512 contiguous bytes.
    const std::size_t base = t * (tile / 4) + threadIdx.x;
    float v[kElems];
    GPUBENCH_INTENSITY_UNROLLED
    for (int j = 0; j < kVectorsPerThread; ++j) {
      const float4 q = in4[base + static_cast<std::size_t>(j) * blockDim.x];
      v[4 * j] = q.x;
      v[4 * j + 1] = q.y;
      v[4 * j + 2] = q.z;
      v[4 * j + 3] = q.w;
    }
    // Element 4j+c sits at an index congruent to c mod 4, so "index % kEvery == 0" is
    // "position in v % kEvery == 0" for kEvery in {1, 2}.
    fma_chains_f32<K, kEvery, kMaxUnrolledSteps>(v, a, b);
    GPUBENCH_INTENSITY_UNROLLED
    for (int j = 0; j < kVectorsPerThread; ++j) {
      out4[base + static_cast<std::size_t>(j) * blockDim.x] =
          make_float4(v[4 * j], v[4 * j + 1], v[4 * j + 2], v[4 * j + 3]);
    }
  }
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  GPUBENCH_INTENSITY_ROLLED
  for (std::size_t i = tiles * tile + static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float x = in[i];
    if (i % kEvery == 0) {
      GPUBENCH_INTENSITY_ROLLED
      for (int s = 0; s < K; ++s) x = fma_f32(x, a, b);
    }
    out[i] = x;
  }
}

/// out[i] = K fma.rn.f16x2 steps of x <- x * a + b from the half2 word in[i]; i in [0, n) words.
/// Same tiling as the FP32 kernel (16-byte vectors of 4 words).
template <int K>
__global__ void __launch_bounds__(kBlockThreads)
    intensity_fp16x2_kernel(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out, std::size_t n,
                            std::uint32_t a, std::uint32_t b) {
  static_assert(K >= 1, "K >= 1 steps");
  constexpr int kElems = 4 * kVectorsPerThread;
  const std::size_t tile = static_cast<std::size_t>(blockDim.x) * kElems;
  const std::size_t tiles = n / tile;
  const uint4* in4 = reinterpret_cast<const uint4*>(in);
  uint4* out4 = reinterpret_cast<uint4*>(out);
  GPUBENCH_INTENSITY_ROLLED
  for (std::size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::size_t base = t * (tile / 4) + threadIdx.x;
    std::uint32_t v[kElems];
    GPUBENCH_INTENSITY_UNROLLED
    for (int j = 0; j < kVectorsPerThread; ++j) {
      const uint4 q = in4[base + static_cast<std::size_t>(j) * blockDim.x];
      v[4 * j] = q.x;
      v[4 * j + 1] = q.y;
      v[4 * j + 2] = q.z;
      v[4 * j + 3] = q.w;
    }
    fma_chains_f16x2<K, kMaxUnrolledSteps>(v, a, b);
    GPUBENCH_INTENSITY_UNROLLED
    for (int j = 0; j < kVectorsPerThread; ++j) {
      out4[base + static_cast<std::size_t>(j) * blockDim.x] =
          make_uint4(v[4 * j], v[4 * j + 1], v[4 * j + 2], v[4 * j + 3]);
    }
  }
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  GPUBENCH_INTENSITY_ROLLED
  for (std::size_t i = tiles * tile + static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    std::uint32_t x = in[i];
    GPUBENCH_INTENSITY_ROLLED
    for (int s = 0; s < K; ++s) x = fma_f16x2(x, a, b);
    out[i] = x;
  }
}

/// Peak FP32 FMA rate: out[i] = rounds * kUnroll steps of x <- x * a + b from in[i], for i in
/// [0, n - n mod tile), tile = blockDim.x * kChains. Grid-stride over tiles; in a tile, thread t
/// owns the kChains elements c * blockDim.x + t (coalesced), held in registers for all rounds.
template <int kChains, int kUnroll>
__global__ void __launch_bounds__(kBlockThreads) peak_fp32_kernel(const float* __restrict__ in, float* __restrict__ out,
                                                                  std::size_t n, int rounds, float a, float b) {
  const std::size_t tile = static_cast<std::size_t>(blockDim.x) * kChains;
  const std::size_t tiles = n / tile;
  GPUBENCH_INTENSITY_ROLLED
  for (std::size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::size_t base = t * tile + threadIdx.x;
    float v[kChains];
    GPUBENCH_INTENSITY_UNROLLED
    for (int c = 0; c < kChains; ++c) v[c] = in[base + static_cast<std::size_t>(c) * blockDim.x];
    GPUBENCH_INTENSITY_ROLLED
    for (int r = 0; r < rounds; ++r) fma_chains_f32<kUnroll, 1, kUnroll>(v, a, b);
    GPUBENCH_INTENSITY_UNROLLED
    for (int c = 0; c < kChains; ++c) out[base + static_cast<std::size_t>(c) * blockDim.x] = v[c];
  }
}

/// Peak FP16x2 FMA rate: as peak_fp32_kernel on half2 words with fma.rn.f16x2.
template <int kChains, int kUnroll>
__global__ void __launch_bounds__(kBlockThreads)
    peak_fp16x2_kernel(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out, std::size_t n, int rounds,
                       std::uint32_t a, std::uint32_t b) {
  const std::size_t tile = static_cast<std::size_t>(blockDim.x) * kChains;
  const std::size_t tiles = n / tile;
  GPUBENCH_INTENSITY_ROLLED
  for (std::size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::size_t base = t * tile + threadIdx.x;
    std::uint32_t v[kChains];
    GPUBENCH_INTENSITY_UNROLLED
    for (int c = 0; c < kChains; ++c) v[c] = in[base + static_cast<std::size_t>(c) * blockDim.x];
    GPUBENCH_INTENSITY_ROLLED
    for (int r = 0; r < rounds; ++r) fma_chains_f16x2<kUnroll, kUnroll>(v, a, b);
    GPUBENCH_INTENSITY_UNROLLED
    for (int c = 0; c < kChains; ++c) out[base + static_cast<std::size_t>(c) * blockDim.x] = v[c];
  }
}

}  // namespace gpubench::kernels::intensity

#undef GPUBENCH_INTENSITY_UNROLLED
#undef GPUBENCH_INTENSITY_ROLLED
