// The Hopper wgmma GEMM (families/gemm/hgemm_sm90.cuh) run whole under the host SIMT emulation:
// the producer warpgroup's TMA loads (landing swizzled, zero-filled outside the tensor, only when
// a consumer polls the stage's barrier), the consumers' asynchronous wgmma from the K-major A and
// MN-major B descriptors, the empty/full mbarrier ring across tiles, the persistent tile loop and
// the epilogue. Compared element by element with the double-precision reference
// (families/gemm/reference.h) at one tile, a wrapping ring, odd shapes with partial tiles, more
// tiles than blocks, and BF16 inputs. C starts poisoned (NaN) between guard elements.
//
// The cluster kernel (kClusterM = 2) the same way, its two blocks co-scheduled by the emulation,
// each with its own shared memory: the multicast halves of B landing in both blocks and completing
// on both `full` barriers, the consumers' releases arriving on the `empty` barrier of both blocks
// (a remote arrive through mapa), the cluster barriers at the start and the end, the tile-pair
// schedule, and pairs at the M edge whose second tile lies wholly below C.
//
// Both epilogues: the TMA stores of 16 x 32 boxes through shared memory (every test; a store
// takes effect at the wait that retires it, so a box reused too early stores the wrong data) and
// the threads' own predicated stores (Epilogue::kDirect).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "families/gemm/gemm.h"
#include "families/gemm/hgemm_sm90.cuh"
#include "families/gemm/reference.h"
#include "kernels/simt/simt.h"

namespace {

namespace k = gpubench::kernels;
namespace sm90 = gpubench::kernels::hgemm_sm90;
namespace hopper = gpubench::kernels::hopper;
using gpubench::simt::Dim3;

constexpr int kGuard = 64;

// Inputs that are exact in both FP16 and BF16 (multiples of 1/64 in (-2, 2), 8 significant bits
// at most), so one FP16 reference checks the BF16 run of the same values.
struct Inputs {
  std::vector<std::uint16_t> f16, bf16;
};

std::uint16_t float_to_bf16_exact(float x) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  EXPECT_EQ(bits & 0xFFFFu, 0u) << x << " is not exact in bfloat16";
  return static_cast<std::uint16_t>(bits >> 16);
}

Inputs random_inputs(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(-127, 127);
  Inputs in;
  in.f16.resize(n);
  in.bf16.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    int v = 0;
    while (v == 0) v = dist(gen);
    const float x = static_cast<float>(v) / 64.0f;
    in.f16[i] = k::float_to_half_bits(x);
    in.bf16[i] = float_to_bf16_exact(x);
  }
  return in;
}

template <int kClusterM, class T, sm90::Epilogue E>
void launch_kernel(unsigned blocks, const hopper::TmaMap& map_a, const hopper::TmaMap& map_b,
                   const hopper::TmaMap& map_c, float* c, int m, int n, int kk) {
  if constexpr (kClusterM == 1) {
    gpubench::simt::launch_with_smem(Dim3{blocks}, Dim3{sm90::kThreads}, sm90::smem_bytes<E>(),
                                     sm90::hgemm_wgmma_kernel<T, 1, E>, map_a, map_b, map_c, c, m, n, kk);
  } else {
    gpubench::simt::launch_cluster_with_smem(Dim3{blocks}, Dim3{sm90::kThreads}, Dim3{kClusterM}, sm90::smem_bytes<E>(),
                                             sm90::hgemm_wgmma_kernel<T, kClusterM, E>, map_a, map_b, map_c, c, m, n,
                                             kk);
  }
}

