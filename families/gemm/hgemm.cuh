// FP16-input, FP32-accumulate GEMM kernel bodies on tensor cores: C = A * B, row-major
// A (M x K, fp16), B (K x N, fp16), C (M x N, fp32), C overwritten.
// Work model: 2*M*N*K FLOP; minimal bytes MK*2 + KN*2 + MN*4 (harness/model gemm_work).
// Variants:
//   hgemm_mma_kernel   the fast kernel. 128x128 block tile, K step 32, 4 warps (2 x 2) each owning
//                      a 64x64 warp tile = 4 x 8 mma.sync m16n8k16 per k16 step, fed by 4
//                      ldmatrix.x4 (A) + 4 ldmatrix.x4.trans (B, row-major K x N): 8 shared-memory
//                      loads per 32 mma. Why 64x64: on A100 a k16 step of a 64x32 warp tile
//                      needs about as many shared-memory cycles (6 ldmatrix + its share of the
//                      cp.async stores, ~32 SM cycles at 128 B/cycle) as tensor cycles (16 mma,
//                      32 SM cycles), so shared memory would cap it; 64x64 needs ~48 for 64.
//                      The cost is ~240 registers per thread: 2 blocks of 128 threads per SM.
//                      Operands move global -> shared with 16-byte cp.async through a
//                      kStages-deep ring (one commit group per K step, wait_group kStages-2).
//                      Both shared tiles are XOR-swizzled on 16-byte chunks so that cp.async
//                      stores and every ldmatrix phase hit 8 distinct bank groups (no conflicts,
//                      no padding). Blocks are rasterised in groups of kGroupM tile rows for L2
//                      reuse. Any M; N, K multiples of 8 (16-byte rows); partial tiles zero-filled
//                      by cp.async.
//   hgemm_wmma_kernel  the simple baseline: nvcuda::wmma 16x16x16 fragments, the same 128x128
//                      block tile over 8 warps of 64x32, one padded shared-memory stage loaded
//                      synchronously. Under the host emulation nvcuda::wmma comes from
//                      kernels/wmma_emulation.h (its own documented fragment layout: the API
//                      never exposes the hardware's), so its tiling and addressing are tested.
// Both kernels compile with nvcc and, under the host SIMT shim, with g++: warp_ops.cuh emulates
// mma.sync, ldmatrix and cp.async there, so the tests run these whole kernels on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/simt/simt.h"  // nothing but GPUBENCH_UNROLL and GPUBENCH_DYNAMIC_SHARED under nvcc
#include "kernels/warp_ops.cuh"

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#include <mma.h>
#else
#include "kernels/wmma_emulation.h"  // nvcuda::wmma for the host emulation (its own fragment layout)
#endif

