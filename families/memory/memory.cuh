// Kernels of the memory-management family: the __global__ bodies behind families/memory/memory.h.
//
// What they are for: the precision rows stream out = a*x + y (BabelStream's triad) in FP64,
// FP32, FP16 and BF16 and report GB/s, so the bandwidth a precision reaches, and whether its
// arithmetic keeps up with the memory, shows up beside the others; the checksum consumes memory
// that arrived by managed migration, a mapped host view or a copy; the transform is the compute
// stage of the copy/compute overlap pipeline.
// Bytes model (declared in the family's case table, not here): axpy = 3 x n x element bytes
// (x and y read, out written), checksum = 4n, transform = 8n (read and written in place).
// Variants: these hand-written kernels (`kernel`) only.
//
// Compiled by nvcc through memory.cu and by the host compiler under the SIMT emulation
// (kernels/simt/simt.h) for the emulation tests and gpubench_kernel_check_emulated, so: no
// CUDA-only syntax beyond the built-ins the shim provides, `#pragma unroll` spelled
// GPUBENCH_UNROLL, every kernel a template (one definition rule in both worlds), and the few
// device intrinsics (FMA, FP16/BF16 conversions, double <-> words) in small wrappers with a host
// twin.
//
// Shape of the streaming kernels: a grid-stride loop over 16-byte vectors (ld.global.v4 /
// st.global.v4). The vectors are taken in chunks of kUnroll x threads: in each full chunk every
// thread issues its kUnroll x (loads per vector) 16-byte loads before the first store, element
// u being `threads` vectors after element u-1, so every load instruction is coalesced across the
// warp; the partial last chunk goes one vector at a time; the elements past the last whole vector
// (fewer than one vector's worth) go one per thread.
//
// Rounding (axpy): every element is one fused multiply-add in the compute type, rounded once to
// the storage type, which is what memory::axpy_element (families/memory/reference.h) computes:
//  - FP64: DFMA; FP32: FFMA with `a` rounded to float by the launcher;
//  - FP16 and BF16: both inputs widened to float (exact), FFMA, then narrowed with round to
//    nearest even: on the device by cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 (two elements per
//    instruction; IEEE round to nearest even, subnormals kept: no .ftz), under the emulation by
//    the reference's own conversions. The device results equal the reference bit for bit for
//    every non-NaN result; a NaN result is a NaN on both sides, but its payload may differ (the
//    GPU's arithmetic and cvt return the canonical NaN, the host keeps payloads).
#pragma once

#include <cstddef>
#include <cstdint>

#include "families/memory/memory.h"
#include "kernels/grid.cuh"
#include "kernels/simt/simt.h"

#if !defined(__CUDACC__)
#include <cmath>
#include <cstring>

#include "families/memory/reference.h"
#include "kernels/half_bits.h"
#endif

namespace gpubench::kernels::memory_kernels {

/// Threads per block of every kernel here (the launchers and the contract use it).
constexpr int kBlockThreads = 256;
/// Vectors per thread per chunk in axpy: 2 vectors x (x and y) = four 16-byte loads in flight
/// per thread, 64 B x 2048 threads = 128 KiB per SM at full occupancy, far above what DRAM
/// latency x bandwidth needs (about 15-25 KiB per SM on H100/B200).
constexpr int kAxpyUnroll = 2;
/// 16-byte loads in flight per thread in the checksum (as the device-memory read kernel).
constexpr int kChecksumUnroll = 4;
/// Vectors per thread per chunk in the transform: 8 independent LCG chains per thread hide the
/// IMAD latency when `rounds` is large; two 16-byte loads in flight when it is small.
constexpr int kTransformUnroll = 2;

namespace detail {

// ---- arithmetic with a host twin (one rounding each, so both worlds give the same bits) ----

/// fma.rn.f64 (DFMA).
__device__ __forceinline__ double fma_f64(double a, double x, double y) {
#if defined(__CUDACC__)
  return __fma_rn(a, x, y);
#else
  return std::fma(a, x, y);
#endif
}

/// fma.rn.f32 (FFMA).
__device__ __forceinline__ float fma_f32(float a, float x, float y) {
#if defined(__CUDACC__)
  return __fmaf_rn(a, x, y);
#else
  return std::fmaf(a, x, y);
#endif
}

/// The double whose bits are hi:lo (a register move on the device).
__device__ __forceinline__ double f64_from_words(unsigned lo, unsigned hi) {
#if defined(__CUDACC__)
  return __hiloint2double(static_cast<int>(hi), static_cast<int>(lo));
#else
  const std::uint64_t bits = (static_cast<std::uint64_t>(hi) << 32) | lo;
  double d = 0;
  std::memcpy(&d, &bits, sizeof d);
  return d;
#endif
}

/// Low and high 32-bit words of a double's bits.
__device__ __forceinline__ void f64_to_words(double d, unsigned& lo, unsigned& hi) {
#if defined(__CUDACC__)
  lo = static_cast<unsigned>(__double2loint(d));
  hi = static_cast<unsigned>(__double2hiint(d));
#else
  std::uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof bits);
  lo = static_cast<unsigned>(bits);
  hi = static_cast<unsigned>(bits >> 32);
#endif
}

/// The float value of a binary16 bit pattern (exact).
__device__ __forceinline__ float half_to_float(std::uint16_t h) {
#if defined(__CUDACC__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  return half_bits_to_float(h);
#endif
}

/// The binary16 bit pattern nearest to f (round to nearest even).
__device__ __forceinline__ std::uint16_t float_to_half(float f) {
#if defined(__CUDACC__)
  std::uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  return float_to_half_bits(f);
#endif
}

/// Widens the two binary16 values of a word (element 2k in the low half, as memory holds them).
__device__ __forceinline__ void half2_to_floats(unsigned w, float& lo, float& hi) {
#if defined(__CUDACC__)
  asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;\n\t}"
      : "=f"(lo), "=f"(hi)
      : "r"(w));