// Runs the kernel as the launcher does (encode_operand_maps, encode_result_map, kThreads,
// smem_bytes) on `blocks` persistent blocks (blocks / kClusterM clusters); returns C with its guards.
template <int kClusterM = 1, sm90::Epilogue E = sm90::Epilogue::kTmaStore>
std::vector<float> run_wgmma(const Inputs& a, const Inputs& b, int m, int n, int kk, k::Half16 type, unsigned blocks) {
  std::vector<float> storage(static_cast<std::size_t>(m) * n + 2 * kGuard, std::nanf(""));
  float* c = storage.data() + kGuard;
  const bool bf16 = type == k::Half16::bf16;
  hopper::TmaMap map_a{};
  hopper::TmaMap map_b{};
  hopper::TmaMap map_c{};
  EXPECT_EQ(sm90::encode_operand_maps(&map_a, &map_b, bf16 ? a.bf16.data() : a.f16.data(),
                                      bf16 ? b.bf16.data() : b.f16.data(), m, n, kk,
                                      bf16 ? hopper::TmaElement::kBF16 : hopper::TmaElement::kF16),
            0);
  if (E == sm90::Epilogue::kTmaStore) {
    EXPECT_EQ(sm90::encode_result_map(&map_c, c, m, n), 0);
  }
  if (bf16) {
    launch_kernel<kClusterM, hopper::BF16, E>(blocks, map_a, map_b, map_c, c, m, n, kk);
  } else {
    launch_kernel<kClusterM, hopper::F16, E>(blocks, map_a, map_b, map_c, c, m, n, kk);
  }
  EXPECT_EQ(hopper::wgmma_outstanding(), 0u) << "wgmma issued and never waited for";
  EXPECT_EQ(hopper::tma_outstanding(), 0u) << "TMA loads issued and never consumed";
  EXPECT_EQ(hopper::tma_stores_outstanding(), 0u) << "TMA stores issued and never waited for";
  return storage;
}

template <int kClusterM = 1, sm90::Epilogue E = sm90::Epilogue::kTmaStore>
void expect_wgmma_matches(int m, int n, int kk, unsigned blocks, k::Half16 type = k::Half16::fp16) {
  SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << kk << " on " << blocks << " blocks"
                                  << (kClusterM > 1 ? " in clusters of 2" : "")
                                  << (type == k::Half16::bf16 ? " (bf16)" : " (fp16)")
                                  << (E == sm90::Epilogue::kDirect ? ", direct stores" : ", TMA stores"));
  ASSERT_EQ(k::hgemm_wgmma_shape_error(m, n, kk), nullptr);
  const Inputs a = random_inputs(static_cast<std::size_t>(m) * kk, 31);
  const Inputs b = random_inputs(static_cast<std::size_t>(kk) * n, 37);
  k::hopper::detail::tma_boxes_wholly_outside() = 0;
  const std::vector<float> storage = run_wgmma<kClusterM, E>(a, b, m, n, kk, type, blocks);
  // Every box holds part of the tensor (A rows below C and B columns right of it load row or
  // column 0's instead): the hardware's count for a box wholly outside is undocumented.
  EXPECT_EQ(k::hopper::detail::tma_boxes_wholly_outside(), 0);
  for (int i = 0; i < kGuard; ++i) {
    ASSERT_TRUE(std::isnan(storage[i])) << "the kernel wrote before C";
    ASSERT_TRUE(std::isnan(storage[kGuard + static_cast<std::size_t>(m) * n + i])) << "the kernel wrote after C";
  }
  const k::GemmMismatch bad = k::check_gemm_full(a.f16.data(), b.f16.data(), storage.data() + kGuard, m, n, kk);
  EXPECT_FALSE(bad.found) << bad.describe();
}

TEST(HgemmWgmmaEmulation, OneTileOneStage) { expect_wgmma_matches(128, 256, 64, 1); }

// 6 K stages through a ring of 4: the producer waits for released stages and both barrier
// parities flip.
TEST(HgemmWgmmaEmulation, PipelineWrapsTheStageRing) { expect_wgmma_matches(128, 256, 384, 1); }

