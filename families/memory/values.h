// Inputs and the check of the axpy rows, shared by both backends: seeded values in [-1, 1) in a
// precision's storage format, and the bit-exact comparison with memory::axpy_element. The
// functions take an index range so the host backend can spread them over its threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

#include "families/memory/reference.h"
#include "harness/backend.h"
#include "harness/random.h"

namespace gpubench::memory {

/// Element i of input `seed`: uniform in [-1, 1) from 53 random bits (seekable, so a range can
/// be filled on its own).
inline double input_value(std::uint64_t seed, std::size_t i) {
  const double u = static_cast<double>(splitmix64(seed ^ (i * 0x2545f4914f6cdd1dull)) >> 11) * 0x1.0p-53;
  return -1.0 + 2.0 * u;
}

/// p[b..e) = the inputs of `seed` stored in `type` (rounded to nearest even).
inline void fill_inputs(kernels::AxpyType type, void* p, std::size_t b, std::size_t e, std::uint64_t seed) {
  for (std::size_t i = b; i < e; ++i) {
    const double v = input_value(seed, i);
    switch (type) {
      case kernels::AxpyType::fp64: static_cast<double*>(p)[i] = v; break;
      case kernels::AxpyType::fp32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
      case kernels::AxpyType::fp16:
        static_cast<std::uint16_t*>(p)[i] = kernels::float_to_half_bits(static_cast<float>(v));
        break;
      case kernels::AxpyType::bf16:
        static_cast<std::uint16_t*>(p)[i] = float_to_bf16_bits(static_cast<float>(v));
        break;
    }
  }
}

/// Element i of `p` (elements of `type`) as an unsigned integer of its width, for exact comparison.
inline std::uint64_t stored_bits(kernels::AxpyType type, const void* p, std::size_t i) {
  const std::size_t elem = static_cast<std::size_t>(kernels::axpy_elem_bytes(type));
  std::uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const unsigned char*>(p) + i * elem, elem);  // little-endian
  return bits;
}

/// The bits axpy_element gives element i of the output.
inline std::uint64_t expected_bits(kernels::AxpyType type, const void* x, const void* y, std::size_t i) {
  const std::size_t elem = static_cast<std::size_t>(kernels::axpy_elem_bytes(type));
  unsigned char want[8] = {};
  // axpy_element computes element i of its arrays: given one-element windows, element 0.
  axpy_element(type, kAxpyScalar, static_cast<const unsigned char*>(x) + i * elem,
               static_cast<const unsigned char*>(y) + i * elem, want, 0);
  return stored_bits(type, want, 0);
}

/// The first index in [b, e) whose output differs from axpy_element, e when none does.
inline std::size_t first_wrong_element(kernels::AxpyType type, const void* x, const void* y, const void* out,
                                       std::size_t b, std::size_t e) {
  for (std::size_t i = b; i < e; ++i)
    if (stored_bits(type, out, i) != expected_bits(type, x, y, i)) return i;
  return e;
}

/// The verdict on an output whose first wrong element is `i` (n: none).
inline Verification axpy_verdict(kernels::AxpyType type, const void* x, const void* y, const void* out, std::size_t i,
                                 std::size_t n) {
  if (i == n) return Verification::pass();
  std::ostringstream s;
  s << "element " << i << " of " << n << ": expected 0x" << std::hex << expected_bits(type, x, y, i) << ", got 0x"
    << stored_bits(type, out, i);
  return Verification::fail(s.str());
}

}  // namespace gpubench::memory
