// Double-precision host reference for the GEMM kernels (C = A * B, row-major, see families/gemm/gemm.h)
// and the tolerance a result must meet. Plain C++: used by the CUDA workloads' verification and
// by the emulation tests alike, so both judge a kernel by the same rule.
//
// Tolerance. Every kernel here (and cuBLAS with CUBLAS_COMPUTE_32F) accumulates in FP32 from
// inputs that are exact in the reference (floats, or halves widened exactly), so the only error
// is FP32 rounding of the sums. For C[i][j] with magnitude mag = sum_k |A[i][k] * B[k][j]| the
// worst case is about K * u * mag (u = 2^-24); with inputs of random sign, partial sums grow like
// sqrt(k) and the error of round-to-nearest accumulation stays near u * mag (at most 3 u * mag
// over 400 dot products at K = 64..11008, in order). Tensor cores may truncate each
// accumulation instead: modelled as exact sums of 16 products added with truncation, the error
// grows like sqrt(K) / 8 (at most 12 u * mag at K = 8192). The bound used,
// 4 u mag (1 + sqrt(K) / 8), holds both with a margin of 4 or more (49 u * mag at K = 8192),
// and rejects the shortcuts a faster kernel could take: inputs rounded to TF32 (at least 146 u *
// mag at K <= 11008, 2000 at K = 64), BF16, or partial sums in FP16 (tests/test_tolerance.cpp).
// Any indexing bug is far outside it: one lost product of two values in [-1, 1] is about 0.25.
//
// BF16 and FP8 rows (cuBLAS BF16, cuBLASLt E4M3; families/gemm/low_precision.h) are judged by the
// same bound: their inputs are exact in the reference and every product is exact in FP32 (8 x 8
// significant bits for BF16, 4 x 4 for E4M3, both within FP32's 24), so again only the FP32
// accumulation rounds. One caveat is FP8-specific: Hopper's FP8 tensor cores add products in an
// accumulator narrower than FP32 (about 14 significant bits aligned to the largest addend, as
// published; cuBLASLt promotes partial sums to FP32 periodically unless FAST_ACCUM is set). The
// E4M3 inputs therefore come from the grid k/8 (low_precision.h, e4m3_gemm_input): every product
// is a multiple of 2^-6 and the partial sums of random-sign products between two promotions stay
// far below 2^7 (their typical size is sqrt(P) x 0.4 over P products: about 5 at P = 128), so such
// an accumulator is exact too and the bound's FP32 allowance is all slack; one lost product
// (>= 2^-6 = 0.0156) is still above the bound at every depth the rows use (0.012 at K = 11008 on
// that grid). tests/test_tolerance.cpp models that accumulator (13 bits, truncating) and shows it
// exact with promotion at every depth, and without it up to K = 4096 only - hence FAST_ACCUM off.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "families/gemm/low_precision.h"
#include "kernels/half_bits.h"

