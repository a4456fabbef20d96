// The Hopper-native FP16/BF16 GEMM kernel body (sm_90a): C = A * B with A (M x K) and B (K x N)
// row-major 16-bit inputs, FP32 accumulation and FP32 row-major C, as every GEMM of this family
// (families/gemm/gemm.h). Built by nvcc for sm_90a only (families/gemm/gemm_sm90.cu) and by g++
// under the host SIMT emulation, where kernels/wgmma.cuh and kernels/tma.cuh emulate the
// instructions, so the whole kernel runs on the CPU in tests.
//
// Why not mma.sync on Hopper: a 64x64 warp tile reads 4 KiB of shared memory through ldmatrix per
// k16 step for 65 536 multiply-adds, so the tensor rate needs all of the SM's 128 B/clock of
// shared memory before the copies into it; wgmma reads its operands from shared memory inside the
// tensor core, and the tensor memory accelerator (TMA) fills it without the threads.
//
// Structure (the warp-specialised, persistent design of CUTLASS's sm90 kernels, written afresh):
//  - Block tile 128 x 256, K step 64, kStages = 4 stages of 48 KiB in shared memory (192 KiB).
//  - 3 warpgroups of 128 threads. Warpgroup 0 is the producer: it drops to 40 registers
//    (setmaxnreg.dec) and one thread issues the TMA loads of each stage (A: one 64 x 128 box;
//    B: four 64 x 64 boxes), completing on the stage's `full` mbarrier with its byte count.
//    Warpgroups 1 and 2 are consumers: they raise their limit to 232 registers (setmaxnreg.inc),
//    wait on `full`, and each computes 64 rows x 256 columns of the tile with
//    wgmma.m64n256k16 (4 per stage, one commit group per stage, one group left in flight); once
//    wgmma.wait_group 1 says the previous stage's MMAs are done, every consumer thread arrives on
//    that stage's `empty` mbarrier, which the producer waits on before refilling it.
//    Register budget: 128 x 40 + 256 x 232 = 64 512 of the SM's 65 536.
//  - Shared-memory layouts (128-byte swizzle, as the TMA writes them): A is K-major, 128 rows of
//    64 elements (one 128-byte swizzle span per row); a consumer's descriptor starts at its 64
//    rows and steps 32 bytes per k16 inside the swizzled row. B is MN-major (B is K x N with N
//    contiguous): four boxes of 64 rows (k) x 64 columns (n); wgmma reads it transposed
//    (imm-trans-b = 1) with LBO = 8 KiB between the 64-column boxes and SBO = 1 KiB between
//    groups of 8 k rows, stepping 16 rows (2 KiB) per k16.
//  - Persistent: gridDim.x = min(SMs, tiles); block b takes tiles b, b + gridDim.x, ... in a
//    grouped raster (kGroupM tile rows per group, so concurrent blocks share A and B panels in
//    L2). The producer runs ahead into the next tile while the consumers store the current one.
//  - Partial tiles: the TMA zero-fills elements outside the tensor (any M; N and K multiples of 8
//    because each global row must be a multiple of 16 bytes); the epilogue stores only elements
//    inside C.
//  - Epilogue (Epilogue, below): by default each consumer warp writes its 16 rows of the tile 32
//    columns at a time into a 2 KiB box of shared memory (two per warp, 32 KiB in all, after the
//    stages) and one lane stores the box with the TMA (cp.async.bulk.tensor store, whole 128-byte
//    lines, clipped at C's edges), double buffered through bulk async-groups, so the stores drain
//    while the next tile's MMAs run. Epilogue::kDirect (the wgmma_direct_store row, to compare)
//    has every thread store its accumulator pairs to global memory itself.
//
// Clusters (kClusterM = 2): each block streams 48 KiB of operands from L2 per 4.2 MFLOP stage, so
// 132 blocks at the tensor rate read ~8 TB/s of L2, close to what an H100's L2 gives. Two blocks
// of a 2 x 1 cluster take vertically adjacent tiles (tile rows 2p and 2p + 1 of one column),
// which need the same B tile: each block's producer loads its own A box and HALF of B (two of the
// four 64-column boxes: ranks 0 and 1 take boxes 0-1 and 2-3), multicast to both blocks of the
// cluster, so L2 serves 16 + 16 KiB per block and stage instead of 16 + 32 (a third less). Every
// block's `full` barrier still expects the whole stage (A + all of B, 48 KiB): its own loads and
// the peer's multicast half complete on it. A stage is refilled only when the consumers of BOTH
// blocks have released it, since either producer writes into both: after its wgmma reads of a
// stage are done, each consumer warp (lanes converged by __syncwarp) arrives on that stage's
// `empty` barrier in every block of the cluster (lane r on rank r's, through mapa and a
// shared::cluster arrive; kernels/tma.cuh says why its semantics are the default .release.cta),
// so `empty` expects 2 ranks x 8 warps = 16 arrivals. The barriers are initialised, fenced
// (fence.mbarrier_init.release.cluster) and the cluster barrier passed before any block touches a
// peer's; at the end every thread passes the cluster barrier again (arrive.release), so no block
// exits while its peer may still arrive on its barriers (the consumers' last releases). The
// persistent schedule hands out tile PAIRS: cluster c takes pairs c, c + clusters, ... in the
// grouped raster over pair rows (kGroupM / 2 pair rows per group: the same 8 tile rows). An M of
// an odd number of tile rows gives the last pairs a second tile wholly below C: its block still
// runs the pipeline (it loads tile row 0's A, never a box wholly outside the tensor, and it must
// load and multicast its half of B for its peer) and stores nothing (the epilogue's row guard).
#pragma once

