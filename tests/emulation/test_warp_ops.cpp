// Lane-by-lane tests of the emulated tensor-core primitives (kernels/warp_ops.cuh) against naive
// references. The fragment layouts are restated here independently of MmaLayout, in the
// register-wise form of the PTX ISA figures ("register r of lane (g, t) holds row g + 8*(r&1),
// columns 2t + 8*(r>>1) and +1" for A), so a wrong layout in warp_ops.cuh fails these tests
// instead of cancelling out.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/half_bits.h"
#include "kernels/simt/simt.h"
#include "kernels/warp_ops.cuh"

namespace {

using gpubench::kernels::float_to_half_bits;
using gpubench::kernels::half_bits_to_float;
using gpubench::simt::Dim3;
using gpubench::simt::launch;
namespace warp = gpubench::kernels::warp;

std::uint32_t pack(std::uint16_t lo, std::uint16_t hi) {
  return static_cast<std::uint32_t>(lo) | (std::uint32_t{hi} << 16);
}

// Random halves in [-2, 2] without zeros, exactly representable.
std::vector<std::uint16_t> random_halves(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<std::uint16_t> v(n);
  for (auto& h : v) {
    do {
      h = float_to_half_bits(dist(gen));
    } while ((h & 0x7FFFu) == 0);
  }
  return v;
}

TEST(HalfBits, RoundTripsEveryFiniteHalf) {
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    if ((h & 0x7C00u) == 0x7C00u) continue;  // inf / NaN
    ASSERT_EQ(float_to_half_bits(half_bits_to_float(h)), h) << "half 0x" << std::hex << i;
  }
}

TEST(HalfBits, KnownValuesAndRounding) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3C00u);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xC000u);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7BFFu);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7C00u);               // rounds to inf
  EXPECT_EQ(float_to_half_bits(5.9604645e-8f), 0x0001u);          // smallest subnormal
  EXPECT_EQ(float_to_half_bits(1.0f + 1.0f / 2048.0f), 0x3C00u);  // tie -> even
  EXPECT_EQ(float_to_half_bits(1.0f + 3.0f / 2048.0f), 0x3C02u);  // tie -> even (up)
  EXPECT_FLOAT_EQ(half_bits_to_float(0x3555u), 0.333251953125f);
  EXPECT_FLOAT_EQ(half_bits_to_float(0x0200u), 3.0517578125e-5f);  // subnormal
}

// ---- mma.sync m16n8k16 ----

struct MmaIo {
  const std::uint16_t* a;  // 16 x 16 row-major
  const std::uint16_t* b;  // 16 x 8 row-major (k x n)
  const float* c;          // 16 x 8
  float* d;                // 32 lanes x 4
};

// Each lane builds its fragments register by register from the PTX figures, then calls mma.
void mma_kernel(MmaIo io) {
  const int lane = static_cast<int>(threadIdx.x);
  const int g = lane / 4;
  const int t = lane % 4;
  std::uint32_t a[4];
  for (int r = 0; r < 4; ++r) {
    const int row = g + 8 * (r & 1);
    const int col = 2 * t + 8 * (r >> 1);
    a[r] = pack(io.a[row * 16 + col], io.a[row * 16 + col + 1]);
  }
  std::uint32_t b[2];
  for (int r = 0; r < 2; ++r) {
    const int krow = 2 * t + 8 * r;
    b[r] = pack(io.b[krow * 8 + g], io.b[(krow + 1) * 8 + g]);
  }
  float acc[4] = {io.c[g * 8 + 2 * t], io.c[g * 8 + 2 * t + 1], io.c[(g + 8) * 8 + 2 * t],
                  io.c[(g + 8) * 8 + 2 * t + 1]};
  warp::mma_m16n8k16(acc, a, b);
  for (int i = 0; i < 4; ++i) io.d[lane * 4 + i] = acc[i];
}

