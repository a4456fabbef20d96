// BF16 and FP8 E4M3 on the host: conversions to and from float and the GEMM rows' input values.
// Plain C++ (no CUDA include): the CUDA workloads build their inputs with it, the double-precision
// reference (families/gemm/reference.h) reads them with it, and the fake cuBLAS computes with it.
//
// BF16: the upper half of an IEEE binary32 (1 sign, 8 exponent, 7 mantissa bits); float -> BF16
// rounds to nearest even, NaN stays a (quiet) NaN.
// E4M3 (the OCP 8-bit format NVIDIA calls __nv_fp8_e4m3): 1 sign, 4 exponent (bias 7), 3 mantissa
// bits; subnormals down to 2^-9, largest finite 448 (S.1111.110), no infinities, NaN = S.1111.111.
// float -> E4M3 rounds to nearest even and saturates to +-448 as the GPU's
// cvt.rn.satfinite.e4m3x2.f32 does (an infinity too); NaN stays NaN.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace gpubench::kernels {

/// A BF16 value (its bit pattern): a distinct type, so the GEMM reference reads it as BF16 and
/// never as the FP16 bits a plain std::uint16_t holds.
struct Bf16 {
  std::uint16_t bits;
};
/// An FP8 E4M3 value (its bit pattern).
struct E4m3 {
  std::uint8_t bits;
};
static_assert(sizeof(Bf16) == 2 && sizeof(E4m3) == 1, "device arrays of them are plain BF16 / FP8 arrays");

/// The float a BF16 bit pattern holds (exact).
inline float bf16_bits_to_float(std::uint16_t b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// `f` rounded to BF16, round to nearest even (overflow to infinity, as in IEEE rounding).
inline std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // quiet, sign kept
  const std::uint32_t lsb = (u >> 16) & 1u;
  return static_cast<std::uint16_t>((u + 0x7FFFu + lsb) >> 16);
}

/// The float an E4M3 bit pattern holds (exact; NaN for S.1111.111).
inline float e4m3_bits_to_float(std::uint8_t b) {
  const int exponent = (b >> 3) & 0xF;
  const int mantissa = b & 0x7;
  const float sign = (b & 0x80u) ? -1.0f : 1.0f;
  if (exponent == 0xF && mantissa == 0x7) return std::nanf("");
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m x 2^-9
  return sign * std::ldexp(static_cast<float>(8 + mantissa), exponent - 7 - 3);
}

/// Largest finite E4M3 value.
constexpr float kE4m3Max = 448.0f;

/// `f` rounded to E4M3: round to nearest even, saturating to +-448 (infinities too); NaN -> NaN.
inline std::uint8_t float_to_e4m3_bits(float f) {
  const std::uint8_t sign = std::signbit(f) ? 0x80u : 0x00u;
  if (std::isnan(f)) return static_cast<std::uint8_t>(sign | 0x7Fu);
  const float a = std::fabs(f);
  if (a >= kE4m3Max) return static_cast<std::uint8_t>(sign | 0x7Eu);
  if (a < 0x1p-6f) {
    // Subnormal range (and the rounding up into the smallest normal): multiples of 2^-9. The
    // scaling is exact; std::nearbyint rounds half to even in the default rounding mode.
    const int m = static_cast<int>(std::nearbyint(a * 512.0f));  // 0..8; 8 is the encoding of 2^-6
    return static_cast<std::uint8_t>(sign | m);
  }
  int e2 = 0;
  std::frexp(a, &e2);  // a = fr x 2^e2, fr in [0.5, 1): the unbiased exponent is e2 - 1
  int exponent = e2 - 1;
  int q = static_cast<int>(std::nearbyint(std::ldexp(a, 3 - exponent)));  // 8..16: 1.mmm x 8
  if (q == 16) {
    q = 8;
    ++exponent;
  }
  // a < 448 rounds to at most 448 = 1.75 x 2^8 (exponent field 15, mantissa 6): never NaN's code.
  return static_cast<std::uint8_t>(sign | ((exponent + 7) << 3) | (q - 8));
}

/// A BF16 GEMM input from a seeded uniform value u in [-1, 1): u rounded to BF16, an exact zero
/// replaced by 0.5 (the FP32 rows' rule: no zeros, so an unwritten product cannot hide).
inline Bf16 bf16_gemm_input(float u) {
  const std::uint16_t b = float_to_bf16_bits(u);
  return Bf16{(b & 0x7FFFu) == 0 ? float_to_bf16_bits(0.5f) : b};
}

/// An E4M3 GEMM input from a seeded uniform value u in [-1, 1): one of the 16 values k/8,
/// k = +-1..+-8, each equally likely (all exact in E4M3). On this grid every product is a
/// multiple of 2^-6 of magnitude at most 1, so any sum of up to 2^18 of them is exact in FP32 -
/// and in a tensor core's narrower FP8 accumulator too while it is promoted to FP32 periodically
/// (see families/gemm/reference.h) - and one lost or doubled product (>= 2^-6) exceeds the GEMM
/// tolerance at every depth the rows use.
inline E4m3 e4m3_gemm_input(float u) {
  int k = static_cast<int>(std::floor(u * 8.0f));  // -8..7 for u in [-1, 1)
  if (k < -8) k = -8;
  if (k > 7) k = 7;
  if (k >= 0) ++k;  // 1..8: no zero
  return E4m3{float_to_e4m3_bits(static_cast<float>(k) / 8.0f)};
}

/// Why cuBLASLt's FP8 GEMM (compute/fp8gemm/cublaslt) cannot take this shape, or nullptr. The
/// cuBLAS documentation of cublasLtMatmul lists, among the FP8 requirements, that all matrix
/// dimensions meet Tensor Core Usage's 16-byte alignment: with 1-byte E4M3 elements, M, N and K
/// multiples of 16.
inline const char* fp8_gemm_shape_error(long long m, long long n, long long k) {
  if (m <= 0 || n <= 0 || k <= 0) return "M, N and K must be positive";
  if (m * k >= (1LL << 31) || k * n >= (1LL << 31) || m * n >= (1LL << 31)) {
    return "a matrix has 2^31 or more elements (32-bit indexing)";
  }
  if (m % 16 != 0 || n % 16 != 0 || k % 16 != 0) {
    return "cuBLASLt FP8 needs M, N and K multiples of 16 (16-byte aligned E4M3 rows)";
  }
  return nullptr;
}

}  // namespace gpubench::kernels