#include <cstddef>
#include <cstdint>

#include "families/gemm/wgmma_tile.h"  // kWgmmaTileM, kWgmmaTileN, kWgmmaEntryRegisters
#include "kernels/cluster.cuh"
#include "kernels/simt/simt.h"  // GPUBENCH_UNROLL and GPUBENCH_DYNAMIC_SHARED under nvcc
#include "kernels/tma.cuh"
#include "kernels/wgmma.cuh"

namespace gpubench::kernels::hgemm_sm90 {

namespace hopper = ::gpubench::kernels::hopper;

constexpr int kBlockM = 128;            ///< rows of C per tile
constexpr int kBlockN = 256;            ///< columns of C per tile
constexpr int kBlockK = 64;             ///< K extent of one stage (one 128-byte swizzle span of 16-bit)
constexpr int kStages = 4;              ///< shared-memory ring depth
constexpr int kConsumers = 2;           ///< consumer warpgroups (64 rows each)
constexpr int kWarpgroupThreads = 128;  ///< threads of one warpgroup
constexpr int kThreads = kWarpgroupThreads * (1 + kConsumers);       ///< producer + consumers
constexpr int kProducerRegisters = 40;                               ///< setmaxnreg.dec target of the producer
constexpr int kConsumerRegisters = 232;                              ///< setmaxnreg.inc target of the consumers
constexpr int kGroupM = 8;                                           ///< tile rows per rasterisation group
constexpr int kMaxClusterM = 2;                                      ///< cluster sizes built: 1 and 2 (x 1)
constexpr int kConsumerWarps = kConsumers * kWarpgroupThreads / 32;  ///< 8 warps store C
constexpr int kMmaN = kBlockN;                                       ///< N of each wgmma (one m64n256k16 per k16)
constexpr int kAccumulators = kMmaN / 2;                             ///< floats per consumer thread (64 x 256 / 128)
constexpr int kBoxN = 64;                                            ///< B box width: one 128-byte swizzle span of n
constexpr std::uint32_t kABytes = kBlockM * kBlockK * 2;             ///< 16 KiB
constexpr std::uint32_t kBBoxBytes = kBlockK * kBoxN * 2;            ///< 8 KiB
constexpr std::uint32_t kBBytes = kBlockK * kBlockN * 2;             ///< 32 KiB
constexpr std::uint32_t kStageBytes = kABytes + kBBytes;             ///< 48 KiB: the transaction bytes of a stage
constexpr std::uint32_t kSwizzleAtomBytes = 1024;                    ///< 128B swizzle repeats every 8 rows
constexpr std::uint32_t kConsumerABytes = kABytes / kConsumers;      ///< a consumer's 64 rows of A
// The consumers' wgmma descriptors (kernels/wgmma.cuh make_smem_desc), in bytes; the Hopper probe
// (families/gemm/hopper_probe.cuh) runs them on a GPU against the emulation's reading of them.
constexpr std::uint32_t kADescLbo = 16;           ///< A, K-major 128B swizzle: LBO unused (1 in 16-byte units)
constexpr std::uint32_t kADescSbo = 8 * 128;      ///< A: 8 rows of 128 bytes between row groups
constexpr std::uint32_t kAKStepBytes = 32;        ///< A: a k16 step is 32 bytes along the swizzled row
constexpr std::uint32_t kBDescLbo = kBBoxBytes;   ///< B, MN-major: the next 64 columns (box) of n
constexpr std::uint32_t kBDescSbo = 8 * 128;      ///< B: the next 8 rows of k
constexpr std::uint32_t kBKStepBytes = 16 * 128;  ///< B: a k16 step is 16 rows of 128 bytes

/// How the consumers write their FP32 tile of C. kTmaStore: each consumer warp stages its 16 rows
/// through shared memory 32 columns at a time (a 16 x 32 box, 2 KiB, 128-byte swizzled: the
/// warp's float2 writes are conflict-free) and one lane stores the box with the TMA, double
/// buffered, so the last boxes drain while the next tile's MMAs run and L2 gets whole 128-byte
/// lines; kDirect: every thread stores its accumulator pairs to global memory itself (float2,
/// 8 rows x 32 bytes per warp instruction), the tensor cores idle until the stores are issued.
enum class Epilogue { kTmaStore, kDirect };
constexpr int kEpilogueRows = 16;                                               ///< a warp's rows of a tile slice
constexpr int kEpilogueCols = 32;                                               ///< columns per box: 128 bytes of FP32
constexpr std::uint32_t kEpilogueBoxBytes = kEpilogueRows * kEpilogueCols * 4;  ///< 2 KiB
constexpr std::uint32_t kEpilogueBytes = kConsumerWarps * 2 * kEpilogueBoxBytes;  ///< 32 KiB: 2 boxes per warp

/// Dynamic shared memory: the stages, the epilogue's boxes (kTmaStore), 2 x kStages mbarriers, and
/// slack to align the stages to the swizzle atom (the base of dynamic shared memory is not
/// guaranteed to be 1024-aligned). 230 464 bytes with the boxes, of the 232 448 an H100 block may
/// have: 1 984 bytes of headroom for whoever adds to it (a fifth stage does not fit).
template <Epilogue E>
constexpr std::size_t smem_bytes() {
  return kStages * kStageBytes + (E == Epilogue::kTmaStore ? kEpilogueBytes : 0) + 2 * kStages * sizeof(std::uint64_t) +
         kSwizzleAtomBytes;
}
static_assert(smem_bytes<Epilogue::kTmaStore>() <= 227 * 1024, "an H100 block's dynamic shared memory");

static_assert(kBlockM == 64 * kConsumers, "each consumer warpgroup owns 64 rows (wgmma m64)");
static_assert(kBlockM == kWgmmaTileM && kBlockN == kWgmmaTileN, "gemm.h names the tile to host code");
static_assert(kBlockK * 2 == 128, "a stage's K extent is one 128-byte swizzle span");
static_assert(kProducerRegisters * kWarpgroupThreads + kConsumerRegisters * kWarpgroupThreads * kConsumers <= 65536,
              "register budget of the SM");
// setmaxnreg.inc waits until the SM's pool can grant the increase: the registers the block holds
// at entry (ptxas caps them at 65536 / kThreads, rounded down to 8, under __launch_bounds__(kThreads,
// 1)) must cover the producer's and the consumers' targets together, or the consumers never start.
static_assert((65536 / kThreads) / 8 * 8 * kThreads >=
                  kProducerRegisters * kWarpgroupThreads + kConsumerRegisters * kWarpgroupThreads * kConsumers,
              "the entry register cap must cover the setmaxnreg targets");
// ptxas may allocate less than the cap; the launcher refuses a build that did (gemm.h
// hgemm_wgmma_register_error), since the consumers would then never start.
static_assert(kWgmmaEntryRegisters == (65536 / kThreads) / 8 * 8 &&
                  kWgmmaEntryRegisters * kThreads >=
                      kProducerRegisters * kWarpgroupThreads + kConsumerRegisters * kWarpgroupThreads * kConsumers,
              "gemm.h's entry register count is the cap and covers the setmaxnreg targets");
static_assert(kStageBytes % kSwizzleAtomBytes == 0 && kConsumerABytes % kSwizzleAtomBytes == 0 &&
                  kBBoxBytes % kSwizzleAtomBytes == 0 && kABytes % kSwizzleAtomBytes == 0 &&
                  kEpilogueBoxBytes % kSwizzleAtomBytes == 0,
              "every TMA box and descriptor start stays on a swizzle atom");
static_assert(kEpilogueCols * 4 == 128 && kEpilogueRows * (kWarpgroupThreads / 32) == 64 &&
                  kBlockN % kEpilogueCols == 0,
              "an epilogue box is one 128-byte swizzle span wide and a warp's 16 rows of the wgmma layout");

/// Tiles along M and N, and stages along K, of an M x N x K problem.
__host__ __device__ constexpr int tiles_m(int m) { return (m + kBlockM - 1) / kBlockM; }
__host__ __device__ constexpr int tiles_n(int n) { return (n + kBlockN - 1) / kBlockN; }
__host__ __device__ constexpr int k_stages(int k) { return (k + kBlockK - 1) / kBlockK; }

/// Work units of the kernel with clusters of kClusterM blocks along M: tiles (kClusterM = 1) or
/// vertical tile pairs (2), `units_m` rows of them by tiles_n columns.
template <int kClusterM>
__host__ __device__ constexpr int unit_rows(int m) {
  return (tiles_m(m) + kClusterM - 1) / kClusterM;
}
template <int kClusterM>
__host__ __device__ constexpr int work_units(int m, int n) {
  return unit_rows<kClusterM>(m) * tiles_n(n);
}

/// Tile (row, column) of linear tile index `tile` in the grouped raster: groups of `group_m` tile
/// rows (fewer in the last group), column-major within a group. The cluster kernel rasters tile
/// pairs the same way, with pair rows for tile rows and kGroupM / 2 of them per group.
struct TileCoord {
  int m;  ///< tile row
  int n;  ///< tile column
};
__host__ __device__ constexpr TileCoord tile_coord(int tile, int tiles_along_m, int tiles_along_n,
                                                   int group_m = kGroupM) {
  const int group_tiles = group_m * tiles_along_n;
  const int first_m = (tile / group_tiles) * group_m;
  const int rows = tiles_along_m - first_m < group_m ? tiles_along_m - first_m : group_m;
  const int in_group = tile % group_tiles;
  return TileCoord{first_m + in_group % rows, in_group / rows};
}

/// Clusters of the persistent cluster kernel: one per work unit, at most as many as can be
/// resident together (`resident`, from cudaOccupancyMaxActiveClusters; 0 when unknown) and as
/// the SMs hold one block each (sms / cluster_m, at least 1).
constexpr int persistent_clusters(int units, int sms, int cluster_m, int resident) {
  int cap = sms / cluster_m;
  if (resident > 0 && resident < cap) cap = resident;
  if (cap < 1) cap = 1;
  return units < cap ? units : cap;
}

/// Arrivals per phase on a stage's `empty` barrier: every consumer thread (1 block), or every
/// consumer warp of every block of the cluster.
template <int kClusterM>
__host__ __device__ constexpr unsigned empty_arrivals() {
  return kClusterM == 1 ? kConsumers * kWarpgroupThreads : kClusterM * kConsumers * (kWarpgroupThreads / 32);
}

/// The multicast mask of every block of a cluster of kClusterM.
template <int kClusterM>
__host__ __device__ constexpr std::uint16_t cluster_mask() {
  return static_cast<std::uint16_t>((1u << kClusterM) - 1u);
}

/// B boxes (of 64 columns) each block of the cluster loads and multicasts.
template <int kClusterM>
__host__ __device__ constexpr int b_boxes_per_rank() {
  return kBlockN / kBoxN / kClusterM;
}

/// Where a block is in the persistent schedule: its first work unit, the step to the next one,
/// and its rank in the cluster (the tile row of a unit is unit row * kClusterM + rank).
struct Schedule {
  int first;  ///< first work unit (cluster index)
  int step;   ///< clusters in the grid
  int rank;   ///< rank in the cluster (0 without clusters)
};

template <int kClusterM>
__device__ __forceinline__ Schedule block_schedule() {
  if constexpr (kClusterM == 1) {
    return Schedule{static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x), 0};
  } else {
    return Schedule{static_cast<int>(hopper::cluster_id_x()), static_cast<int>(hopper::cluster_count_x()),
                    static_cast<int>(hopper::cluster_ctarank())};
  }
}