TEST(WarpOpsEmulation, MmaM16n8k16MatchesNaiveProductLaneByLane) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const auto a = random_halves(16 * 16, seed);
    const auto b = random_halves(16 * 8, seed + 100);
    std::vector<float> c(16 * 8);
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    for (auto& x : c) x = dist(gen);
    std::vector<float> d(32 * 4, std::nanf(""));
    launch(Dim3{1}, Dim3{32}, mma_kernel, MmaIo{a.data(), b.data(), c.data(), d.data()});
    for (int lane = 0; lane < 32; ++lane) {
      for (int i = 0; i < 4; ++i) {
        // Accumulator element i of lane (g, t): row g (+8 for i >= 2), column 2t + (i & 1).
        const int row = lane / 4 + (i >= 2 ? 8 : 0);
        const int col = 2 * (lane % 4) + (i & 1);
        double ref = c[row * 8 + col];
        double mag = std::abs(ref);
        for (int k = 0; k < 16; ++k) {
          const double p = double{half_bits_to_float(a[row * 16 + k])} * half_bits_to_float(b[k * 8 + col]);
          ref += p;
          mag += std::abs(p);
        }
        EXPECT_NEAR(d[lane * 4 + i], ref, mag * 1e-6) << "lane " << lane << " element " << i;
      }
    }
  }
}

TEST(WarpOpsEmulation, MmaLayoutSpotValuesFromThePtxFigures) {
  using L = warp::MmaLayout;
  // Lane 0: a0,a1 = A[0][0..1]; a2,a3 = A[8][0..1]; a4,a5 = A[0][8..9]; a6,a7 = A[8][8..9].
  EXPECT_EQ(L::a_row(0, 2), 8);
  EXPECT_EQ(L::a_col(0, 2), 0);
  EXPECT_EQ(L::a_col(0, 5), 9);
  // Lane 31 (g 7, t 3): a7 = A[15][15]; b3 = B[15][7]; c3 = C[15][7].
  EXPECT_EQ(L::a_row(31, 7), 15);
  EXPECT_EQ(L::a_col(31, 7), 15);
  EXPECT_EQ(L::b_row(31, 3), 15);
  EXPECT_EQ(L::b_col(31, 3), 7);
  EXPECT_EQ(L::c_row(31, 3), 15);
  EXPECT_EQ(L::c_col(31, 3), 7);
  // Lane 6 (g 1, t 2): b0 = B[4][1], b2 = B[12][1]; c1 = C[1][5].
  EXPECT_EQ(L::b_row(6, 0), 4);
  EXPECT_EQ(L::b_row(6, 2), 12);
  EXPECT_EQ(L::b_col(6, 0), 1);
  EXPECT_EQ(L::c_row(6, 1), 1);
  EXPECT_EQ(L::c_col(6, 1), 5);
}

// ---- ldmatrix ----

constexpr int kRowStride = 24;  // halves: 48-byte rows, 16-byte aligned, not a power of two

struct LdmIo {
  const std::uint16_t* smem;  // 4 matrices x 8 rows at kRowStride
  std::uint32_t* out;         // 32 lanes x 4 registers
  bool trans;
};

void ldmatrix_kernel(LdmIo io) {
  const unsigned lane = threadIdx.x;
  // Lane 8*i + r gives row r of matrix i.
  const std::uint16_t* row = io.smem + (lane / 8) * 8 * kRowStride + (lane % 8) * kRowStride;
  std::uint32_t r[4];
  if (io.trans) {
    warp::ldmatrix_x4_trans(r, row);
  } else {
    warp::ldmatrix_x4(r, row);
  }
  for (int i = 0; i < 4; ++i) io.out[lane * 4 + i] = r[i];
}

std::uint16_t element_code(int matrix, int row, int col) {
  return static_cast<std::uint16_t>(matrix * 64 + row * 8 + col + 1);
}

