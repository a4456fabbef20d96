// The GEMM tolerance (gemm_tolerance in families/gemm/reference.h: 4 sqrt(K) u |A||B|, u = 2^-24,
// derived there from FP32 accumulation of K products of exact inputs) pinned from both sides:
// an honest FP32 accumulation - in order, or pairwise like a tensor core's - passes at every
// depth, and the shortcuts a faster kernel could take fail it: inputs rounded to TF32 or BF16,
// or partial sums kept in FP16. A tolerance loosened 100-fold would let the TF32 shortcut
// through, and this test would fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "families/gemm/reference.h"
#include "harness/verify.h"
#include "kernels/half_bits.h"

namespace gpubench::kernels {
namespace {

// x with its float mantissa rounded to `bits` bits (round to nearest even), as TF32 (10) or
// BF16 (7) hardware sees an FP32 input.
float round_mantissa(float x, int bits) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  const int drop = 23 - bits;
  const std::uint32_t half = 1u << (drop - 1);
  const std::uint32_t lsb = (u >> drop) & 1u;
  u = (u + half - 1 + lsb) & ~((1u << drop) - 1);
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

enum class Sum { fp32_in_order, fp32_pairwise, fp16_partials };

struct Problem {
  int m = 8, n = 192, k;
  std::vector<float> a, b;
  explicit Problem(int depth) : k(depth), a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n) {
    fill_random_float(a.data(), a.size(), 101 + k, -1.0f, 1.0f);
    fill_random_float(b.data(), b.size(), 202 + k, -1.0f, 1.0f);
  }
  // C computed from inputs seen through `in` and summed as `sum` says.
  template <class In>
  std::vector<float> product(In in, Sum sum) const {
    std::vector<float> c(static_cast<std::size_t>(m) * n);
    std::vector<float> terms(static_cast<std::size_t>(k));
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        for (int p = 0; p < k; ++p)
          terms[p] = in(a[static_cast<std::size_t>(i) * k + p]) * in(b[static_cast<std::size_t>(p) * n + j]);
        float s = 0.0f;
        if (sum == Sum::fp32_pairwise) {
          std::vector<float> t = terms;
          while (t.size() > 1) {
            std::vector<float> next((t.size() + 1) / 2);
            for (std::size_t q = 0; q < next.size(); ++q)
              next[q] = t[2 * q] + (2 * q + 1 < t.size() ? t[2 * q + 1] : 0);
            t.swap(next);
          }
          s = t[0];
        } else {
          for (float x : terms) {
            s += x;
            if (sum == Sum::fp16_partials) s = half_bits_to_float(float_to_half_bits(s));
          }
        }
        c[static_cast<std::size_t>(i) * n + j] = s;
      }
    }
    return c;
  }
  bool passes(const std::vector<float>& c) const {
    return !check_gemm_full(a.data(), b.data(), c.data(), m, n, k).found;
  }
};

const auto exact = [](float x) { return x; };

TEST(GemmTolerance, HonestFp32AccumulationPassesAtEveryDepth) {
  for (int k : {64, 1024, 8192}) {
    SCOPED_TRACE(k);
    const Problem p(k);
    EXPECT_TRUE(p.passes(p.product(exact, Sum::fp32_in_order)));
    EXPECT_TRUE(p.passes(p.product(exact, Sum::fp32_pairwise)));
  }
}

TEST(GemmTolerance, Tf32AndBf16InputsFail) {
  for (int k : {64, 1024, 8192}) {
    SCOPED_TRACE(k);
    const Problem p(k);
    EXPECT_FALSE(p.passes(p.product([](float x) { return round_mantissa(x, 10); }, Sum::fp32_in_order))) << "TF32";
    EXPECT_FALSE(p.passes(p.product([](float x) { return round_mantissa(x, 7); }, Sum::fp32_in_order))) << "BF16";
  }
}

TEST(GemmTolerance, Fp16AccumulationFails) {
  for (int k : {64, 1024}) {
    SCOPED_TRACE(k);
    const Problem p(k);
    EXPECT_FALSE(p.passes(p.product(exact, Sum::fp16_partials)));
  }
}

TEST(GemmTolerance, RoundingHelperIsRoundToNearestEven) {
  EXPECT_EQ(round_mantissa(1.0f + 0x1p-11f, 10), 1.0f);                        // a tie rounds to even
  EXPECT_EQ(round_mantissa(1.0f + 0x1p-11f + 0x1p-20f, 10), 1.0f + 0x1p-10f);  // above the tie: up
  EXPECT_EQ(round_mantissa(1.5f, 7), 1.5f);                                    // exact stays
}

}  // namespace
}  // namespace gpubench::kernels
