// Device-memory bandwidth kernels: the __global__ bodies behind families/global_memory/global_memory.h.
//
// What they measure: how fast the SMs stream global memory (DRAM, or L2/L1 for small working
// sets) with coalesced 16-byte accesses (copy, read, write), how fast every SM re-reads one
// cache-resident set (block_set_read: the L1 when it fits), how useful bandwidth falls with the
// access stride (strided), random 4-byte gathers (gather) and dependent-load latency (chase).
// Bytes model (declared in harness/model/work_model.h, not here): copy = 2 x bytes (read +
// write), read = 4n, write = 4n, strided = 2 x 4 x ceil(n/stride) useful bytes with one 32-byte
// sector per element read and written from stride 8 on, gather = 4n (in) + 4n (idx) + 4n (out).
// Variants: these hand-written kernels (`kernel`); the library references (cudaMemcpyAsync,
// thrust::copy/gather, cub::DeviceReduce) live in library.cu and the CUDA backend.
//
// Compiled by nvcc through memory.cu and by the host compiler under the SIMT emulation
// (kernels/simt/simt.h) for the emulation tests, so: no CUDA-only syntax beyond the built-ins
// the shim provides, `#pragma unroll` spelled GPUBENCH_UNROLL, every kernel a template (one
// definition rule in both worlds).
//
// Shape of the streaming kernels: a grid-stride loop in which each thread issues kUnroll
// independent 16-byte loads before the first store, element u of an iteration being `threads`
// vectors after element u-1 so that every load instruction is coalesced across the warp. The
// loop bound is checked once per iteration (all kUnroll loads in range); the remainder runs one
// vector at a time. Bytes before the first 16-byte boundary (head) and after the last one
// (tail) are handled element by element, so any size and any 4-byte-aligned pointer works.
// The 16-byte loads of copy and read are ld.global.cg (__ldcg: cached in the L2, not the L1).
// Their grid re-reads its own slice of the set on every pass, so a cache-resident set of up to a
// few MiB, spread over the SMs, stayed in the L1s and its "l2" rows read the L1 (16 TB/s at
// 16 MiB on an H100, run 6); DRAM-sized sets pass through the L2 either way.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cstring>

#include "kernels/chase_ring.h"
#include "kernels/grid.cuh"
#include "kernels/seeded_words.h"
#include "kernels/simt/simt.h"

namespace gpubench::kernels {

/// Threads per block of every streaming kernel here (the contract and the launchers use it).
constexpr int kMemoryBlockThreads = 256;
/// 16-byte loads in flight per thread and iteration in the streaming kernels: 4 x 16 B x
/// 2048 threads = 128 KiB per SM in flight, enough to cover DRAM latency on A100/H100.
constexpr int kMemoryUnroll = 4;
/// Loads in flight per thread in the strided and gather kernels (4-byte elements).
constexpr int kGatherUnroll = 8;

namespace detail {

/// Elements of size `element_bytes` before the first 16-byte boundary at or after `p`,
/// clipped to n.
__device__ __forceinline__ std::size_t head_elements(const void* p, std::size_t element_bytes, std::size_t n) {
  const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(p) & 15u;
  const std::size_t head = ((16u - misalignment) & 15u) / element_bytes;
  return head < n ? head : n;
}

/// d[i] = s[i] for i in [0, n) vectors, kUnroll loads in flight per thread. The vectors are
/// taken in chunks of kUnroll x threads: in each full chunk every thread moves kUnroll vectors
/// `threads` apart (a trip count uniform across the grid and walking pointers keep the loop at
/// few registers on every architecture); the partial last chunk goes one vector at a time.
template <int kUnroll>
__device__ __forceinline__ void copy_vectors(const uint4* __restrict__ s, uint4* __restrict__ d, std::size_t n,
                                             GridPosition g) {
  const std::size_t chunk = kUnroll * g.threads;
  const std::size_t full_chunks = n / chunk;
  const uint4* sp = s + g.thread;
  uint4* dp = d + g.thread;
  GPUBENCH_NO_UNROLL
  for (std::size_t c = 0; c < full_chunks; ++c, sp += chunk, dp += chunk) {
    uint4 v[kUnroll];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcg(sp + u * g.threads);
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) dp[u * g.threads] = v[u];
  }
  GPUBENCH_NO_UNROLL
  for (std::size_t i = full_chunks * chunk + g.thread; i < n; i += g.threads) d[i] = s[i];
}

__device__ __forceinline__ std::uint32_t sum4(uint4 v) { return v.x + v.y + v.z + v.w; }

/// Wrapping sum over the block, valid in thread 0. blockDim.x must be a multiple of 32
/// (at most 1024): warp shuffles, then one value per warp through shared memory.
__device__ __forceinline__ std::uint32_t block_sum(std::uint32_t v) {
  __shared__ std::uint32_t warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  const unsigned lane = threadIdx.x % 32u;
  const unsigned warp = threadIdx.x / 32u;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32u ? warp_sums[lane] : 0u;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}

}  // namespace detail