TEST(WarpOpsEmulation, LdmatrixX4AndTransLaneByLane) {
  alignas(16) std::uint16_t smem[4 * 8 * kRowStride];
  std::fill(std::begin(smem), std::end(smem), std::uint16_t{0xDEAD});
  for (int m = 0; m < 4; ++m) {
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) smem[(m * 8 + r) * kRowStride + c] = element_code(m, r, c);
    }
  }
  for (bool trans : {false, true}) {
    std::vector<std::uint32_t> out(32 * 4, 0);
    launch(Dim3{1}, Dim3{32}, ldmatrix_kernel, LdmIo{smem, out.data(), trans});
    for (int lane = 0; lane < 32; ++lane) {
      for (int m = 0; m < 4; ++m) {
        // Non-transposed: row lane/4, columns 2*(lane%4), +1. Transposed: column lane/4 of
        // rows 2*(lane%4), +1.
        const std::uint32_t want =
            trans ? pack(element_code(m, 2 * (lane % 4), lane / 4), element_code(m, 2 * (lane % 4) + 1, lane / 4))
                  : pack(element_code(m, lane / 4, 2 * (lane % 4)), element_code(m, lane / 4, 2 * (lane % 4) + 1));
        EXPECT_EQ(out[lane * 4 + m], want) << (trans ? "trans " : "") << "lane " << lane << " matrix " << m;
      }
    }
  }
}

// ldmatrix feeding mma: A through ldmatrix.x4 from a row-major 16x16 tile, B through
// ldmatrix.x4.trans from a row-major 16x16 (k x n) tile = two n8 tiles; the result must be the
// product. This is exactly how the FP16 kernel addresses its operands.
struct LdmMmaIo {
  const std::uint16_t* a;  // 16 x 16, row stride 16 (32-byte rows)
  const std::uint16_t* b;  // 16 x 16 (k x n), row stride 16
  float* d;                // 16 x 16 product
};

void ldmatrix_mma_kernel(LdmMmaIo io) {
  const int lane = static_cast<int>(threadIdx.x);
  std::uint32_t a[4];
  warp::ldmatrix_x4(a, io.a + (lane % 16) * 16 + (lane / 16) * 8);
  std::uint32_t r[4];
  warp::ldmatrix_x4_trans(r, io.b + (lane % 16) * 16 + (lane / 16) * 8);
  const std::uint32_t b0[2] = {r[0], r[1]};
  const std::uint32_t b1[2] = {r[2], r[3]};
  float acc0[4] = {0, 0, 0, 0};
  float acc1[4] = {0, 0, 0, 0};
  warp::mma_m16n8k16(acc0, a, b0);
  warp::mma_m16n8k16(acc1, a, b1);
  const int g = lane / 4;
  const int t = lane % 4;
  for (int i = 0; i < 4; ++i) {
    const int row = g + (i >= 2 ? 8 : 0);
    const int col = 2 * t + (i & 1);
    io.d[row * 16 + col] = acc0[i];
    io.d[row * 16 + 8 + col] = acc1[i];
  }
}

TEST(WarpOpsEmulation, LdmatrixThenMmaComputesTheTileProduct) {
  const auto av = random_halves(256, 7);
  const auto bv = random_halves(256, 8);
  alignas(16) std::uint16_t a[256];
  alignas(16) std::uint16_t b[256];
  std::copy(av.begin(), av.end(), a);
  std::copy(bv.begin(), bv.end(), b);
  std::vector<float> d(256, std::nanf(""));
  launch(Dim3{1}, Dim3{32}, ldmatrix_mma_kernel, LdmMmaIo{a, b, d.data()});
  for (int row = 0; row < 16; ++row) {
    for (int col = 0; col < 16; ++col) {
      double ref = 0;
      for (int k = 0; k < 16; ++k)
        ref += double{half_bits_to_float(a[row * 16 + k])} * half_bits_to_float(b[k * 16 + col]);
      EXPECT_NEAR(d[row * 16 + col], ref, 1e-4) << "row " << row << " col " << col;
    }
  }
}

// ---- cp.async ----

