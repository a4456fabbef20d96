// The GEMM kernels themselves (families/gemm/sgemm.cuh, families/gemm/hgemm.cuh) run under
// the host SIMT emulation at small, tile-multiple and odd shapes and are compared element by
// element with the double-precision reference (families/gemm/reference.h). The FP16 kernel runs
// whole: block rasterisation, the cp.async ring with its waits (emulated strictly: data lands
// only at the covering wait), swizzled stores and ldmatrix loads, mma.sync and the epilogue.
// Outputs start poisoned (NaN) and are surrounded by guard elements that must stay untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "families/gemm/gemm.h"
#include "families/gemm/hgemm.cuh"
#include "families/gemm/reference.h"
#include "families/gemm/sgemm.cuh"
#include "kernels/simt/simt.h"

namespace {

using gpubench::simt::Dim3;
namespace k = gpubench::kernels;
namespace sgemm = gpubench::kernels::sgemm;
namespace hgemm = gpubench::kernels::hgemm;

constexpr int kGuard = 64;  // poisoned elements before and after C

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) {
    do {
      x = dist(gen);
    } while (x == 0.0f);
  }
  return v;
}

std::vector<std::uint16_t> random_halves(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint16_t> v(n);
  const auto f = random_floats(n, seed);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = k::float_to_half_bits(f[i]);
    if ((v[i] & 0x7FFFu) == 0) v[i] = 0x3C00u;
  }
  return v;
}

// C with kGuard poisoned floats on each side; c() is the matrix itself.
struct GuardedC {
  explicit GuardedC(std::size_t n) : storage(n + 2 * kGuard, std::nanf("")) {}
  float* c() { return storage.data() + kGuard; }
  // The guard elements still hold the poison pattern (nothing wrote outside C).
  bool guards_intact(std::size_t n) const {
    for (std::size_t i = 0; i < kGuard; ++i) {
      if (!std::isnan(storage[i]) || !std::isnan(storage[kGuard + n + i])) return false;
    }
    return true;
  }
  std::vector<float> storage;
};

// ---- SGEMM ----

using Shape = std::tuple<int, int, int>;

void run_sgemm_tiled(const float* a, const float* b, float* c, int m, int n, int kk) {
  gpubench::simt::launch(Dim3{sgemm::tiled_grid_x(n), sgemm::tiled_grid_y(m)}, Dim3{sgemm::kThreads},
                         sgemm::sgemm_tiled_kernel, a, b, c, m, n, kk);
}

void run_sgemm_naive(const float* a, const float* b, float* c, int m, int n, int kk) {
  const unsigned e = sgemm::kNaiveBlock;
  gpubench::simt::launch(Dim3{(static_cast<unsigned>(n) + e - 1) / e, (static_cast<unsigned>(m) + e - 1) / e},
                         Dim3{e, e}, sgemm::sgemm_naive_kernel, a, b, c, m, n, kk);
}

void expect_sgemm_matches(void (*run)(const float*, const float*, float*, int, int, int), int m, int n, int kk,
                          int a_offset = 0) {
  SCOPED_TRACE("M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(kk) + " A offset " +
               std::to_string(a_offset));
  ASSERT_EQ(k::sgemm_shape_error(m, n, kk), nullptr);
  // a_offset > 0 shifts A off 16-byte alignment: the kernel must take its scalar path.
  std::vector<float> a_store = random_floats(static_cast<std::size_t>(m) * kk + a_offset, 11u + m);
  const float* a = a_store.data() + a_offset;
  const auto b = random_floats(static_cast<std::size_t>(kk) * n, 23u + n);
  const std::size_t cn = static_cast<std::size_t>(m) * n;
  GuardedC c(cn);
  run(a, b.data(), c.c(), m, n, kk);
  const k::GemmMismatch bad = k::check_gemm_full(a, b.data(), c.c(), m, n, kk);
  EXPECT_FALSE(bad.found) << bad.describe();
  EXPECT_TRUE(c.guards_intact(cn)) << "a store landed outside C";
}

TEST(SgemmEmulation, TiledKernelTileMultiples) {
  for (auto [m, n, kk] : {Shape{128, 128, 8}, Shape{256, 128, 64}, Shape{128, 256, 24}}) {
    expect_sgemm_matches(run_sgemm_tiled, m, n, kk);
  }
}

TEST(SgemmEmulation, TiledKernelOddShapesAndTails) {
  for (auto [m, n, kk] :
       {Shape{1, 1, 1}, Shape{7, 5, 3}, Shape{129, 130, 17}, Shape{65, 200, 33}, Shape{3, 257, 9}, Shape{200, 4, 12}}) {
    expect_sgemm_matches(run_sgemm_tiled, m, n, kk);
  }
}

TEST(SgemmEmulation, TiledKernelUnalignedRowsTakeTheScalarPath) {
  expect_sgemm_matches(run_sgemm_tiled, 130, 132, 20, /*a_offset=*/1);
}