// Partial tiles in M, N and K (zero-filled by the TMA, masked in the epilogue), and a block that
// takes a second tile (4 tiles on 3 blocks).
TEST(HgemmWgmmaEmulation, OddShapesWithPartialTiles) { expect_wgmma_matches(200, 264, 72, 3); }

// 9 tiles of 3 stages on 2 blocks: the ring's stage and parity carry over from tile to tile.
TEST(HgemmWgmmaEmulation, PersistentBlocksCarryTheRingAcrossTiles) { expect_wgmma_matches(300, 520, 136, 2); }

TEST(HgemmWgmmaEmulation, SmallerThanOneTileInEveryDimension) { expect_wgmma_matches(5, 24, 8, 1); }

// Seeded shapes anywhere in the kernel's domain (any M; N and K multiples of 8), on 1-4 blocks.
TEST(HgemmWgmmaEmulation, SeededShapesAcrossTheDomain) {
  std::mt19937 gen(20261123);
  for (int i = 0; i < 5; ++i) {
    const int m = std::uniform_int_distribution<int>(1, 300)(gen);
    const int n = 8 * std::uniform_int_distribution<int>(1, 70)(gen);
    const int kk = 8 * std::uniform_int_distribution<int>(1, 40)(gen);
    const auto blocks = static_cast<unsigned>(std::uniform_int_distribution<int>(1, 4)(gen));
    expect_wgmma_matches(m, n, kk, blocks, i % 2 == 0 ? k::Half16::fp16 : k::Half16::bf16);
  }
}

TEST(HgemmWgmmaEmulation, Bf16Inputs) { expect_wgmma_matches(200, 264, 72, 3, k::Half16::bf16); }

// The same values decoded as BF16 by a kernel reading FP16 bit patterns (or the other way round)
// would be garbage: the check above can fail. Here a wrong type is shown to fail it.
TEST(HgemmWgmmaEmulation, TheReferenceRejectsInputsDecodedAsTheWrongType) {
  const int m = 64, n = 256, kk = 64;
  const Inputs a = random_inputs(static_cast<std::size_t>(m) * kk, 31);
  const Inputs b = random_inputs(static_cast<std::size_t>(kk) * n, 37);
  Inputs swapped_a{a.bf16, a.f16};  // FP16 kernel fed BF16 patterns
  Inputs swapped_b{b.bf16, b.f16};
  const std::vector<float> storage = run_wgmma(swapped_a, swapped_b, m, n, kk, k::Half16::fp16, 1);
  EXPECT_TRUE(k::check_gemm_full(a.f16.data(), b.f16.data(), storage.data() + kGuard, m, n, kk).found);
}

// ---- the threads' own stores (Epilogue::kDirect, the wgmma_direct_store row) ----

constexpr auto kDirect = sm90::Epilogue::kDirect;

TEST(HgemmWgmmaDirectStoreEmulation, OddShapesPersistentBlocksAndClusters) {
  expect_wgmma_matches<1, kDirect>(200, 264, 72, 3);
  expect_wgmma_matches<1, kDirect>(300, 520, 136, 2, k::Half16::bf16);
  expect_wgmma_matches<2, kDirect>(300, 264, 72, 4);
  expect_wgmma_matches<2, kDirect>(5, 24, 8, 2);
}

// ---- the cluster kernel: 2 x 1 clusters, B multicast ----

constexpr int kPair = 2;

// One tile pair: each block loads its A and half of B, multicast to both.
TEST(HgemmWgmmaClusterEmulation, OneTilePairOneStage) { expect_wgmma_matches<kPair>(256, 256, 64, 2); }

// 6 K stages through a ring of 4: a stage is refilled only once both blocks' consumers released it.
TEST(HgemmWgmmaClusterEmulation, PipelineWrapsTheStageRing) { expect_wgmma_matches<kPair>(256, 256, 384, 2); }