struct CpIo {
  const std::uint8_t* src;  // 64 threads x 2 chunks of 16 bytes
  std::uint8_t* seen;       // 64 threads x 4 snapshots x 64 bytes
};

void cp_async_kernel(CpIo io) {
  alignas(16) __shared__ std::uint8_t dst[64][64];
  const unsigned t = threadIdx.x;
  std::uint8_t* snap = io.seen + t * 4 * 64;
  warp::cp_async_16(dst[t] + 0, io.src + t * 32, 16);  // group 0
  warp::cp_async_commit();
  warp::cp_async_16(dst[t] + 16, io.src + t * 32 + 16, 16);  // group 1
  warp::cp_async_commit();
  warp::cp_async_16(dst[t] + 32, io.src, 0);  // group 2: zero-fill only
  warp::cp_async_commit();
  warp::cp_async_16(dst[t] + 48, io.src + t * 32, 16);  // not committed: no wait covers it
  warp::cp_async_wait<2>();
  std::memcpy(snap + 0 * 64, dst[t], 64);
  warp::cp_async_wait<1>();
  std::memcpy(snap + 1 * 64, dst[t], 64);
  warp::cp_async_wait<0>();
  std::memcpy(snap + 2 * 64, dst[t], 64);
  warp::cp_async_commit();
  warp::cp_async_wait<0>();
  std::memcpy(snap + 3 * 64, dst[t], 64);
}

TEST(WarpOpsEmulation, CpAsyncGroupsCompleteInOrderAtTheirWait) {
  warp::cp_async_reset();
  std::vector<std::uint8_t> src(64 * 32);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(1 + i % 250);
  alignas(16) static std::uint8_t src_aligned[64 * 32];
  std::copy(src.begin(), src.end(), src_aligned);
  std::vector<std::uint8_t> seen(64 * 4 * 64, 0x11);
  launch(Dim3{1}, Dim3{64}, cp_async_kernel, CpIo{src_aligned, seen.data()});
  EXPECT_EQ(warp::cp_async_outstanding(), 0u);
  auto expect_bytes = [&](unsigned t, int snap, int offset, const std::uint8_t* want, const char* what) {
    for (int i = 0; i < 16; ++i) {
      ASSERT_EQ(seen[(t * 4 + snap) * 64 + offset + i], want[i]) << what << ", thread " << t << " byte " << i;
    }
  };
  const std::uint8_t poison[16] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                   0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  const std::uint8_t zeros[16] = {};
  for (unsigned t = 0; t < 64; ++t) {
    const std::uint8_t* g0 = src_aligned + t * 32;
    const std::uint8_t* g1 = g0 + 16;
    expect_bytes(t, 0, 0, g0, "wait_group 2: group 0 landed");
    expect_bytes(t, 0, 16, poison, "wait_group 2: group 1 still in flight");
    expect_bytes(t, 0, 32, poison, "wait_group 2: group 2 still in flight");
    expect_bytes(t, 1, 16, g1, "wait_group 1: group 1 landed");
    expect_bytes(t, 1, 32, poison, "wait_group 1: group 2 still in flight");
    expect_bytes(t, 2, 32, zeros, "wait_group 0: group 2 zero-filled");
    expect_bytes(t, 2, 48, poison, "wait_group 0: the uncommitted copy is not covered");
    expect_bytes(t, 3, 48, g0, "commit + wait_group 0: the last copy landed");
  }
}

void misaligned_cp_async_kernel(const std::uint8_t* src) {
  alignas(16) __shared__ std::uint8_t dst[64];
  warp::cp_async_16(dst + 8, src, 16);
}

TEST(WarpOpsEmulationDeathTest, MisalignedCpAsyncAborts) {
  alignas(16) static std::uint8_t src[32];
  EXPECT_DEATH(launch(Dim3{1}, Dim3{1}, misaligned_cp_async_kernel, static_cast<const std::uint8_t*>(src)),
               "not 16-byte aligned");
}

}  // namespace