// The transposing stores of A into shared memory hit 32 distinct banks in every warp, for each of
// the four stores (thread t stores row t / 2, k = (t % 2) * 4 + i; banks of 4 bytes, 32 of them).
TEST(SgemmSharedMemory, TransposedAStoresAreBankConflictFree) {
  sgemm::SgemmSmem sm{};
  const auto* base = reinterpret_cast<const char*>(&sm.a[0][0][0]);
  for (int warp = 0; warp < sgemm::kThreads / 32; ++warp) {
    for (int i = 0; i < 4; ++i) {
      std::set<long> banks;
      for (int lane = 0; lane < 32; ++lane) {
        const int tid = 32 * warp + lane;
        const auto* p = reinterpret_cast<const char*>(&sm.a[0][(tid % 2) * 4 + i][tid / 2]);
        banks.insert(((p - base) / 4) % 32);
      }
      EXPECT_EQ(banks.size(), 32u) << "warp " << warp << ", store " << i;
    }
  }
  // and every k row still starts 16-byte aligned for the LDS.128 reads
  EXPECT_EQ(reinterpret_cast<const char*>(&sm.a[0][1][0]) - base, (sgemm::kBlockM + sgemm::kAPad) * 4);
  EXPECT_EQ(((sgemm::kBlockM + sgemm::kAPad) * 4) % 16, 0);
}

TEST(SgemmEmulation, NaiveKernel) {
  for (auto [m, n, kk] : {Shape{1, 1, 1}, Shape{17, 33, 5}, Shape{64, 48, 40}}) {
    expect_sgemm_matches(run_sgemm_naive, m, n, kk);
  }
}

// The reference check itself must reject a wrong result (one corrupted element).
TEST(SgemmEmulation, ReferenceCheckRejectsACorruptedElement) {
  const int m = 33, n = 20, kk = 40;
  const auto a = random_floats(static_cast<std::size_t>(m) * kk, 5);
  const auto b = random_floats(static_cast<std::size_t>(kk) * n, 6);
  GuardedC c(static_cast<std::size_t>(m) * n);
  run_sgemm_tiled(a.data(), b.data(), c.c(), m, n, kk);
  ASSERT_FALSE(k::check_gemm_full(a.data(), b.data(), c.c(), m, n, kk).found);
  // Drop one product from C[17][9]: the smallest error an indexing bug could make.
  c.c()[17 * n + 9] -= a[17 * kk + 3] * b[3 * n + 9];
  const k::GemmMismatch bad = k::check_gemm_full(a.data(), b.data(), c.c(), m, n, kk);
  ASSERT_TRUE(bad.found);
  EXPECT_EQ(bad.row, 17);
  EXPECT_EQ(bad.col, 9);
}

// ---- FP16 mma.sync kernel ----

void run_hgemm_mma(const std::uint16_t* a, const std::uint16_t* b, float* c, int m, int n, int kk) {
  gpubench::simt::launch_with_smem(Dim3{hgemm::mma_grid_blocks(m, n)}, Dim3{hgemm::kThreads}, hgemm::kSmemBytes,
                                   hgemm::hgemm_mma_kernel, a, b, c, m, n, kk);
}

