// The arithmetic of the intensity sweep and peak-FMA kernels, in plain C++: one correctly rounded
// FP32 FMA step and one correctly rounded FP16x2 FMA step (fma.rn.f16x2), on the host.
//
// Used three ways, so the kernels, their emulation and their verification agree by construction:
//  - under the host SIMT shim (families/intensity/intensity.cuh) these ARE the device operations;
//  - the harness verifies GPU and host outputs against the same recurrence computed with them;
//  - the emulation tests compare the emulated kernels with them.
// Both steps reproduce the hardware instruction bit for bit (IEEE 754 fused multiply-add, one
// rounding, round to nearest even), so a reference result is exact, not approximate.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/half_bits.h"

namespace gpubench::kernels::intensity {

/// One FP32 step of the recurrence x <- x * a + b with a single rounding (fma.rn.f32).
inline float fma_step_f32(float x, float a, float b) { return std::fma(x, a, b); }

/// `k` FP32 steps of x <- x * a + b.
inline float fma_chain_f32(float x, float a, float b, long long k) {
  for (long long i = 0; i < k; ++i) x = fma_step_f32(x, a, b);
  return x;
}

namespace detail {

/// Rounds the exact value hi + lo (|lo| <= ulp(hi)/2, as TwoSum returns) to the nearest float
/// with round-to-odd. Round-to-odd to 24 bits followed by round-to-nearest to 11 bits equals a
/// single round-to-nearest to 11 bits (24 >= 11 + 2), which is how the FP16 FMA below gets its
/// one rounding without a binary16 arithmetic type.
inline float round_to_odd_float(double hi, double lo) {
  // First hi + lo to odd in double: hi is already the nearest double; if the sum was inexact
  // (lo != 0) and hi's last bit is even, step one ulp towards lo.
  if (lo != 0.0) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &hi, sizeof bits);
    if ((bits & 1u) == 0) hi = std::nextafter(hi, lo > 0 ? INFINITY : -INFINITY);
  }
  // Then the double to odd in float.
  float f = static_cast<float>(hi);
  if (static_cast<double>(f) != hi) {
    std::uint32_t fb = 0;
    std::memcpy(&fb, &f, sizeof fb);
    if ((fb & 1u) == 0) {
      f = std::nextafter(f, static_cast<double>(f) < hi ? INFINITY : -INFINITY);
    }
  }
  return f;
}

}  // namespace detail

/// One binary16 FMA x * a + b, correctly rounded to nearest even (one lane of fma.rn.f16x2).
/// The product of two halves is exact in double; TwoSum makes the sum exact as hi + lo; then
/// round-to-odd and one round-to-nearest give the single rounding of the hardware instruction.
inline std::uint16_t fma_step_f16(std::uint16_t x, std::uint16_t a, std::uint16_t b) {
  const double p = static_cast<double>(half_bits_to_float(x)) * half_bits_to_float(a);  // exact
  const double c = half_bits_to_float(b);
  const double s = p + c;  // TwoSum (Knuth): s + e == p + c exactly
  const double bp = s - p;
  const double e = (p - (s - bp)) + (c - bp);
  if (!std::isfinite(s)) return float_to_half_bits(static_cast<float>(s));
  return float_to_half_bits(detail::round_to_odd_float(s, e));
}

/// fma.rn.f16x2 on packed half2 words (low half in bits 0..15): both lanes independently.
inline std::uint32_t fma_step_f16x2(std::uint32_t x, std::uint32_t a, std::uint32_t b) {
  const auto lo =
      fma_step_f16(static_cast<std::uint16_t>(x), static_cast<std::uint16_t>(a), static_cast<std::uint16_t>(b));
  const auto hi = fma_step_f16(static_cast<std::uint16_t>(x >> 16), static_cast<std::uint16_t>(a >> 16),
                               static_cast<std::uint16_t>(b >> 16));
  return static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 16);
}

/// `k` FP16x2 steps of x <- x * a + b on a packed half2 word.
inline std::uint32_t fma_chain_f16x2(std::uint32_t x, std::uint32_t a, std::uint32_t b, long long k) {
  for (long long i = 0; i < k; ++i) x = fma_step_f16x2(x, a, b);
  return x;
}

/// A half2 word holding `v` (rounded to half) in both lanes.
inline std::uint32_t splat_half2(float v) {
  const std::uint32_t h = float_to_half_bits(v);
  return h | (h << 16);
}

/// The recurrence's coefficients. |a| < 1 makes x converge to the fixed point b / (1 - a)
/// instead of growing, so no chain overflows or underflows however long it is; a close to 1
/// keeps the FP32 result dependent on k over the whole sweep (a^2048 = e^-2 here), so an output
/// with a wrong number of steps fails verification.
struct Coefficients {
  static constexpr float kA32 = 1.0f - 1.0f / 1024.0f;  ///< exact in binary32
  static constexpr float kB32 = 3.0f / 1024.0f;         ///< fixed point 3
  static constexpr float kA16 = 0.75f;                  ///< exact in binary16; fixed point 2
  static constexpr float kB16 = 0.5f;                   ///< exact in binary16
  /// Inputs are drawn uniformly from [kLo, kHi): away from the fixed points and from zero.
  static constexpr float kLo = 0.5f;
  static constexpr float kHi = 1.5f;
};

}  // namespace gpubench::kernels::intensity