/// dst[0..bytes) = src[0..bytes). When src and dst share their offset within 16 bytes (always
/// for cudaMalloc buffers) the bulk moves as 16-byte vectors with byte-wise head and tail;
/// otherwise no 16-byte access can be aligned for both, and the kernel copies byte by byte
/// (correct, slow: callers that want bandwidth pass co-aligned buffers). `passes` times, pass p
/// on the slot p mod slots, `slot_stride` bytes after the first (Passes in families/global_memory/global_memory.h).
template <int kUnroll>
__global__ void __launch_bounds__(kMemoryBlockThreads)
    copy_kernel(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, std::size_t bytes, int passes,
                int slots, std::size_t slot_stride) {
  const GridPosition g = grid_position();
  const std::uintptr_t relative = (reinterpret_cast<std::uintptr_t>(src) ^ reinterpret_cast<std::uintptr_t>(dst)) & 15u;
  // Slots are 256-byte multiples apart, so head, tail and alignment are those of slot 0.
  const std::size_t head = detail::head_elements(src, 1, bytes);
  const std::size_t vectors = (bytes - head) / 16u;
  const std::size_t tail = head + vectors * 16u;
  const unsigned char* s = src;
  unsigned char* d = dst;
  int slot = 0;
  GPUBENCH_NO_UNROLL
  for (int p = 0; p < passes; ++p) {
    if (relative != 0) {
      for (std::size_t i = g.thread; i < bytes; i += g.threads) d[i] = s[i];
    } else {
      for (std::size_t i = g.thread; i < head; i += g.threads) d[i] = s[i];
      for (std::size_t i = tail + g.thread; i < bytes; i += g.threads) d[i] = s[i];
      detail::copy_vectors<kUnroll>(reinterpret_cast<const uint4*>(s + head), reinterpret_cast<uint4*>(d + head),
                                    vectors, g);
    }
    // The next slot (walking pointers: fewer registers than recomputing p mod slots).
    if (++slot == slots) {
      slot = 0;
      s = src;
      d = dst;
    } else {
      s += slot_stride;
      d += slot_stride;
    }
  }
}