namespace gpubench::kernels::hgemm {

constexpr int kBlockM = 128;  ///< rows of C per block
constexpr int kBlockN = 128;  ///< columns of C per block
constexpr int kBlockK = 32;   ///< K extent of one pipeline stage
constexpr int kStages = 4;    ///< cp.async ring depth (kStages-1 tiles in flight while computing)
constexpr int kWarpsM = 2;    ///< warps along M
constexpr int kWarpsN = 2;    ///< warps along N
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWarpM = kBlockM / kWarpsM;  ///< 64 rows per warp
constexpr int kWarpN = kBlockN / kWarpsN;  ///< 64 columns per warp
constexpr int kMmaM = kWarpM / 16;         ///< m16 tiles per warp
constexpr int kMmaN = kWarpN / 8;          ///< n8 tiles per warp
constexpr int kGroupM = 8;                 ///< tile rows per rasterisation group
constexpr int kMinBlocksPerSm = 2;         ///< __launch_bounds__ target: 2 x 128 threads, <= 255 registers
constexpr int kStageHalvesA = kBlockM * kBlockK;
constexpr int kStageHalvesB = kBlockK * kBlockN;
constexpr int kStageHalves = kStageHalvesA + kStageHalvesB;
/// Dynamic shared memory per block: kStages x (A tile + B tile) fp16.
constexpr std::size_t kSmemBytes = static_cast<std::size_t>(kStages) * kStageHalves * 2;

static_assert(kBlockK == 32, "the A swizzle below assumes 4 chunks of 8 halves per row");
static_assert(kBlockN == 128, "the B swizzle below assumes 16 chunks of 8 halves per row");

/// Offset in halves of 16-byte chunk `chunk` (0..3) of row `row` of an A stage ([128][32]).
/// Physical chunk = chunk ^ ((row >> 1) & 3): the 8 rows an ldmatrix phase reads (same logical
/// chunk, rows 64 bytes apart) land in 8 distinct 16-byte bank groups.
__device__ __forceinline__ constexpr int a_smem_offset(int row, int chunk) {
  return row * kBlockK + ((chunk ^ ((row >> 1) & 3)) * 8);
}

/// Offset in halves of chunk `chunk` (0..15) of k-row `krow` of a B stage ([32][128]).
/// Physical chunk = chunk ^ (krow & 7): the 8 k-rows of one ldmatrix.trans matrix (same chunk,
/// rows 256 bytes apart) land in 8 distinct bank groups.
__device__ __forceinline__ constexpr int b_smem_offset(int krow, int chunk) {
  return krow * kBlockN + ((chunk ^ (krow & 7)) * 8);
}

/// Blocks of the mma kernel (a 1-D grid, rasterised inside the kernel).
constexpr unsigned mma_grid_blocks(int m, int n) {
  return static_cast<unsigned>(((m + kBlockM - 1) / kBlockM) * ((n + kBlockN - 1) / kBlockN));
}

/// Block tile (row, column) of linear block `pid`: groups of kGroupM tile rows are walked
/// column by column, so blocks resident together share A rows and B columns in L2.
__device__ __forceinline__ void block_tile(int pid, int m, int n, int& tile_m, int& tile_n) {
  const int tiles_m = (m + kBlockM - 1) / kBlockM;
  const int tiles_n = (n + kBlockN - 1) / kBlockN;
  const int per_group = kGroupM * tiles_n;
  const int group = pid / per_group;
  const int first_m = group * kGroupM;
  const int rows_in_group = (tiles_m - first_m) < kGroupM ? (tiles_m - first_m) : kGroupM;
  const int in_group = pid % per_group;
  tile_m = first_m + in_group % rows_in_group;
  tile_n = in_group / rows_in_group;
}

/// Issues the cp.async copies of K tile `kt` into stage buffers sa/sb (2 chunks of A and 2 of B
/// per thread); chunks outside the matrix are zero-filled.
__device__ __forceinline__ void load_stage(std::uint16_t* sa, std::uint16_t* sb, const std::uint16_t* __restrict__ a,
                                           const std::uint16_t* __restrict__ b, int m, int n, int k, int block_m,
                                           int block_n, int kt) {
  const int tid = static_cast<int>(threadIdx.x);
  GPUBENCH_UNROLL
  for (int i = 0; i < kStageHalvesA / 8 / kThreads; ++i) {
    const int id = tid + i * kThreads;
    const int row = id / (kBlockK / 8);
    const int chunk = id % (kBlockK / 8);
    const int grow = block_m + row;
    const int gk = kt * kBlockK + chunk * 8;
    const bool ok = grow < m && gk < k;
    const std::uint16_t* src = ok ? a + static_cast<std::size_t>(grow) * k + gk : a;
    warp::cp_async_16(sa + a_smem_offset(row, chunk), src, ok ? 16u : 0u);
  }
  GPUBENCH_UNROLL
  for (int i = 0; i < kStageHalvesB / 8 / kThreads; ++i) {
    const int id = tid + i * kThreads;
    const int krow = id / (kBlockN / 8);
    const int chunk = id % (kBlockN / 8);
    const int gk = kt * kBlockK + krow;
    const int gn = block_n + chunk * 8;
    const bool ok = gk < k && gn < n;
    const std::uint16_t* src = ok ? b + static_cast<std::size_t>(gk) * n + gn : b;
    warp::cp_async_16(sb + b_smem_offset(krow, chunk), src, ok ? 16u : 0u);
  }
}

/// C = A * B on tensor cores (see the file comment). Block kThreads, 1-D grid of
/// mma_grid_blocks(m, n), kSmemBytes of dynamic shared memory.
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    hgemm_mma_kernel(const std::uint16_t* __restrict__ a, const std::uint16_t* __restrict__ b, float* __restrict__ c,
                     int m, int n, int k) {
#if defined(__CUDACC__)
  extern __shared__ __align__(128) std::uint16_t smem[];
#else
  GPUBENCH_DYNAMIC_SHARED(std::uint16_t, smem);  // launch_with_smem(..., kSmemBytes, ...)
#endif
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32;
  const int warp_id = tid / 32;
  const int warp_m = (warp_id / kWarpsN) * kWarpM;  // warp's first row in the block tile
  const int warp_n = (warp_id % kWarpsN) * kWarpN;  // warp's first column in the block tile
  int tile_m = 0;
  int tile_n = 0;
  block_tile(static_cast<int>(blockIdx.x), m, n, tile_m, tile_n);
  const int block_m = tile_m * kBlockM;
  const int block_n = tile_n * kBlockN;
  const int ktiles = (k + kBlockK - 1) / kBlockK;

  float acc[kMmaM][kMmaN][4];
  GPUBENCH_UNROLL
  for (int i = 0; i < kMmaM; ++i) {
    GPUBENCH_UNROLL
    for (int j = 0; j < kMmaN; ++j) {
      GPUBENCH_UNROLL
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
    }
  }

  // Prologue: kStages-1 tiles in flight, one commit group each (empty groups past the end keep
  // the group count, and so the wait below, uniform).
  GPUBENCH_UNROLL
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ktiles)
      load_stage(smem + s * kStageHalves, smem + s * kStageHalves + kStageHalvesA, a, b, m, n, k, block_m, block_n, s);
    warp::cp_async_commit();
  }

  // ldmatrix row addresses of this lane. A (x4): lanes 0-15 rows 0-15 of the m16 tile at k
  // chunk 0, lanes 16-31 the same rows at chunk 1 -> registers a0..a3 in mma order.
  // B (x4.trans): lanes 0-7 k rows 0-7 and lanes 8-15 k rows 8-15 of n columns 0-7, lanes 16-31
  // the same for columns 8-15 -> b0, b1 of two adjacent n8 tiles.
  const int a_ld_row = lane % 16;
  const int a_ld_chunk = lane / 16;
  const int b_ld_krow = lane % 16;
  const int b_ld_chunk = lane / 16;

  for (int kt = 0; kt < ktiles; ++kt) {
    warp::cp_async_wait<kStages - 2>();  // this thread's copies of tile kt have landed
    __syncthreads();                     // ... and everyone's; stage (kt-1) % kStages is free
    const int next = kt + kStages - 1;
    if (next < ktiles) {
      const int ns = next % kStages;
      load_stage(smem + ns * kStageHalves, smem + ns * kStageHalves + kStageHalvesA, a, b, m, n, k, block_m, block_n,
                 next);
    }
    warp::cp_async_commit();

    const std::uint16_t* sa = smem + (kt % kStages) * kStageHalves;
    const std::uint16_t* sb = sa + kStageHalvesA;
    GPUBENCH_UNROLL
    for (int kk = 0; kk < kBlockK / 16; ++kk) {
      std::uint32_t af[kMmaM][4];
      std::uint32_t bf[kMmaN][2];
      GPUBENCH_UNROLL
      for (int i = 0; i < kMmaM; ++i) {
        const int row = warp_m + i * 16 + a_ld_row;
        warp::ldmatrix_x4(af[i], sa + a_smem_offset(row, kk * 2 + a_ld_chunk));
      }
      GPUBENCH_UNROLL
      for (int j = 0; j < kMmaN; j += 2) {
        std::uint32_t r[4];
        const int chunk = (warp_n + j * 8) / 8 + b_ld_chunk;
        warp::ldmatrix_x4_trans(r, sb + b_smem_offset(kk * 16 + b_ld_krow, chunk));
        bf[j][0] = r[0];
        bf[j][1] = r[1];
        bf[j + 1][0] = r[2];
        bf[j + 1][1] = r[3];
      }
      GPUBENCH_UNROLL
      for (int i = 0; i < kMmaM; ++i) {
        GPUBENCH_UNROLL
        for (int j = 0; j < kMmaN; ++j) warp::mma_m16n8k16(acc[i][j], af[i], bf[j]);
      }
    }
  }
  warp::cp_async_wait<0>();  // only empty groups remain; leave nothing in flight at exit

  // Epilogue: accumulator element e of lane (g, t) is row g (+8 for e >= 2), column 2t + (e & 1)
  // of its m16 x n8 tile; each pair of columns is one 8-byte store, four lanes fill a sector.
  const int g = lane / 4;
  const int t = lane % 4;
  GPUBENCH_UNROLL
  for (int i = 0; i < kMmaM; ++i) {
    GPUBENCH_UNROLL
    for (int j = 0; j < kMmaN; ++j) {
      const int col = block_n + warp_n + j * 8 + 2 * t;
      if (col >= n) continue;  // n is a multiple of 8, so col + 1 < n as well
      GPUBENCH_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int row = block_m + warp_m + i * 16 + g + 8 * h;
        if (row < m) {
          float* dst = c + static_cast<std::size_t>(row) * n + col;
          *reinterpret_cast<float2*>(dst) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        }
      }
    }
  }
}

