// FP32 GEMM kernel bodies: C = A * B, row-major A (M x K), B (K x N), C (M x N), C overwritten.
// Work model: 2*M*N*K FLOP; minimal bytes (MK + KN + MN) * 4 (harness/model gemm_work).
// Variants:
//   sgemm_naive_kernel  one thread per element of C, operands straight from global memory: the
//                       correctness and teaching baseline, not a performance reference.
//   sgemm_tiled_kernel  128x128 block tile, K step 8, 256 threads each owning an 8x8 register
//                       tile (64 FFMA per 4 shared-memory vector loads), 128-bit global loads,
//                       A stored transposed in shared memory so each thread reads its 8 A values
//                       as two float4, shared memory double-buffered with a register prefetch of
//                       the next tile, so one __syncthreads per K step. Any M, N, K: partial tiles
//                       are predicated and rows that are not 16-byte aligned fall back to scalar
//                       loads and stores.
// These bodies compile with nvcc and, under the host SIMT shim (kernels/simt/simt.h), with g++
// for the emulation tests (tests/emulation/).
#pragma once

#include <cstdint>

#include "kernels/simt/simt.h"  // nothing but GPUBENCH_UNROLL under nvcc

#if !defined(__CUDACC__)
#include <cmath>
#endif

namespace gpubench::kernels::sgemm {

/// Tile of C per block of the tiled kernel.
constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
/// K extent of one shared-memory stage.
constexpr int kBlockK = 8;
/// Threads per block of the tiled kernel (16 x 16, each an 8x8 tile of C).
constexpr int kThreads = 256;
/// Blocks per SM the tiled kernel is compiled for (__launch_bounds__): 2 caps it at 128
/// registers. sm_120's ptxas spills at that cap, and its SM holds only 1536 threads anyway, so
/// there the kernel gets the registers of one block per SM instead.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1200
constexpr int kMinBlocksPerSm = 1;
#else
constexpr int kMinBlocksPerSm = 2;
#endif
/// Block edge of the naive kernel (kNaiveBlock x kNaiveBlock threads).
constexpr int kNaiveBlock = 16;

/// Blocks of the tiled kernel along N (grid.x) and M (grid.y).
constexpr unsigned tiled_grid_x(int n) { return static_cast<unsigned>((n + kBlockN - 1) / kBlockN); }
constexpr unsigned tiled_grid_y(int m) { return static_cast<unsigned>((m + kBlockM - 1) / kBlockM); }

/// 16-byte vector of the 128-bit loads and stores (the shim defines float4 for the host build).
using Vec4 = float4;

/// C = A * B, one thread per element. Block (kNaiveBlock, kNaiveBlock), grid covering N x M.
__global__ void sgemm_naive_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                   int m, int n, int k) {
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int i = 0; i < k; ++i) acc = fmaf(a[row * k + i], b[i * n + col], acc);
  c[row * n + col] = acc;
}

/// Floats of padding after each k row of the transposed A tile. The transposing stores of a warp
/// write 16 rows m at k and 16 at k + 4: unpadded, k and k + 4 start on the same bank and every
/// store was a 2-way conflict (ncu on an H100 counted exactly these, 4 extra wavefronts per warp
/// per K tile). Four floats move k + 4 by 16 banks and keep the rows 16-byte aligned for the
/// LDS.128 reads, which stay within one row.
constexpr int kAPad = 4;

/// Shared memory of the tiled kernel: two stages of A (transposed, [k][m], padded) and B ([k][n]).
struct alignas(16) SgemmSmem {
  float a[2][kBlockK][kBlockM + kAPad];
  float b[2][kBlockK][kBlockN];
};

/// One stage of global loads held in registers between the load and the shared-memory store.
struct SgemmPrefetch {
  Vec4 a;
  Vec4 b;
};

__device__ __forceinline__ float load_or_zero(const float* p, bool ok) { return ok ? *p : 0.0f; }

/// Loads this thread's part of K tile `kt`: A row tid/2, k (tid%2)*4..+3; B row tid/32,
/// n (tid%32)*4..+3. Out-of-range elements read as zero.
__device__ __forceinline__ SgemmPrefetch sgemm_load_tile(const float* __restrict__ a, const float* __restrict__ b,
                                                         int m, int n, int k, int block_m, int block_n, int kt,
                                                         bool vec_a, bool vec_b) {
  const int tid = static_cast<int>(threadIdx.x);
  SgemmPrefetch p;
  const int ar = block_m + tid / 2;
  const int ak = kt * kBlockK + (tid % 2) * 4;
  if (vec_a && ar < m && ak + 3 < k) {
    p.a = *reinterpret_cast<const Vec4*>(a + ar * k + ak);
  } else {
    const bool row_ok = ar < m;
    const float* src = a + (row_ok ? ar * k : 0);
    p.a.x = load_or_zero(src + ak, row_ok && ak < k);
    p.a.y = load_or_zero(src + ak + 1, row_ok && ak + 1 < k);
    p.a.z = load_or_zero(src + ak + 2, row_ok && ak + 2 < k);
    p.a.w = load_or_zero(src + ak + 3, row_ok && ak + 3 < k);
  }
  const int bk = kt * kBlockK + tid / 32;
  const int bn = block_n + (tid % 32) * 4;
  if (vec_b && bk < k && bn + 3 < n) {
    p.b = *reinterpret_cast<const Vec4*>(b + bk * n + bn);
  } else {
    const bool row_ok = bk < k;
    const float* src = b + (row_ok ? bk * n : 0);
    p.b.x = load_or_zero(src + bn, row_ok && bn < n);
    p.b.y = load_or_zero(src + bn + 1, row_ok && bn + 1 < n);
    p.b.z = load_or_zero(src + bn + 2, row_ok && bn + 2 < n);
    p.b.w = load_or_zero(src + bn + 3, row_ok && bn + 3 < n);
  }
  return p;
}