/// Reads in[0..n) and writes the block's wrapping sum to partial[blockIdx.x] (every block
/// writes one, 0 when it had no work), summed over `passes` passes, pass p reading the slot
/// p mod slots, `slot_stride_words` words after the first. blockDim.x: a multiple of 32.
template <int kUnroll>
__global__ void __launch_bounds__(kMemoryBlockThreads)
    read_kernel(const std::uint32_t* __restrict__ in, std::size_t n, std::uint32_t* __restrict__ partial, int passes,
                int slots, std::size_t slot_stride_words) {
  const GridPosition g = grid_position();
  const std::size_t head = detail::head_elements(in, 4, n);
  const std::size_t vectors = (n - head) / 4u;
  const std::size_t tail = head + vectors * 4u;
  std::uint32_t sum = 0;
  GPUBENCH_NO_UNROLL
  for (int p = 0; p < passes; ++p) {
    const std::uint32_t* slot = in + static_cast<std::size_t>(p % slots) * slot_stride_words;
    for (std::size_t i = g.thread; i < head; i += g.threads) sum += slot[i];
    for (std::size_t i = tail + g.thread; i < n; i += g.threads) sum += slot[i];
    const uint4* v = reinterpret_cast<const uint4*>(slot + head);
    std::size_t i = g.thread;
    GPUBENCH_NO_UNROLL
    for (; i + (kUnroll - 1) * g.threads < vectors; i += kUnroll * g.threads) {
      uint4 r[kUnroll];
      GPUBENCH_UNROLL
      for (int u = 0; u < kUnroll; ++u) r[u] = __ldcg(v + i + u * g.threads);
      GPUBENCH_UNROLL
      for (int u = 0; u < kUnroll; ++u) sum += detail::sum4(r[u]);
    }
    for (; i < vectors; i += g.threads) sum += detail::sum4(__ldcg(v + i));
  }
  sum = detail::block_sum(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

/// out[i] = seed + i (mod 2^32) for i in [0, n): 16-byte stores for the aligned bulk; `passes`
/// times, pass p on the slot p mod slots, `slot_stride_words` words after the first.
template <int kUnroll>
__global__ void __launch_bounds__(kMemoryBlockThreads)
    write_kernel(std::uint32_t* __restrict__ out, std::size_t n, std::uint32_t seed, int passes, int slots,
                 std::size_t slot_stride_words) {
  const GridPosition g = grid_position();
  const std::size_t head = detail::head_elements(out, 4, n);
  const std::size_t vectors = (n - head) / 4u;
  const std::size_t tail = head + vectors * 4u;
  const std::uint32_t base = seed + static_cast<std::uint32_t>(head);
  GPUBENCH_NO_UNROLL
  for (int p = 0; p < passes; ++p) {
    std::uint32_t* slot = out + static_cast<std::size_t>(p % slots) * slot_stride_words;
    for (std::size_t i = g.thread; i < head; i += g.threads) slot[i] = seed + static_cast<std::uint32_t>(i);
    for (std::size_t i = tail + g.thread; i < n; i += g.threads) slot[i] = seed + static_cast<std::uint32_t>(i);
    uint4* v = reinterpret_cast<uint4*>(slot + head);
    std::size_t i = g.thread;
    GPUBENCH_NO_UNROLL
    for (; i + (kUnroll - 1) * g.threads < vectors; i += kUnroll * g.threads) {
      GPUBENCH_UNROLL
      for (int u = 0; u < kUnroll; ++u) {
        const std::uint32_t b = base + 4u * static_cast<std::uint32_t>(i + u * g.threads);
        v[i + u * g.threads] = make_uint4(b, b + 1u, b + 2u, b + 3u);
      }
    }
    for (; i < vectors; i += g.threads) {
      const std::uint32_t b = base + 4u * static_cast<std::uint32_t>(i);
      v[i] = make_uint4(b, b + 1u, b + 2u, b + 3u);
    }
  }
}

/// out[j * stride] = in[j * stride] for every j with j * stride < n; other elements of out are
/// not touched. stride >= 1 (a smaller one does nothing).
template <int kUnroll>
__global__ void __launch_bounds__(kMemoryBlockThreads)
    strided_copy_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t n, int stride) {
  if (stride < 1) return;
  const GridPosition g = grid_position();
  const std::size_t s = static_cast<std::size_t>(stride);
  const std::size_t m = (n + s - 1) / s;  // elements touched
  std::size_t j = g.thread;
  GPUBENCH_NO_UNROLL
  for (; j + (kUnroll - 1) * g.threads < m; j += kUnroll * g.threads) {
    float v[kUnroll];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) v[u] = in[(j + u * g.threads) * s];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) out[(j + u * g.threads) * s] = v[u];
  }
  for (; j < m; j += g.threads) out[j * s] = in[j * s];
}

/// out[i] = in[idx[i]] for i in [0, n); the index loads are coalesced, the data loads random.
template <int kUnroll>
__global__ void __launch_bounds__(kMemoryBlockThreads)
    gather_kernel(const float* __restrict__ in, const std::uint32_t* __restrict__ idx, float* __restrict__ out,
                  std::size_t n) {
  const GridPosition g = grid_position();
  std::size_t i = g.thread;
  GPUBENCH_NO_UNROLL
  for (; i + (kUnroll - 1) * g.threads < n; i += kUnroll * g.threads) {
    std::uint32_t k[kUnroll];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) k[u] = idx[i + u * g.threads];
    float v[kUnroll];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) v[u] = in[k[u]];
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) out[i + u * g.threads] = v[u];
  }
  for (; i < n; i += g.threads) out[i] = in[idx[i]];
}

