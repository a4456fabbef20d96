// IEEE 754 binary16 <-> float conversion on raw 16-bit patterns, in plain C++.
// The FP16 GEMM keeps half values as std::uint16_t bit patterns everywhere outside device code
// (harness buffers, host references, the SIMT emulation of mma.sync), so neither the harness nor
// the emulation tests need cuda_fp16.h or a CUDA toolkit.
#pragma once

#include <cstdint>
#include <cstring>

namespace gpubench::kernels {

/// The float value of a binary16 bit pattern (exact: every half is representable as a float).
inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1Fu;
  std::uint32_t man = h & 0x3FFu;
  std::uint32_t bits = 0;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (man << 13);  // inf / NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);  // normal: rebias 15 -> 127
  } else if (man == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half: normalise the mantissa into a normal float.
    exp = 113;  // 127 - 15 + 1
    while ((man & 0x400u) == 0) {
      man <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((man & 0x3FFu) << 13);
  }
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// The binary16 bit pattern nearest to `f` (round to nearest, ties to even; overflow to inf).
inline std::uint16_t float_to_half_bits(float f) {
  std::uint32_t x = 0;
  std::memcpy(&x, &f, sizeof x);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf or NaN (NaN stays a quiet NaN)
    return static_cast<std::uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal
    const std::uint32_t exp = abs >> 23;
    const std::uint32_t man = (abs & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126u - exp;  // 14 + (113 - exp)
    std::uint32_t half = man >> shift;
    const std::uint32_t rem = man & ((1u << shift) - 1u);
    const std::uint32_t mid = 1u << (shift - 1u);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = ((abs >> 13) - (112u << 10));  // rebias and truncate
  const std::uint32_t rem = abs & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: fine
  return static_cast<std::uint16_t>(sign | half);
}

}  // namespace gpubench::kernels