namespace gpubench::kernels {

/// Value of an FP32 input element.
inline double gemm_input_value(float x) { return x; }
/// Value of an FP16 input element (binary16 bit pattern).
inline double gemm_input_value(std::uint16_t h) { return half_bits_to_float(h); }
/// Value of a BF16 input element.
inline double gemm_input_value(Bf16 b) { return bf16_bits_to_float(b.bits); }
/// Value of an FP8 E4M3 input element.
inline double gemm_input_value(E4m3 e) { return e4m3_bits_to_float(e.bits); }

/// Allowed |C - reference| for an element of magnitude `mag` (sum of |products|) at depth k.
inline double gemm_tolerance(int k, double mag) {
  constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24, FP32 accumulation
  return 4.0 * (1.0 + std::sqrt(static_cast<double>(k)) / 8.0) * kUnitRoundoff * mag + 1e-30;
}

/// Reference row i of C: ref[j] and mag[j] for j in [0, n) (k outer, so B streams by rows).
template <class T>
void gemm_reference_row(const T* a, const T* b, int n, int k, int i, double* ref, double* mag) {
  for (int j = 0; j < n; ++j) {
    ref[j] = 0.0;
    mag[j] = 0.0;
  }
  for (int p = 0; p < k; ++p) {
    const double av = gemm_input_value(a[static_cast<std::size_t>(i) * k + p]);
    const T* brow = b + static_cast<std::size_t>(p) * n;
    for (int j = 0; j < n; ++j) {
      const double prod = av * gemm_input_value(brow[j]);
      ref[j] += prod;
      mag[j] += std::fabs(prod);
    }
  }
}

/// Reference column j of C: ref[i] and mag[i] for i in [0, m).
template <class T>
void gemm_reference_col(const T* a, const T* b, int m, int n, int k, int j, double* ref, double* mag) {
  std::vector<double> bcol(static_cast<std::size_t>(k));
  for (int p = 0; p < k; ++p) bcol[p] = gemm_input_value(b[static_cast<std::size_t>(p) * n + j]);
  for (int i = 0; i < m; ++i) {
    const T* arow = a + static_cast<std::size_t>(i) * k;
    double s = 0.0;
    double g = 0.0;
    for (int p = 0; p < k; ++p) {
      const double prod = gemm_input_value(arow[p]) * bcol[p];
      s += prod;
      g += std::fabs(prod);
    }
    ref[i] = s;
    mag[i] = g;
  }
}

/// The first element of C outside tolerance, if any.
struct GemmMismatch {
  bool found = false;
  int row = 0;
  int col = 0;
  double expected = 0;
  double actual = 0;
  double tolerance = 0;
  /// "C[row][col] = actual, expected expected (tolerance t)".
  std::string describe() const {
    char buf[200];
    std::snprintf(buf, sizeof buf, "C[%d][%d] = %.9g, expected %.9g (tolerance %.3g)", row, col, actual, expected,
                  tolerance);
    return buf;
  }
};

/// Checks row i of C (all n columns) against the reference; NaN (poison) always fails.
template <class T>
GemmMismatch check_gemm_row(const T* a, const T* b, const float* c, int n, int k, int i) {
  std::vector<double> ref(static_cast<std::size_t>(n)), mag(static_cast<std::size_t>(n));
  gemm_reference_row(a, b, n, k, i, ref.data(), mag.data());
  for (int j = 0; j < n; ++j) {
    const double got = c[static_cast<std::size_t>(i) * n + j];
    const double tol = gemm_tolerance(k, mag[j]);
    if (!(std::fabs(got - ref[j]) <= tol)) return GemmMismatch{true, i, j, ref[j], got, tol};
  }
  return {};
}

/// Checks column j of C (all m rows) against the reference.
template <class T>
GemmMismatch check_gemm_col(const T* a, const T* b, const float* c, int m, int n, int k, int j) {
  std::vector<double> ref(static_cast<std::size_t>(m)), mag(static_cast<std::size_t>(m));
  gemm_reference_col(a, b, m, n, k, j, ref.data(), mag.data());
  for (int i = 0; i < m; ++i) {
    const double got = c[static_cast<std::size_t>(i) * n + j];
    const double tol = gemm_tolerance(k, mag[i]);
    if (!(std::fabs(got - ref[i]) <= tol)) return GemmMismatch{true, i, j, ref[i], got, tol};
  }
  return {};
}

/// Checks every element of C (small sizes).
template <class T>
GemmMismatch check_gemm_full(const T* a, const T* b, const float* c, int m, int n, int k) {
  for (int i = 0; i < m; ++i) {
    GemmMismatch r = check_gemm_row(a, b, c, n, k, i);
    if (r.found) return r;
  }
  return {};
}

/// Rows (or columns) a sampled check covers in a dimension of `extent`: the first and last two
/// (tails of partial tiles live there) and `count` more spread by a seeded LCG.
inline std::vector<int> gemm_sample_indices(int extent, int count, std::uint64_t seed) {
  std::vector<int> out;
  auto add = [&](int v) {
    if (v < 0 || v >= extent) return;
    for (int x : out) {
      if (x == v) return;
    }
    out.push_back(v);
  };
  add(0);
  add(1);
  add(extent - 2);
  add(extent - 1);
  std::uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int i = 0; i < count; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    add(static_cast<int>((s >> 33) % static_cast<std::uint64_t>(extent)));
  }
  return out;
}

}  // namespace gpubench::kernels