/// Writes a prefetched tile into stage `s`: A transposed (4 scalar stores), B as one float4.
__device__ __forceinline__ void sgemm_store_tile(SgemmSmem& sm, int s, const SgemmPrefetch& p) {
  const int tid = static_cast<int>(threadIdx.x);
  const int am = tid / 2;
  const int ak = (tid % 2) * 4;
  sm.a[s][ak + 0][am] = p.a.x;
  sm.a[s][ak + 1][am] = p.a.y;
  sm.a[s][ak + 2][am] = p.a.z;
  sm.a[s][ak + 3][am] = p.a.w;
  *reinterpret_cast<Vec4*>(&sm.b[s][tid / 32][(tid % 32) * 4]) = p.b;
}

/// Stores four consecutive values of C at (row, col..col+3), skipping columns past n.
__device__ __forceinline__ void sgemm_store_c4(float* __restrict__ c, int m, int n, int row, int col, bool vec_c,
                                               const float (&v)[4]) {
  if (row >= m) return;
  float* dst = c + row * n + col;
  if (vec_c && col + 3 < n) {
    Vec4 q;
    q.x = v[0];
    q.y = v[1];
    q.z = v[2];
    q.w = v[3];
    *reinterpret_cast<Vec4*>(dst) = q;
  } else {
    for (int j = 0; j < 4; ++j) {
      if (col + j < n) dst[j] = v[j];
    }
  }
}

/// C = A * B, tiled (see the file comment). Block kThreads, grid (tiled_grid_x(n), tiled_grid_y(m)).
/// Thread (tx, ty) = (tid % 16, tid / 16) owns rows ty*4 + {0..3, 64..67} and columns
/// tx*4 + {0..3, 64..67} of the block tile, so its shared-memory reads are two float4 per operand
/// and a warp's reads are broadcasts or conflict-free.
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    sgemm_tiled_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n,
                       int k) {
  __shared__ SgemmSmem sm;
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % 16;
  const int ty = tid / 16;
  const int block_m = static_cast<int>(blockIdx.y) * kBlockM;
  const int block_n = static_cast<int>(blockIdx.x) * kBlockN;
  // 128-bit accesses need rows that start on 16 bytes: true for the dense layouts here exactly
  // when the row length is a multiple of 4 floats and the base is 16-byte aligned.
  const bool vec_a = (k % 4 == 0) && (reinterpret_cast<std::uintptr_t>(a) % 16 == 0);
  const bool vec_b = (n % 4 == 0) && (reinterpret_cast<std::uintptr_t>(b) % 16 == 0);
  const bool vec_c = (n % 4 == 0) && (reinterpret_cast<std::uintptr_t>(c) % 16 == 0);
  const int ktiles = (k + kBlockK - 1) / kBlockK;

  float acc[8][8];
  GPUBENCH_UNROLL
  for (int i = 0; i < 8; ++i) {
    GPUBENCH_UNROLL
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  }

  SgemmPrefetch pre = sgemm_load_tile(a, b, m, n, k, block_m, block_n, 0, vec_a, vec_b);
  sgemm_store_tile(sm, 0, pre);
  __syncthreads();

  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt & 1;
    const bool more = kt + 1 < ktiles;
    // Issue the next tile's global loads before computing on this one, so their latency hides
    // behind 512 FFMA; they land in the other stage after the compute.
    if (more) pre = sgemm_load_tile(a, b, m, n, k, block_m, block_n, kt + 1, vec_a, vec_b);
    GPUBENCH_UNROLL
    for (int kk = 0; kk < kBlockK; ++kk) {
      const Vec4 a0 = *reinterpret_cast<const Vec4*>(&sm.a[s][kk][ty * 4]);
      const Vec4 a1 = *reinterpret_cast<const Vec4*>(&sm.a[s][kk][ty * 4 + 64]);
      const Vec4 b0 = *reinterpret_cast<const Vec4*>(&sm.b[s][kk][tx * 4]);
      const Vec4 b1 = *reinterpret_cast<const Vec4*>(&sm.b[s][kk][tx * 4 + 64]);
      const float af[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bf[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
      GPUBENCH_UNROLL
      for (int i = 0; i < 8; ++i) {
        GPUBENCH_UNROLL
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
      }
    }
    // The other stage was last read in iteration kt-1, which every thread finished before the
    // barrier that ended it: safe to overwrite now. One barrier per K step.
    if (more) sgemm_store_tile(sm, s ^ 1, pre);
    __syncthreads();
  }

  GPUBENCH_UNROLL
  for (int i = 0; i < 8; ++i) {
    const int row = block_m + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    const float lo[4] = {acc[i][0], acc[i][1], acc[i][2], acc[i][3]};
    const float hi[4] = {acc[i][4], acc[i][5], acc[i][6], acc[i][7]};
    sgemm_store_c4(c, m, n, row, block_n + tx * 4, vec_c, lo);
    sgemm_store_c4(c, m, n, row, block_n + 64 + tx * 4, vec_c, hi);
  }
}

}  // namespace gpubench::kernels::sgemm