/// The per-SM cache read (l1_read rows): EVERY block reads all of in[0..n) `passes` times and
/// writes its wrapping sum to partial[blockIdx.x]. Each SM therefore re-reads one whole set,
/// which its L1 keeps while the set fits: where the streaming kernels spread a small set over a
/// few blocks (a 4 KiB set is one block's work), this keeps every SM busy at any size. `in` must
/// be 16-byte aligned and n a multiple of 4 (whole 16-byte vectors). blockDim.x: a multiple of 32.
template <int kUnroll>
__global__ void __launch_bounds__(kMemoryBlockThreads)
    block_set_read_kernel(const std::uint32_t* __restrict__ in, std::size_t n, std::uint32_t* __restrict__ partial,
                          int passes) {
  const uint4* v = reinterpret_cast<const uint4*>(in);
  const std::size_t vectors = n / 4u;
  const std::size_t threads = blockDim.x;
  std::uint32_t sum = 0;
  GPUBENCH_NO_UNROLL
  for (int p = 0; p < passes; ++p) {
    std::size_t i = threadIdx.x;
    GPUBENCH_NO_UNROLL
    for (; i + (kUnroll - 1) * threads < vectors; i += kUnroll * threads) {
      uint4 r[kUnroll];
      GPUBENCH_UNROLL
      for (int u = 0; u < kUnroll; ++u) r[u] = v[i + u * threads];
      GPUBENCH_UNROLL
      for (int u = 0; u < kUnroll; ++u) sum += detail::sum4(r[u]);
    }
    for (; i < vectors; i += threads) sum += detail::sum4(v[i]);
  }
  sum = detail::block_sum(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

/// Fills an input with the seeded data of kernels/seeded_words.h, so that no input is made on
/// the host (the host checks recompute it): kFloats false, the bytes / 4 words of seeded_word
/// then seeded_tail_byte for the bytes after them; true, the bytes / 4 floats of seeded_float.
/// `dst` 4-byte aligned. A grid-stride loop of 4-byte stores, coalesced across each warp.
template <bool kFloats>
__global__ void __launch_bounds__(kMemoryBlockThreads)
    seeded_fill_kernel(std::uint32_t* __restrict__ dst, std::size_t bytes, std::uint64_t seed) {
  const GridPosition g = grid_position();
  const std::size_t words = bytes / 4u;
  for (std::size_t i = g.thread; i < words; i += g.threads) {
    if (kFloats) {
      const float f = seeded_float(seed, i);
      std::uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);  // a register move under nvcc
      dst[i] = bits;
    } else {
      dst[i] = seeded_word(seed, i);
    }
  }
  if (!kFloats && g.thread == 0) {
    auto* tail = reinterpret_cast<unsigned char*>(dst + words);
    for (std::size_t t = 0; t < bytes % 4u; ++t) tail[t] = seeded_tail_byte(seed, words, t);
  }
}

/// Fills next[0..ring.n) with the pointer-chase ring of kernels/chase_ring.h: next[e] is the
/// entry after e on the ring, from the formula (no loads). A grid-stride loop of 4-byte stores,
/// coalesced across each warp; the cycle walks make threads of a warp take different numbers of
/// Feistel networks (fewer than 4 on average), which costs time, never coalescing.
__global__ void __launch_bounds__(kMemoryBlockThreads)
    chase_ring_fill_kernel(std::uint32_t* __restrict__ next, ChaseRing ring) {
  const GridPosition g = grid_position();
  for (std::size_t e = g.thread; e < ring.n; e += g.threads) next[e] = ring_next(ring, static_cast<std::uint32_t>(e));
}

/// One thread follows p = next[p] `steps` times from `start` (every load depends on the
/// previous one, so the loop time is steps x load latency); writes the final p to *sink and the
/// clock64() cycles of the loop to *cycles. The chain is unrolled by kUnroll to keep loop
/// overhead out of the per-step time. The last load's latency may fall outside the timed
/// window (the clock read need not wait for it): an error of one step in `steps`.
template <int kUnroll>
__global__ void __launch_bounds__(32)
    pointer_chase_kernel(const std::uint32_t* __restrict__ next, std::size_t steps, std::uint32_t start,
                         std::uint32_t* __restrict__ sink, long long* __restrict__ cycles) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  std::uint32_t p = start;
  const long long begin = clock64();
  std::size_t s = 0;
  for (; s + kUnroll <= steps; s += kUnroll) {
    GPUBENCH_UNROLL
    for (int u = 0; u < kUnroll; ++u) p = next[p];
  }
  for (; s < steps; ++s) p = next[p];
  const long long end = clock64();
  *sink = p;
  *cycles = end - begin;
}

}  // namespace gpubench::kernels