#else
  lo = half_bits_to_float(static_cast<std::uint16_t>(w & 0xFFFFu));
  hi = half_bits_to_float(static_cast<std::uint16_t>(w >> 16));
#endif
}

/// Two floats narrowed to binary16 (round to nearest even) and packed, lo in the low half.
__device__ __forceinline__ unsigned floats_to_half2(float lo, float hi) {
#if defined(__CUDACC__)
  unsigned w;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));  // first source -> upper half
  return w;
#else
  return static_cast<unsigned>(float_to_half_bits(lo)) | (static_cast<unsigned>(float_to_half_bits(hi)) << 16);
#endif
}

/// The float value of a bfloat16 bit pattern (the upper half of a float: exact, no instruction).
__device__ __forceinline__ float bf16_to_float(std::uint16_t h) {
  return __uint_as_float(static_cast<unsigned>(h) << 16);
}

/// The bfloat16 bit pattern nearest to f (round to nearest even).
__device__ __forceinline__ std::uint16_t float_to_bf16(float f) {
#if defined(__CUDACC__)
  std::uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  return ::gpubench::memory::float_to_bf16_bits(f);
#endif
}

/// Two floats narrowed to bfloat16 (round to nearest even) and packed, lo in the low half.
__device__ __forceinline__ unsigned floats_to_bf16x2(float lo, float hi) {
#if defined(__CUDACC__)
  unsigned w;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));  // first source -> upper half
  return w;
#else
  return static_cast<unsigned>(::gpubench::memory::float_to_bf16_bits(lo)) |
         (static_cast<unsigned>(::gpubench::memory::float_to_bf16_bits(hi)) << 16);
#endif
}

/// out = a*x + y on one 32-bit word of two binary16 elements: widened, FFMA, narrowed.
__device__ __forceinline__ unsigned axpy_half2(float a, unsigned x, unsigned y) {
  float x0, x1, y0, y1;
  half2_to_floats(x, x0, x1);
  half2_to_floats(y, y0, y1);
  return floats_to_half2(fma_f32(a, x0, y0), fma_f32(a, x1, y1));
}

/// out = a*x + y on one 32-bit word of two bfloat16 elements: widened, FFMA, narrowed.
__device__ __forceinline__ unsigned axpy_bf16x2(float a, unsigned x, unsigned y) {
  const float x0 = __uint_as_float(x << 16), x1 = __uint_as_float(x & 0xFFFF0000u);
  const float y0 = __uint_as_float(y << 16), y1 = __uint_as_float(y & 0xFFFF0000u);
  return floats_to_bf16x2(fma_f32(a, x0, y0), fma_f32(a, x1, y1));
}

/// What the transform leaves in the four words of a vector.
__device__ __forceinline__ uint4 transform4(uint4 v, int rounds) {
  GPUBENCH_NO_UNROLL
  for (int r = 0; r < rounds; ++r) {
    v.x = transform_step(v.x);
    v.y = transform_step(v.y);
    v.z = transform_step(v.z);
    v.w = transform_step(v.w);
  }
  return v;
}

/// Wrapping sum over the block, valid in thread 0. blockDim.x must be kBlockThreads: warp
/// shuffles, then one value per warp through shared memory and a last shuffle in warp 0.
__device__ __forceinline__ std::uint32_t block_sum(std::uint32_t v) {
  constexpr int kWarps = kBlockThreads / 32;
  __shared__ std::uint32_t warp_sums[kWarps];
  GPUBENCH_UNROLL
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  const unsigned lane = threadIdx.x % 32u;
  const unsigned warp = threadIdx.x / 32u;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<unsigned>(kWarps) ? warp_sums[lane] : 0u;
    GPUBENCH_UNROLL
    for (int offset = kWarps / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}

/// Wrapping sum of a vector's four words.
__device__ __forceinline__ std::uint32_t sum4(uint4 v) { return v.x + v.y + v.z + v.w; }

}  // namespace detail