void expect_hgemm_matches(int m, int n, int kk) {
  SCOPED_TRACE("M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(kk));
  ASSERT_EQ(k::hgemm_shape_error(m, n, kk), nullptr);
  const auto a = random_halves(static_cast<std::size_t>(m) * kk, 31u + m);
  const auto b = random_halves(static_cast<std::size_t>(kk) * n, 37u + n);
  const std::size_t cn = static_cast<std::size_t>(m) * n;
  GuardedC c(cn);
  gpubench::kernels::warp::cp_async_reset();
  run_hgemm_mma(a.data(), b.data(), c.c(), m, n, kk);
  EXPECT_EQ(gpubench::kernels::warp::cp_async_outstanding(), 0u) << "cp.async copies left in flight at exit";
  const k::GemmMismatch bad = k::check_gemm_full(a.data(), b.data(), c.c(), m, n, kk);
  EXPECT_FALSE(bad.found) << bad.describe();
  EXPECT_TRUE(c.guards_intact(cn)) << "a store landed outside C";
}

TEST(HgemmEmulation, OneTileOneStage) { expect_hgemm_matches(128, 128, 32); }

// 9 K tiles through a 4-stage ring: every stage is reused twice, so a wrong wait count, a
// missing barrier or a wrong stage index reads poisoned or stale data.
TEST(HgemmEmulation, PipelineWrapsTheStageRing) { expect_hgemm_matches(128, 128, 288); }

// Fewer K tiles than stages: the prologue's empty commit groups.
TEST(HgemmEmulation, FewerKTilesThanStages) { expect_hgemm_matches(128, 128, 40); }

TEST(HgemmEmulation, OddShapesWithPartialTiles) {
  for (auto [m, n, kk] : {Shape{1, 8, 8}, Shape{100, 72, 40}, Shape{130, 136, 104}, Shape{17, 264, 16}}) {
    expect_hgemm_matches(m, n, kk);
  }
}

// 9 tile rows x 2 tile columns: one full rasterisation group of 8 rows and a partial one.
TEST(HgemmEmulation, RasterisationGroupsIncludingAPartialOne) { expect_hgemm_matches(1100, 200, 24); }

TEST(HgemmEmulation, RasterisationVisitsEveryTileOnce) {
  for (auto [m, n] : {std::pair{128, 128}, std::pair{1100, 200}, std::pair{2048, 640}, std::pair{8192, 8192},
                      std::pair{4096, 11008}}) {
    std::set<std::pair<int, int>> seen;
    const int tiles_m = (m + 127) / 128;
    const int tiles_n = (n + 127) / 128;
    for (int pid = 0; pid < static_cast<int>(hgemm::mma_grid_blocks(m, n)); ++pid) {
      int tm = -1, tn = -1;
      hgemm::block_tile(pid, m, n, tm, tn);
      ASSERT_TRUE(tm >= 0 && tm < tiles_m && tn >= 0 && tn < tiles_n) << "pid " << pid;
      ASSERT_TRUE(seen.insert({tm, tn}).second) << "tile visited twice, pid " << pid;
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(tiles_m) * tiles_n);
  }
}

TEST(HgemmShapes, RejectedShapesSayWhy) {
  EXPECT_NE(k::hgemm_shape_error(128, 100, 128), nullptr);  // N not a multiple of 8
  EXPECT_NE(k::hgemm_shape_error(128, 128, 36), nullptr);   // K not a multiple of 8
  EXPECT_EQ(k::hgemm_shape_error(127, 128, 128), nullptr);  // any M
  EXPECT_NE(k::hgemm_wmma_shape_error(4096, 4096, 4100), nullptr);
  EXPECT_EQ(k::hgemm_wmma_shape_error(4096, 11008, 4096), nullptr);
  EXPECT_NE(k::sgemm_shape_error(0, 1, 1), nullptr);
  EXPECT_NE(k::sgemm_shape_error(65536, 65536, 16), nullptr);  // 2^32 elements of C
}

// ---- shared-memory layout: swizzle is a permutation and conflict-free ----

// 16-byte bank group (of 8 per 128-byte bank row) of a half offset.
int bank_group(int half_offset) { return (half_offset * 2 / 16) % 8; }

TEST(HgemmSwizzle, AStageIsAPermutationAndConflictFree) {
  std::set<int> chunks;
  for (int row = 0; row < hgemm::kBlockM; ++row) {
    for (int ch = 0; ch < hgemm::kBlockK / 8; ++ch) {
      const int off = hgemm::a_smem_offset(row, ch);
      ASSERT_EQ(off % 8, 0);
      ASSERT_TRUE(off >= 0 && off < hgemm::kStageHalvesA);
      ASSERT_TRUE(chunks.insert(off).second) << "two chunks at one address";
    }
  }
  // ldmatrix phase: 8 consecutive rows (from a multiple of 8), one logical chunk.
  for (int row0 = 0; row0 < hgemm::kBlockM; row0 += 8) {
    for (int ch = 0; ch < hgemm::kBlockK / 8; ++ch) {
      std::set<int> groups;
      for (int r = 0; r < 8; ++r) groups.insert(bank_group(hgemm::a_smem_offset(row0 + r, ch)));
      EXPECT_EQ(groups.size(), 8u) << "ldmatrix bank conflict at rows " << row0 << ".., chunk " << ch;
    }
  }
  // cp.async phase: 8 consecutive thread ids = 2 rows x 4 chunks.
  for (int id0 = 0; id0 < hgemm::kStageHalvesA / 8; id0 += 8) {
    std::set<int> groups;
    for (int id = id0; id < id0 + 8; ++id) groups.insert(bank_group(hgemm::a_smem_offset(id / 4, id % 4)));
    EXPECT_EQ(groups.size(), 8u) << "cp.async store conflict at chunk id " << id0;
  }
}

TEST(HgemmSwizzle, BStageIsAPermutationAndConflictFree) {
  std::set<int> chunks;
  for (int kr = 0; kr < hgemm::kBlockK; ++kr) {
    for (int ch = 0; ch < hgemm::kBlockN / 8; ++ch) {
      const int off = hgemm::b_smem_offset(kr, ch);
      ASSERT_TRUE(off >= 0 && off < hgemm::kStageHalvesB);
      ASSERT_TRUE(chunks.insert(off).second) << "two chunks at one address";
    }
  }
  for (int kr0 = 0; kr0 < hgemm::kBlockK; kr0 += 8) {
    for (int ch = 0; ch < hgemm::kBlockN / 8; ++ch) {
      std::set<int> groups;
      for (int r = 0; r < 8; ++r) groups.insert(bank_group(hgemm::b_smem_offset(kr0 + r, ch)));
      EXPECT_EQ(groups.size(), 8u) << "ldmatrix.trans bank conflict at k rows " << kr0 << ".., chunk " << ch;
    }
  }
  for (int id0 = 0; id0 < hgemm::kStageHalvesB / 8; id0 += 8) {
    std::set<int> groups;
    for (int id = id0; id < id0 + 8; ++id) groups.insert(bank_group(hgemm::b_smem_offset(id / 16, id % 16)));
    EXPECT_EQ(groups.size(), 8u) << "cp.async store conflict at chunk id " << id0;
  }
}

}  // namespace