/// The tile of work unit `unit` a block of rank `rank` computes.
template <int kClusterM>
__host__ __device__ constexpr TileCoord unit_tile(int unit, int rank, int m, int n) {
  const TileCoord u = tile_coord(unit, unit_rows<kClusterM>(m), tiles_n(n), kGroupM / kClusterM);
  return TileCoord{u.m * kClusterM + rank, u.n};
}

static_assert(kGroupM % kMaxClusterM == 0, "a raster group holds whole tile pairs");
static_assert((kBlockN / kBoxN) % kMaxClusterM == 0, "the B boxes split evenly between the blocks of a cluster");

#if !defined(__CUDACC_RTC__)  // host code: not under CUDA's runtime compiler (device code only)
/// The kernel's tensor maps (host side): A as a K-inner tensor in 64 x 128 boxes, B as an N-inner
/// tensor in 64 x 64 boxes, both with the 128-byte swizzle. Returns 0 or the encoder's error.
inline int encode_operand_maps(hopper::TmaMap* map_a, hopper::TmaMap* map_b, const std::uint16_t* a,
                               const std::uint16_t* b, int m, int n, int k, hopper::TmaElement element) {
  const auto mu = static_cast<std::uint64_t>(m), nu = static_cast<std::uint64_t>(n), ku = static_cast<std::uint64_t>(k);
  const int err =
      hopper::encode_tensor_map_2d(map_a, a, ku, mu, ku * 2, kBlockK, kBlockM, element, hopper::Swizzle::k128B);
  if (err != 0) return err;
  return hopper::encode_tensor_map_2d(map_b, b, nu, ku, nu * 2, kBoxN, kBlockK, element, hopper::Swizzle::k128B);
}