// Partial tiles in M, N and K; 300 rows are 3 tile rows, so the second pair's second tile is
// wholly below C (its block zero-fills A, still multicasts its half of B, stores nothing). Then
// M = 129 (a pair whose second tile has one row) and M = 100 (one pair, the second tile empty).
TEST(HgemmWgmmaClusterEmulation, OddShapesWithPartialTilesAndAnEmptySecondTile) {
  expect_wgmma_matches<kPair>(300, 264, 72, 4);
  expect_wgmma_matches<kPair>(129, 136, 200, 2);
  expect_wgmma_matches<kPair>(100, 520, 64, 2);
}

// 3 x 3 = 9 tile pairs of 3 stages on 2 clusters: the ring's stage and parity carry over from
// pair to pair in both blocks of a cluster.
TEST(HgemmWgmmaClusterEmulation, MorePairsThanClustersCarryTheRingAcrossPairs) {
  expect_wgmma_matches<kPair>(700, 520, 136, 4);
}

TEST(HgemmWgmmaClusterEmulation, SmallerThanOneTileInEveryDimension) { expect_wgmma_matches<kPair>(5, 24, 8, 2); }

TEST(HgemmWgmmaClusterEmulation, Bf16Inputs) {
  expect_wgmma_matches<kPair>(300, 264, 72, 4, k::Half16::bf16);
  expect_wgmma_matches<kPair>(700, 520, 136, 2, k::Half16::bf16);
}

// Seeded shapes anywhere in the kernel's domain, on 1-3 clusters.
TEST(HgemmWgmmaClusterEmulation, SeededShapesAcrossTheDomain) {
  std::mt19937 gen(20261124);
  for (int i = 0; i < 5; ++i) {
    const int m = std::uniform_int_distribution<int>(1, 600)(gen);
    const int n = 8 * std::uniform_int_distribution<int>(1, 70)(gen);
    const int kk = 8 * std::uniform_int_distribution<int>(1, 40)(gen);
    const auto clusters = static_cast<unsigned>(std::uniform_int_distribution<int>(1, 3)(gen));
    expect_wgmma_matches<kPair>(m, n, kk, kPair * clusters, i % 2 == 0 ? k::Half16::fp16 : k::Half16::bf16);
  }
}

// The pair schedule: every tile of C belongs to exactly one (unit, rank), the two ranks of a unit
// are vertically adjacent tiles of one column, and only the second tile of a pair in the last
// pair row can lie below C (when the tile rows are odd).
TEST(HgemmWgmmaTiles, TilePairsCoverEveryTileOnceAndShareTheirColumn) {
  for (const auto& [m, n] :
       std::vector<std::pair<int, int>>{{128, 256}, {300, 520}, {1100, 4104}, {4096, 4096}, {8192, 11008}}) {
    const int tm = sm90::tiles_m(m), tn = sm90::tiles_n(n);
    const int units = sm90::work_units<kPair>(m, n);
    EXPECT_EQ(units, (tm + 1) / 2 * tn);
    std::set<std::pair<int, int>> seen;
    int below = 0;
    for (int u = 0; u < units; ++u) {
      const sm90::TileCoord t0 = sm90::unit_tile<kPair>(u, 0, m, n);
      const sm90::TileCoord t1 = sm90::unit_tile<kPair>(u, 1, m, n);
      EXPECT_EQ(t0.n, t1.n);
      EXPECT_EQ(t0.m % 2, 0);
      EXPECT_EQ(t1.m, t0.m + 1);
      ASSERT_LT(t0.m, tm);
      ASSERT_LT(t0.n, tn);
      seen.insert({t0.m, t0.n});
      if (t1.m < tm) {
        seen.insert({t1.m, t1.n});
      } else {
        ++below;
        EXPECT_EQ(t1.m, tm) << "only the last pair row reaches below C";
      }
      // Consecutive units stay within one group of kGroupM tile rows.
      EXPECT_EQ(t0.m / sm90::kGroupM, u / (sm90::kGroupM / kPair * tn));
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(tm * tn)) << m << "x" << n;
    EXPECT_EQ(below, tm % 2 == 1 ? tn : 0) << m << "x" << n;
  }
  // Without clusters a unit is a tile, in the grouped raster of tile_coord.
  EXPECT_EQ(sm90::work_units<1>(300, 520), 3 * 3);
  for (int u = 0; u < 9; ++u) {
    EXPECT_EQ(sm90::unit_tile<1>(u, 0, 300, 520).m, sm90::tile_coord(u, 3, 3).m);
    EXPECT_EQ(sm90::unit_tile<1>(u, 0, 300, 520).n, sm90::tile_coord(u, 3, 3).n);
  }
}