// ---- the element types of axpy: what a 16-byte vector holds and how each element is computed ----

/// FP64: two doubles per vector, DFMA.
struct AxpyFp64 {
  using Scalar = double;   ///< type of `a` in the kernel
  using Element = double;  ///< storage type of x, y, out
  static constexpr int kPerVector = 2;
  __device__ __forceinline__ static uint4 vector(double a, uint4 x, uint4 y) {
    uint4 r;
    detail::f64_to_words(detail::fma_f64(a, detail::f64_from_words(x.x, x.y), detail::f64_from_words(y.x, y.y)), r.x,
                         r.y);
    detail::f64_to_words(detail::fma_f64(a, detail::f64_from_words(x.z, x.w), detail::f64_from_words(y.z, y.w)), r.z,
                         r.w);
    return r;
  }
  __device__ __forceinline__ static double element(double a, double x, double y) { return detail::fma_f64(a, x, y); }
};

/// FP32: four floats per vector, FFMA.
struct AxpyFp32 {
  using Scalar = float;
  using Element = float;
  static constexpr int kPerVector = 4;
  __device__ __forceinline__ static unsigned word(float a, unsigned x, unsigned y) {
    return __float_as_uint(detail::fma_f32(a, __uint_as_float(x), __uint_as_float(y)));
  }
  __device__ __forceinline__ static uint4 vector(float a, uint4 x, uint4 y) {
    return make_uint4(word(a, x.x, y.x), word(a, x.y, y.y), word(a, x.z, y.z), word(a, x.w, y.w));
  }
  __device__ __forceinline__ static float element(float a, float x, float y) { return detail::fma_f32(a, x, y); }
};

/// FP16 (binary16 bit patterns): eight per vector, computed in FP32.
struct AxpyFp16 {
  using Scalar = float;
  using Element = std::uint16_t;
  static constexpr int kPerVector = 8;
  __device__ __forceinline__ static uint4 vector(float a, uint4 x, uint4 y) {
    return make_uint4(detail::axpy_half2(a, x.x, y.x), detail::axpy_half2(a, x.y, y.y), detail::axpy_half2(a, x.z, y.z),
                      detail::axpy_half2(a, x.w, y.w));
  }
  __device__ __forceinline__ static std::uint16_t element(float a, std::uint16_t x, std::uint16_t y) {
    return detail::float_to_half(detail::fma_f32(a, detail::half_to_float(x), detail::half_to_float(y)));
  }
};

/// BF16 (bfloat16 bit patterns): eight per vector, computed in FP32.
struct AxpyBf16 {
  using Scalar = float;
  using Element = std::uint16_t;
  static constexpr int kPerVector = 8;
  __device__ __forceinline__ static uint4 vector(float a, uint4 x, uint4 y) {
    return make_uint4(detail::axpy_bf16x2(a, x.x, y.x), detail::axpy_bf16x2(a, x.y, y.y),
                      detail::axpy_bf16x2(a, x.z, y.z), detail::axpy_bf16x2(a, x.w, y.w));
  }
  __device__ __forceinline__ static std::uint16_t element(float a, std::uint16_t x, std::uint16_t y) {
    return detail::float_to_bf16(detail::fma_f32(a, detail::bf16_to_float(x), detail::bf16_to_float(y)));
  }
};

// ---- kernels ----

/// out[i] = a*x[i] + y[i] for i in [0, n) elements of T (AxpyFp64/Fp32/Fp16/Bf16): n / kPerVector
/// 16-byte vectors, then the last n mod kPerVector elements one per thread. x, y, out 16-byte
/// aligned and not overlapping (__restrict__); 1-D blocks of kBlockThreads.
template <class T, int kUnroll>
__global__ void __launch_bounds__(kBlockThreads)
    axpy_kernel(typename T::Scalar a, const uint4* __restrict__ x, const uint4* __restrict__ y, uint4* __restrict__ out,
                std::size_t n) {
  const GridPosition g = grid_position();
  const std::size_t vectors = n / T::kPerVector;
  // Full chunks: a trip count uniform across the grid and walking pointers keep the loop at
  // few registers.
  const std::size_t chunk = kUnroll * g.threads;
  const std::size_t full_chunks = vectors / chunk;
  const uint4* xp = x + g.thread;
  const uint4* yp = y + g.thread;
  uint4* op = out + g.thread;
  GPUBENCH_NO_UNROLL
  for (std::size_t c = 0; c < full_chunks; ++c, xp += chunk, yp += chunk, op += chunk) {
    uint4 xv[kUnroll], yv[kUnroll];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) xv[u] = xp[u * g.threads];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) yv[u] = yp[u * g.threads];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) op[u * g.threads] = T::vector(a, xv[u], yv[u]);
  }
  GPUBENCH_NO_UNROLL
  for (std::size_t i = full_chunks * chunk + g.thread; i < vectors; i += g.threads) out[i] = T::vector(a, x[i], y[i]);
  // The tail: fewer than kPerVector elements, fewer than the threads of one block.
  const std::size_t e = vectors * T::kPerVector + g.thread;
  if (e < n) {
    using E = typename T::Element;
    reinterpret_cast<E*>(out)[e] = T::element(a, reinterpret_cast<const E*>(x)[e], reinterpret_cast<const E*>(y)[e]);
  }
}