/// The tensor map the kTmaStore epilogue writes C through: FP32, N-inner, rows `row_stride`
/// floats apart (N, or more for the Hopper probe's padded tensors), in boxes of 32 x 16 with the
/// 128-byte swizzle. Returns 0 or the encoder's error.
inline int encode_result_map(hopper::TmaMap* map_c, float* c, int m, int n, int row_stride = 0) {
  const auto mu = static_cast<std::uint64_t>(m), nu = static_cast<std::uint64_t>(n);
  const auto stride = static_cast<std::uint64_t>(row_stride > 0 ? row_stride : n);
  return hopper::encode_tensor_map_2d(map_c, c, nu, mu, stride * 4, kEpilogueCols, kEpilogueRows,
                                      hopper::TmaElement::kF32, hopper::Swizzle::k128B);
}
#endif

/// The first column of B box j of tile t: a box wholly right of C (N not a multiple of the tile:
/// its columns are never stored) loads column 0's instead, as a tile wholly below C loads row 0's
/// A, so that no box lies wholly outside the tensor (see produce).
__host__ __device__ constexpr int b_box_column(TileCoord t, int j, int n) {
  const int column = t.n * kBlockN + j * kBoxN;
  return column < n ? column : 0;
}

/// The producer: one thread issues every stage's loads for the tiles of this block (with
/// clusters: its A and its half of B, multicast to the cluster).
template <int kClusterM>
__device__ __forceinline__ void produce(const hopper::TmaMap* map_a, const hopper::TmaMap* map_b, unsigned char* stages,
                                        std::uint64_t* full, std::uint64_t* empty, int m, int n, int k) {
  const int units = work_units<kClusterM>(m, n), kt_count = k_stages(k);
  const Schedule sched = block_schedule<kClusterM>();
  int stage = 0;
  unsigned phase = 0;
  for (int unit = sched.first; unit < units; unit += sched.step) {
    const TileCoord t = unit_tile<kClusterM>(unit, sched.rank, m, n);
    for (int kt = 0; kt < kt_count; ++kt) {
      // Wait until the consumers (of every block of the cluster) have released this stage (the
      // first pass finds it free: the phase before parity 0 counts as complete).
      while (!hopper::mbarrier_try_wait_parity(&empty[stage], phase ^ 1u)) {
      }
      unsigned char* a = stages + stage * kStageBytes;
      unsigned char* b = a + kABytes;
      // The whole stage: this block's loads and, with clusters, the peers' multicast halves of B.
      hopper::mbarrier_arrive_expect_tx(&full[stage], kStageBytes);
      // A tile wholly below C (the second of an odd last pair) stores nothing, so its A rows do not
      // matter: it loads tile row 0's instead of a box wholly outside the tensor, whose transaction
      // bytes the `full` barrier would then rely on the TMA to credit (partly outside is the
      // documented, common case; wholly outside is not one to bet a hang on). B boxes wholly right
      // of C likewise (b_box_column).
      const int a_row = t.m * kBlockM < m ? t.m * kBlockM : 0;
      hopper::tma_load_2d(a, map_a, kt * kBlockK, a_row, &full[stage]);
      if constexpr (kClusterM == 1) {
        GPUBENCH_UNROLL
        for (int j = 0; j < kBlockN / kBoxN; ++j) {
          hopper::tma_load_2d(b + j * kBBoxBytes, map_b, b_box_column(t, j, n), kt * kBlockK, &full[stage]);
        }
      } else {
        GPUBENCH_UNROLL
        for (int i = 0; i < b_boxes_per_rank<kClusterM>(); ++i) {
          const int j = sched.rank * b_boxes_per_rank<kClusterM>() + i;
          hopper::tma_load_2d_multicast(b + j * kBBoxBytes, map_b, b_box_column(t, j, n), kt * kBlockK, &full[stage],
                                        cluster_mask<kClusterM>());
        }
      }
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
  }
}

/// Releases a stage the calling consumer thread's MMAs no longer read: every consumer thread
/// arrives on this block's `empty` barrier; with clusters, each consumer warp once its lanes have
/// converged, lane r arriving on the barrier of the block of rank r.
template <int kClusterM>
__device__ __forceinline__ void release_stage(std::uint64_t* empty, int thread) {
  if constexpr (kClusterM == 1) {
    hopper::mbarrier_arrive(empty);
  } else {
    __syncwarp();  // every lane's wgmma_wait_group for the stage has returned
    const int lane = thread % 32;
    if (lane < kClusterM) hopper::mbarrier_arrive_cluster(hopper::map_shared_rank(empty, static_cast<unsigned>(lane)));
  }
}

/// The kDirect epilogue: accumulator pair (i, i + 1) holds two adjacent columns of one row; each
/// thread stores its pairs that lie inside C (a tile wholly below C stores nothing).
__device__ __forceinline__ void store_direct(const float* acc, float* c, int row0, int col0, int m, int n, int thread) {
  GPUBENCH_UNROLL
  for (int i = 0; i < kAccumulators; i += 2) {
    const int row = row0 + hopper::WgmmaLayout::d_row(thread, i);
    const int col = col0 + hopper::WgmmaLayout::d_col(thread, i);
    if (row < m && col < n) {  // n is even, so col + 1 < n too
      *reinterpret_cast<float2*>(c + static_cast<std::size_t>(row) * static_cast<std::size_t>(n) + col) =
          make_float2(acc[i], acc[i + 1]);
    }
  }
}

/// The kTmaStore epilogue of one consumer warp: its 16 rows of the slice, 32 columns at a time,
/// through its two boxes in turn. Before a box is written again, the lane that stores waits until
/// the store that last read it (two boxes ago, maybe in the previous tile) has read it; the lanes
/// write their pairs, make them visible to the TMA (fence.proxy.async), and once the warp has
/// converged that lane stores the box, unless it lies wholly outside C (the TMA leaves out the
/// part of a box outside C). The stores still running when the next tile's MMAs start drain
/// under them.
__device__ __forceinline__ void store_boxes(const float* acc, unsigned char* boxes, const hopper::TmaMap* map_c,
                                            int row0, int col0, int m, int n, int thread) {
  const int warp = thread / 32, lane = thread % 32;
  const int first_row = row0 + warp * kEpilogueRows;
  GPUBENCH_UNROLL
  for (int s = 0; s < kBlockN / kEpilogueCols; ++s) {
    unsigned char* box = boxes + (s % 2) * kEpilogueBoxBytes;
    if (lane == 0) hopper::bulk_wait_group_read<1>();
    __syncwarp();
    // Accumulators 16s .. 16s + 15 are this box's columns (WgmmaLayout: 8 per 4 accumulators).
    // (Counted from 0, not from 16s: with bounds that depend on s, ptxas kept acc in local memory.)
    GPUBENCH_UNROLL
    for (int j = 0; j < kEpilogueCols / 2; j += 2) {
      const int i = s * kEpilogueCols / 2 + j;
      const int r = hopper::WgmmaLayout::d_row(thread, i) - warp * kEpilogueRows;
      const int col = hopper::WgmmaLayout::d_col(thread, i) - s * kEpilogueCols;
      *reinterpret_cast<float2*>(box +
                                 hopper::swizzled_chunk_offset(static_cast<unsigned>(r), static_cast<unsigned>(col / 4),
                                                               hopper::Swizzle::k128B) +
                                 (col % 4) * 4) = make_float2(acc[i], acc[i + 1]);
    }
    hopper::fence_proxy_async_shared();
    __syncwarp();
    if (lane == 0) {
      const int first_col = col0 + s * kEpilogueCols;
      if (first_row < m && first_col < n) hopper::tma_store_2d(map_c, box, first_col, first_row);
      hopper::bulk_commit_group();
    }
  }
  __syncwarp();  // converged again before the next tile's wgmma.fence (.aligned)
}

/// One consumer warpgroup's 64 x 256 slice of each tile: the MMAs, then the FP32 stores.
template <class T, int kClusterM, Epilogue E>
__device__ __forceinline__ void consume(const unsigned char* stages, std::uint64_t* full, std::uint64_t* empty,
                                        unsigned char* boxes, const hopper::TmaMap* map_c, float* c, int m, int n,
                                        int k, int consumer, int thread) {
  const int units = work_units<kClusterM>(m, n), kt_count = k_stages(k);
  const Schedule sched = block_schedule<kClusterM>();
  int stage = 0;
  unsigned phase = 0;
  for (int unit = sched.first; unit < units; unit += sched.step) {
    const TileCoord t = unit_tile<kClusterM>(unit, sched.rank, m, n);
    // Zeroed here, and every wgmma accumulates (scale-d 1). With uninitialised registers and the
    // tile's first wgmma told not to read them (scale-d 0 at kt = kk = 0) instead, the ptxas of
    // CUDA 12.0 to 12.8 serialised every wgmma of the kernel (advisory C7515: "non wgmma
    // instructions defining accumulator registers"); 12.9's and 13's did not.
    // scripts/cuda12_device_check.py fails on that advisory.
    float acc[kAccumulators];
    GPUBENCH_UNROLL
    for (int i = 0; i < kAccumulators; ++i) acc[i] = 0.0f;
    int previous = 0;
    for (int kt = 0; kt < kt_count; ++kt) {
      while (!hopper::mbarrier_try_wait_parity(&full[stage], phase)) {
      }
      const unsigned char* a = stages + stage * kStageBytes + consumer * kConsumerABytes;
      const unsigned char* b = stages + stage * kStageBytes + kABytes;
      hopper::wgmma_fence_operands(acc);
      hopper::wgmma_fence();
      GPUBENCH_UNROLL
      for (int kk = 0; kk < kBlockK / 16; ++kk) {
        // A: K-major rows of 128 bytes; a k16 step is 32 bytes along the (swizzled) row.
        const std::uint64_t desc_a =
            hopper::make_smem_desc(a + kAKStepBytes * kk, kADescLbo, kADescSbo, hopper::Swizzle::k128B);
        // B: MN-major; a k16 step is 16 rows of 128 bytes.
        const std::uint64_t desc_b =
            hopper::make_smem_desc(b + kBKStepBytes * kk, kBDescLbo, kBDescSbo, hopper::Swizzle::k128B);
        hopper::wgmma_m64k16_ss<kMmaN, T, hopper::Major::kMN>(acc, desc_a, desc_b, 1);
      }
      hopper::wgmma_commit_group();
      // The previous stage's MMAs are complete once at most this stage's group is pending.
      hopper::wgmma_wait_group<1>();
      hopper::wgmma_fence_operands(acc);
      if (kt > 0) release_stage<kClusterM>(&empty[previous], thread);
      previous = stage;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
    hopper::wgmma_wait_group<0>();
    hopper::wgmma_fence_operands(acc);
    release_stage<kClusterM>(&empty[previous], thread);

    // A tile wholly below C (the second of a pair at the M edge) stores nothing.
    const int row0 = t.m * kBlockM + consumer * 64;
    const int col0 = t.n * kBlockN;
    if constexpr (E == Epilogue::kTmaStore) {
      store_boxes(acc, boxes + (consumer * (kWarpgroupThreads / 32) + thread / 32) * 2 * kEpilogueBoxBytes, map_c, row0,
                  col0, m, n, thread);
    } else {
      store_direct(acc, c, row0, col0, m, n, thread);
    }
  }
  // Every store done before the block exits (its shared memory goes to the next block).
  if constexpr (E == Epilogue::kTmaStore) {
    if (thread % 32 == 0) hopper::bulk_wait_group<0>();
  }
  // The warp converged again before the cluster barrier (.aligned), whichever epilogue ran.
  __syncwarp();
}

/// C = A * B (see the file comment). map_a: A as a K-inner tensor (box 64 x 128, 128B swizzle);
/// map_b: B as an N-inner tensor (box 64 x 64, 128B swizzle); map_c: C for the kTmaStore epilogue
/// (encode_result_map; unused by kDirect, which stores to `c`). kThreads threads, smem_bytes<E>()
/// of dynamic shared memory. kClusterM = 1: gridDim.x <= tiles. kClusterM = 2: launched in
/// clusters of 2 x 1 x 1 blocks (cudaLaunchAttributeClusterDimension), gridDim.x = 2 x clusters,
/// clusters <= work_units<2> (tile pairs).
template <class T, int kClusterM, Epilogue E>
__global__ void __launch_bounds__(kThreads, 1)
    hgemm_wgmma_kernel(const __grid_constant__ hopper::TmaMap map_a, const __grid_constant__ hopper::TmaMap map_b,
                       const __grid_constant__ hopper::TmaMap map_c, float* c, int m, int n, int k) {
  static_assert(kClusterM == 1 || kClusterM == kMaxClusterM, "clusters of 1 or 2 blocks along M");
  GPUBENCH_DYNAMIC_SHARED(unsigned char, smem_raw);
  // Align the stages to the swizzle atom: the TMA swizzles and wgmma unswizzles by address bits.
  const std::uint32_t misalign = hopper::shared_address(smem_raw) % kSwizzleAtomBytes;
  unsigned char* stages = smem_raw + (misalign == 0 ? 0 : kSwizzleAtomBytes - misalign);
  unsigned char* boxes = stages + kStages * kStageBytes;  // the epilogue's (kTmaStore)
  auto* full = reinterpret_cast<std::uint64_t*>(boxes + (E == Epilogue::kTmaStore ? kEpilogueBytes : 0));
  std::uint64_t* empty = full + kStages;

  if (threadIdx.x == 0) {
    // The tensor maps into the descriptor cache while the barriers are set up: the producer's
    // first loads and the consumers' first stores then find them there.
    hopper::prefetch_tensormap(&map_a);
    hopper::prefetch_tensormap(&map_b);
    if constexpr (E == Epilogue::kTmaStore) hopper::prefetch_tensormap(&map_c);
    for (int s = 0; s < kStages; ++s) {
      hopper::mbarrier_init(&full[s], 1);  // the producer's arrive.expect_tx
      hopper::mbarrier_init(&empty[s], empty_arrivals<kClusterM>());
    }
    // Visible to the TMA unit (async proxy) and, released at cluster scope, to the peer blocks.
    hopper::fence_mbarrier_init();
  }
  if constexpr (kClusterM == 1) {
    __syncthreads();
  } else {
    // No block arrives on or multicasts into a peer's barriers before they exist: the fence above
    // released the initialisation at cluster scope, the wait acquires it.
    hopper::cluster_arrive_relaxed();
    hopper::cluster_wait();
  }

  const int warpgroup = static_cast<int>(threadIdx.x) / kWarpgroupThreads;
  // One branch per role: setmaxnreg applies only where each warpgroup's role is one side of a
  // single if/else (ptxas warns C7508 otherwise).
  if (warpgroup == 0) {
    hopper::warpgroup_reg_dealloc<kProducerRegisters>();
    if (threadIdx.x == 0) produce<kClusterM>(&map_a, &map_b, stages, full, empty, m, n, k);
    if constexpr (kClusterM > 1) {
      __syncwarp();
      hopper::cluster_sync();  // see below
    }
  } else {
    hopper::warpgroup_reg_alloc<kConsumerRegisters>();
    consume<T, kClusterM, E>(stages, full, empty, boxes, &map_c, c, m, n, k, warpgroup - 1,
                             static_cast<int>(threadIdx.x) - warpgroup * kWarpgroupThreads);
    // No block exits while a peer may still arrive on its `empty` barriers (the consumers' last
    // releases) - every multicast into it has landed already: its consumers waited for each one.
    if constexpr (kClusterM > 1) hopper::cluster_sync();
  }
}

}  // namespace gpubench::kernels::hgemm_sm90
