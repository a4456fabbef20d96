// Host references of the memory family's kernels (families/memory/memory.h): bfloat16 bits, the
// streaming update per element in each precision, and the checksum. Plain C++ shared by the CUDA
// workloads' verification, the host backend's workloads and the emulation tests.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "families/memory/memory.h"
#include "kernels/half_bits.h"

namespace gpubench::memory {

/// The float value of a bfloat16 bit pattern (exact: the upper half of a float).
inline float bf16_bits_to_float(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// The bfloat16 bit pattern nearest to `f` (round to nearest, ties to even; NaN stays a quiet NaN).
inline std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t x = 0;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

/// out[i] of launch_axpy for element i: the fused multiply-add in the compute type, rounded to
/// the storage type. x, y, out point at arrays of `type`.
inline void axpy_element(kernels::AxpyType type, double a, const void* x, const void* y, void* out, std::size_t i) {
  switch (type) {
    case kernels::AxpyType::fp64: {
      const double r = std::fma(a, static_cast<const double*>(x)[i], static_cast<const double*>(y)[i]);
      static_cast<double*>(out)[i] = r;
      return;
    }
    case kernels::AxpyType::fp32: {
      const float r =
          std::fmaf(static_cast<float>(a), static_cast<const float*>(x)[i], static_cast<const float*>(y)[i]);
      static_cast<float*>(out)[i] = r;
      return;
    }
    case kernels::AxpyType::fp16: {
      const auto* xs = static_cast<const std::uint16_t*>(x);
      const auto* ys = static_cast<const std::uint16_t*>(y);
      const float r =
          std::fmaf(static_cast<float>(a), kernels::half_bits_to_float(xs[i]), kernels::half_bits_to_float(ys[i]));
      static_cast<std::uint16_t*>(out)[i] = kernels::float_to_half_bits(r);
      return;
    }
    case kernels::AxpyType::bf16: {
      const auto* xs = static_cast<const std::uint16_t*>(x);
      const auto* ys = static_cast<const std::uint16_t*>(y);
      const float r = std::fmaf(static_cast<float>(a), bf16_bits_to_float(xs[i]), bf16_bits_to_float(ys[i]));
      static_cast<std::uint16_t*>(out)[i] = float_to_bf16_bits(r);
      return;
    }
  }
}

/// The scalar of every axpy row: exact in every precision, so a*x is exact and only the sum rounds.
constexpr double kAxpyScalar = 0.5;

/// The wrapping sum of in[0..n): what launch_checksum's partials add up to.
inline std::uint32_t checksum_reference(const std::uint32_t* in, std::size_t n) {
  std::uint32_t s = 0;
  for (std::size_t i = 0; i < n; ++i) s += in[i];
  return s;
}

}  // namespace gpubench::memory