/// Reads in[0..n) (4-byte aligned; the words before the first 16-byte boundary and after the
/// last one are read singly) and writes the block's wrapping sum to partial[blockIdx.x] (every
/// block writes one, 0 when it had no work). 1-D blocks of kBlockThreads.
template <int kUnroll>
__global__ void __launch_bounds__(kBlockThreads)
    checksum_kernel(const std::uint32_t* __restrict__ in, std::size_t n, std::uint32_t* __restrict__ partial) {
  const GridPosition g = grid_position();
  const std::size_t misaligned_words = (reinterpret_cast<std::uintptr_t>(in) & 15u) / 4u;
  std::size_t head = (4u - misaligned_words) & 3u;
  if (head > n) head = n;
  const std::size_t vectors = (n - head) / 4u;
  const std::size_t tail = head + vectors * 4u;  // head and tail: at most 3 words each
  std::uint32_t sum = 0;
  if (g.thread < head) sum += in[g.thread];
  if (tail + g.thread < n) sum += in[tail + g.thread];
  const uint4* v = reinterpret_cast<const uint4*>(in + head);
  const std::size_t chunk = kUnroll * g.threads;
  const std::size_t full_chunks = vectors / chunk;
  const uint4* vp = v + g.thread;
  GPUBENCH_NO_UNROLL
  for (std::size_t c = 0; c < full_chunks; ++c, vp += chunk) {
    uint4 r[kUnroll];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) r[u] = vp[u * g.threads];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) sum += detail::sum4(r[u]);
  }
  GPUBENCH_NO_UNROLL
  for (std::size_t i = full_chunks * chunk + g.thread; i < vectors; i += g.threads) sum += detail::sum4(v[i]);
  sum = detail::block_sum(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

/// data[i] = transform_word(data[i], rounds) for i in [0, n), in place (4-byte aligned; head and
/// tail words singly, the bulk as 16-byte vectors, kUnroll of them per thread per chunk).
/// rounds >= 0 (0 reads and writes every word unchanged). 1-D blocks of kBlockThreads.
template <int kUnroll>
__global__ void __launch_bounds__(kBlockThreads)
    transform_kernel(std::uint32_t* __restrict__ data, std::size_t n, int rounds) {
  const GridPosition g = grid_position();
  const std::size_t misaligned_words = (reinterpret_cast<std::uintptr_t>(data) & 15u) / 4u;
  std::size_t head = (4u - misaligned_words) & 3u;
  if (head > n) head = n;
  const std::size_t vectors = (n - head) / 4u;
  const std::size_t tail = head + vectors * 4u;
  if (g.thread < head) data[g.thread] = transform_word(data[g.thread], rounds);
  if (tail + g.thread < n) data[tail + g.thread] = transform_word(data[tail + g.thread], rounds);
  uint4* v = reinterpret_cast<uint4*>(data + head);
  const std::size_t chunk = kUnroll * g.threads;
  const std::size_t full_chunks = vectors / chunk;
  uint4* vp = v + g.thread;
  GPUBENCH_NO_UNROLL
  for (std::size_t c = 0; c < full_chunks; ++c, vp += chunk) {
    uint4 r[kUnroll];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) r[u] = vp[u * g.threads];
    for (int k = 0; k < rounds; ++k) {  // the compiler may unroll it (runtime trip count)
      GPUBENCH_UNROLL
      for (int u = 0; u < kUnroll; ++u) {
        r[u].x = transform_step(r[u].x);
        r[u].y = transform_step(r[u].y);
        r[u].z = transform_step(r[u].z);
        r[u].w = transform_step(r[u].w);
      }
    }
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) vp[u * g.threads] = r[u];
  }
  GPUBENCH_NO_UNROLL
  for (std::size_t i = full_chunks * chunk + g.thread; i < vectors; i += g.threads)
    v[i] = detail::transform4(v[i], rounds);
}

}  // namespace gpubench::kernels::memory_kernels