TEST(HgemmWgmmaTiles, PersistentClustersFitTheWorkTheSmsAndTheResidentClusters) {
  // An H100 SXM: 132 SMs, 66 pairs of them; the occupancy answer caps it where it is lower.
  EXPECT_EQ(sm90::persistent_clusters(1024, 132, 2, 66), 66);
  EXPECT_EQ(sm90::persistent_clusters(1024, 132, 2, 60), 60);
  EXPECT_EQ(sm90::persistent_clusters(1024, 132, 2, 0), 66);    // unknown: half the SMs
  EXPECT_EQ(sm90::persistent_clusters(1024, 132, 2, 500), 66);  // never more than the SMs hold
  EXPECT_EQ(sm90::persistent_clusters(3, 132, 2, 66), 3);       // never more than the work
  EXPECT_EQ(sm90::persistent_clusters(5, 1, 2, 0), 1);          // at least one
  EXPECT_EQ(sm90::empty_arrivals<1>(), 256u);                   // every consumer thread
  EXPECT_EQ(sm90::empty_arrivals<2>(), 16u);                    // 8 consumer warps x 2 blocks
  EXPECT_EQ(sm90::cluster_mask<2>(), 3u);
  EXPECT_EQ(sm90::b_boxes_per_rank<2>() * sm90::kBBoxBytes * 2, sm90::kBBytes);
}

TEST(HgemmWgmmaTiles, RasterVisitsEveryTileOnceInGroupsOfRows) {
  for (const auto& [m, n] : std::vector<std::pair<int, int>>{{128, 256}, {1100, 600}, {2048, 4096}, {4096, 11008}}) {
    const int tm = sm90::tiles_m(m), tn = sm90::tiles_n(n);
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < tm * tn; ++t) {
      const sm90::TileCoord c = sm90::tile_coord(t, tm, tn);
      ASSERT_GE(c.m, 0);
      ASSERT_LT(c.m, tm);
      ASSERT_GE(c.n, 0);
      ASSERT_LT(c.n, tn);
      // Consecutive tiles stay within one group of kGroupM tile rows.
      EXPECT_EQ(c.m / sm90::kGroupM, t / (sm90::kGroupM * tn));
      seen.insert({c.m, c.n});
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(tm * tn)) << m << "x" << n;
  }
}

TEST(HgemmWgmmaShapes, RejectedShapesAndDevicesSayWhy) {
  EXPECT_NE(k::hgemm_wgmma_shape_error(128, 100, 128), nullptr);  // N not a multiple of 8
  EXPECT_NE(k::hgemm_wgmma_shape_error(128, 128, 36), nullptr);   // K not a multiple of 8
  EXPECT_EQ(k::hgemm_wgmma_shape_error(127, 128, 128), nullptr);  // any M
  EXPECT_EQ(k::hgemm_wgmma_device_error(9, 0), nullptr);
  EXPECT_NE(k::hgemm_wgmma_device_error(8, 0), nullptr);
  EXPECT_NE(k::hgemm_wgmma_device_error(10, 0), nullptr);  // sm_90a code does not run on Blackwell
  EXPECT_NE(k::hgemm_wgmma_device_error(8, 9), nullptr);
}

}  // namespace
