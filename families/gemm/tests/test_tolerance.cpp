// The GEMM tolerance (gemm_tolerance in families/gemm/reference.h: 4 sqrt(K) u |A||B|, u = 2^-24,
// derived there from FP32 accumulation of K products of exact inputs) pinned from both sides:
// an honest FP32 accumulation - in order, or pairwise like a tensor core's - passes at every
// depth, and the shortcuts a faster kernel could take fail it: inputs rounded to TF32 or BF16,
// or partial sums kept in FP16. A tolerance loosened 100-fold would let the TF32 shortcut
// through, and this test would fail. The BF16 and FP8 library rows are judged by the same bound
// (exact products of exact inputs): honest FP32 accumulation of BF16 inputs passes, and FP8 inputs
// on the grid of families/gemm/low_precision.h come out exact even from a tensor-core-like
// accumulator that keeps only ~14 significant bits (Hopper's FP8 path) when it is promoted to
// FP32 periodically (cuBLASLt's default), while one lost product still fails - and full-range FP8 inputs would not
// survive that accumulator, which is why the grid is used.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "families/gemm/low_precision.h"
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

// C = A * B of low-precision inputs (m x k, k x n), each element summed by `sum` from the exact
// products in order.
template <class T, class Sum>
std::vector<float> low_precision_product(const std::vector<T>& a, const std::vector<T>& b, int m, int n, int k,
                                         Sum sum) {
  std::vector<float> c(static_cast<std::size_t>(m) * n);
  std::vector<double> terms(static_cast<std::size_t>(k));
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      for (int p = 0; p < k; ++p) {
        terms[p] = gemm_input_value(a[static_cast<std::size_t>(i) * k + p]) *
                   gemm_input_value(b[static_cast<std::size_t>(p) * n + j]);
      }
      c[static_cast<std::size_t>(i) * n + j] = sum(terms);
    }
  }
  return c;
}

float fp32_in_order(const std::vector<double>& terms) {
  float s = 0.0f;
  for (double t : terms) s += static_cast<float>(t);  // each product is exact in FP32
  return s;
}

// A narrow tensor-core accumulator as published for Hopper's FP8 MMA: every addition keeps
// `bits` significant bits aligned to the larger operand's exponent (truncated), and, unless
// `promote_every` is 0, the partial sum is added into an FP32 register every `promote_every`
// products (cuBLASLt's default; 0 = FAST_ACCUM, never promoted).
double truncate_to(double x, int bits, double scale_of) {
  if (x == 0 || scale_of == 0) return x;
  int e = 0;
  std::frexp(scale_of, &e);
  const double quantum = std::ldexp(1.0, e - bits);
  return std::trunc(x / quantum) * quantum;
}
float narrow_accumulator(const std::vector<double>& terms, int bits, int promote_every) {
  float total = 0.0f;
  double partial = 0.0;
  for (std::size_t p = 0; p < terms.size(); ++p) {
    partial = truncate_to(partial + terms[p], bits, std::max(std::fabs(partial), std::fabs(terms[p])));
    if (promote_every > 0 && (p + 1) % static_cast<std::size_t>(promote_every) == 0) {
      total += static_cast<float>(partial);
      partial = 0.0;
    }
  }
  return total + static_cast<float>(partial);
}

template <class T, class Make>
std::vector<T> inputs(std::size_t n, std::uint64_t seed, Make make) {
  std::vector<float> u(n);
  fill_random_float(u.data(), n, seed, -1.0f, 1.0f);
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = make(u[i]);
  return out;
}

TEST(GemmTolerance, Bf16InputsWithFp32AccumulationPass) {
  const int m = 4, n = 96;
  for (int k : {64, 1024, 8192}) {
    SCOPED_TRACE(k);
    const auto a = inputs<Bf16>(static_cast<std::size_t>(m) * k, 31 + k, bf16_gemm_input);
    const auto b = inputs<Bf16>(static_cast<std::size_t>(k) * n, 32 + k, bf16_gemm_input);
    const auto c = low_precision_product(a, b, m, n, k, fp32_in_order);
    EXPECT_FALSE(check_gemm_full(a.data(), b.data(), c.data(), m, n, k).found);
  }
}

TEST(GemmTolerance, Fp8GridIsExactEvenInANarrowAccumulatorAndALostProductFails) {
  const int m = 4, n = 64;
  for (int k : {64, 4096, 11008}) {
    SCOPED_TRACE(k);
    const auto a = inputs<E4m3>(static_cast<std::size_t>(m) * k, 41 + k, e4m3_gemm_input);
    const auto b = inputs<E4m3>(static_cast<std::size_t>(k) * n, 42 + k, e4m3_gemm_input);
    const auto in_double = low_precision_product(a, b, m, n, k, [](const std::vector<double>& t) {
      double s = 0;
      for (double x : t) s += x;
      return static_cast<float>(s);
    });
    using SumFn = std::function<float(const std::vector<double>&)>;
    std::vector<SumFn> sums = {SumFn(fp32_in_order),
                               SumFn([](const std::vector<double>& t) { return narrow_accumulator(t, 13, 128); })};
    // Never promoted (FAST_ACCUM), the random walk of the partial sums reaches 2^7 and the
    // narrow accumulator starts dropping the grid's 2^-6 at depths beyond a few thousand: the
    // rows leave FAST_ACCUM off, as cuBLASLt's default is.
    if (k <= 4096) sums.push_back(SumFn([](const std::vector<double>& t) { return narrow_accumulator(t, 13, 0); }));
    for (const SumFn& sum : sums) {
      const auto c = low_precision_product(a, b, m, n, k, sum);
      EXPECT_EQ(c, in_double) << "the grid's sums are exact in every accumulator";
      EXPECT_FALSE(check_gemm_full(a.data(), b.data(), c.data(), m, n, k).found);
    }
    // The product of the last term of C[1][5] lost: the smallest product on the grid is 1/64.
    auto c = in_double;
    c[static_cast<std::size_t>(1) * n + 5] -=
        static_cast<float>(gemm_input_value(a[static_cast<std::size_t>(1) * k + k - 1]) *
                           gemm_input_value(b[static_cast<std::size_t>(k - 1) * n + 5]));
    const GemmMismatch bad = check_gemm_full(a.data(), b.data(), c.data(), m, n, k);
    EXPECT_TRUE(bad.found);
    EXPECT_EQ(bad.row, 1);
    EXPECT_EQ(bad.col, 5);
  }
}

TEST(GemmTolerance, FullRangeFp8InputsWouldNotSurviveANarrowAccumulator) {
  // Why the FP8 inputs sit on the grid: E4M3 values from all of [-1, 1) make products down to
  // 2^-18, which a 13-bit accumulator aligned to partial sums of ~10 truncates away.
  const int m = 4, n = 64, k = 4096;
  const auto full = [](float u) { return E4m3{float_to_e4m3_bits(u == 0.0f ? 0.5f : u)}; };
  const auto a = inputs<E4m3>(static_cast<std::size_t>(m) * k, 51, full);
  const auto b = inputs<E4m3>(static_cast<std::size_t>(k) * n, 52, full);
  const auto c =
      low_precision_product(a, b, m, n, k, [](const std::vector<double>& t) { return narrow_accumulator(t, 13, 0); });
  EXPECT_TRUE(check_gemm_full(a.data(), b.data(), c.data(), m, n, k).found);
}

}  // namespace
}  // namespace gpubench::kernels