/// Padded row lengths (halves) of the WMMA kernel's tiles: +8 halves = +16 bytes per row breaks
/// the power-of-two row stride that would put a fragment's rows in the same banks.
constexpr int kWmmaLdA = kBlockK + 8;
constexpr int kWmmaLdB = kBlockN + 8;

constexpr int kWmmaWarpsN = 4;  ///< WMMA baseline: 2 x 4 warps of 64 x 32
constexpr int kWmmaThreads = 32 * 2 * kWmmaWarpsN;
constexpr int kWmmaWarpM = kBlockM / 2;
constexpr int kWmmaWarpN = kBlockN / kWmmaWarpsN;

/// Shared memory of the WMMA kernel: one stage.
struct alignas(128) WmmaSmem {
  __half a[kBlockM * kWmmaLdA];
  __half b[kBlockK * kWmmaLdB];
};

/// One 16-byte copy: a 128-bit load and store on the GPU; memcpy on the host, where the punned
/// uint4 access would break strict aliasing.
__device__ __forceinline__ void copy_16_bytes(void* dst, const void* src) {
#if defined(__CUDACC__)
  *static_cast<uint4*>(dst) = *static_cast<const uint4*>(src);
#else
  std::memcpy(dst, src, 16);
#endif
}

/// C = A * B with nvcuda::wmma (baseline). M, N multiples of 128, K a multiple of 32.
/// Block kWmmaThreads, grid (n / 128, m / 128).
__global__ void __launch_bounds__(kWmmaThreads)
    hgemm_wmma_kernel(const __half* __restrict__ a, const __half* __restrict__ b, float* __restrict__ c, int m, int n,
                      int k) {
  namespace wmma = nvcuda::wmma;
  __shared__ WmmaSmem sm;
  const int tid = static_cast<int>(threadIdx.x);
  const int warp_id = tid / 32;
  const int warp_m = (warp_id / kWmmaWarpsN) * kWmmaWarpM;
  const int warp_n = (warp_id % kWmmaWarpsN) * kWmmaWarpN;
  const int block_m = static_cast<int>(blockIdx.y) * kBlockM;
  const int block_n = static_cast<int>(blockIdx.x) * kBlockN;
  (void)m;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kWmmaWarpM / 16][kWmmaWarpN / 16];
  GPUBENCH_UNROLL
  for (int i = 0; i < kWmmaWarpM / 16; ++i) {
    GPUBENCH_UNROLL
    for (int j = 0; j < kWmmaWarpN / 16; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  }

  for (int k0 = 0; k0 < k; k0 += kBlockK) {
    // 16-byte loads: A tile 128 x 32 and B tile 32 x 128 are 512 chunks each, 2 per thread.
    GPUBENCH_UNROLL
    for (int i = 0; i < 2; ++i) {
      const int id = tid + i * kWmmaThreads;
      const int ar = id / 4;
      const int ac = (id % 4) * 8;
      copy_16_bytes(&sm.a[ar * kWmmaLdA + ac], a + static_cast<std::size_t>(block_m + ar) * k + k0 + ac);
      const int br = id / 16;
      const int bc = (id % 16) * 8;
      copy_16_bytes(&sm.b[br * kWmmaLdB + bc], b + static_cast<std::size_t>(k0 + br) * n + block_n + bc);
    }
    __syncthreads();
    GPUBENCH_UNROLL
    for (int kk = 0; kk < kBlockK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[kWmmaWarpM / 16];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[kWmmaWarpN / 16];
      GPUBENCH_UNROLL
      for (int i = 0; i < kWmmaWarpM / 16; ++i)
        wmma::load_matrix_sync(fa[i], &sm.a[(warp_m + i * 16) * kWmmaLdA + kk], kWmmaLdA);
      GPUBENCH_UNROLL
      for (int j = 0; j < kWmmaWarpN / 16; ++j)
        wmma::load_matrix_sync(fb[j], &sm.b[kk * kWmmaLdB + warp_n + j * 16], kWmmaLdB);
      GPUBENCH_UNROLL
      for (int i = 0; i < kWmmaWarpM / 16; ++i) {
        GPUBENCH_UNROLL
        for (int j = 0; j < kWmmaWarpN / 16; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
  GPUBENCH_UNROLL
  for (int i = 0; i < kWmmaWarpM / 16; ++i) {
    GPUBENCH_UNROLL
    for (int j = 0; j < kWmmaWarpN / 16; ++j) {
      float* dst = c + static_cast<std::size_t>(block_m + warp_m + i * 16) * n + block_n + warp_n + j * 16;
      wmma::store_matrix_sync(dst, acc[i][j], static_cast<unsigned>(n), wmma::mem_row_major);
    }
  }
}

}  // namespace gpubench::kernels::hgemm
