// The memory family's kernel bodies (families/memory/memory.cuh) run under the host SIMT
// emulation against families/memory/reference.h:
//  - axpy in each precision at sizes that exercise every part of the kernel (only the scalar
//    tail; one vector; the one-vector remainder loop; full unrolled chunks + remainder + tail),
//    on one block, three blocks and more blocks than there is work, with a = 0.5 (the rows'
//    scalar) and a = 1/3 (a*x inexact: a non-fused kernel would differ), random finite inputs
//    over the whole exponent range (denormals, negatives, overflow to inf) plus hand-made
//    special pairs (round-to-nearest-even ties, subnormal ties, signed zeros) planted in the
//    bulk and in the tail; outputs past n must stay poisoned;
//  - the special pairs' expected bits computed by hand, so the reference (whose conversions the
//    emulated kernel uses) is checked too, and the data shown to catch a non-fused or
//    truncating kernel;
//  - the checksum at several block counts and every 4-byte misalignment, the partials adding up
//    to checksum_reference and no partial written past the grid;
//  - the transform at rounds 0, 1 and 7, misaligned heads and tails, neighbours untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "families/memory/memory.cuh"
#include "families/memory/memory.h"
#include "families/memory/reference.h"
#include "kernels/half_bits.h"
#include "kernels/simt/simt.h"

namespace {

using gpubench::kernels::AxpyType;
using gpubench::simt::Dim3;
namespace k = gpubench::kernels;
namespace mk = gpubench::kernels::memory_kernels;
namespace ref = gpubench::memory;

constexpr unsigned kThreads = static_cast<unsigned>(mk::kBlockThreads);
constexpr unsigned char kPoisonByte = 0xA5;
constexpr std::uint32_t kPoison = 0x7FC00BADu;

const AxpyType kTypes[] = {AxpyType::fp64, AxpyType::fp32, AxpyType::fp16, AxpyType::bf16};

const char* type_name(AxpyType t) {
  switch (t) {
    case AxpyType::fp64: return "fp64";
    case AxpyType::fp32: return "fp32";
    case AxpyType::fp16: return "fp16";
    case AxpyType::bf16: return "bf16";
  }
  return "?";
}

std::size_t elem_bytes(AxpyType t) { return static_cast<std::size_t>(k::axpy_elem_bytes(t)); }
std::size_t per_vector(AxpyType t) { return 16 / elem_bytes(t); }

/// A 16-byte aligned byte buffer of `bytes` plus a poisoned margin of at least one vector.
class Buffer {
 public:
  explicit Buffer(std::size_t bytes) : bytes_(bytes), storage_(bytes / 16 + 2) {
    std::memset(storage_.data(), kPoisonByte, storage_.size() * 16);
  }
  unsigned char* bytes() { return reinterpret_cast<unsigned char*>(storage_.data()); }
  const unsigned char* bytes() const { return reinterpret_cast<const unsigned char*>(storage_.data()); }
  std::size_t size() const { return bytes_; }
  std::size_t capacity() const { return storage_.size() * 16; }

 private:
  std::size_t bytes_;
  std::vector<uint4> storage_;
};

// ---- element patterns ----

/// A random finite bit pattern of type t: half the time any finite pattern (whole exponent range:
/// zeros, denormals, huge values, both signs), half the time a value in [-4, 4) (similar
/// magnitudes, so the sum really rounds).
std::uint64_t random_finite(AxpyType t, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> near(-4.0, 4.0);
  const bool wide = (rng() & 1u) != 0;
  for (;;) {
    const std::uint64_t r = rng();
    switch (t) {
      case AxpyType::fp64: {
        if (!wide) {
          const double d = near(rng);
          std::uint64_t b = 0;
          std::memcpy(&b, &d, 8);
          return b;
        }
        if (((r >> 52) & 0x7FFu) != 0x7FFu) return r;
        break;
      }
      case AxpyType::fp32: {
        if (!wide) {
          const float f = static_cast<float>(near(rng));
          std::uint32_t b = 0;
          std::memcpy(&b, &f, 4);
          return b;
        }
        const auto b = static_cast<std::uint32_t>(r);
        if (((b >> 23) & 0xFFu) != 0xFFu) return b;
        break;
      }
      case AxpyType::fp16: {
        if (!wide) return k::float_to_half_bits(static_cast<float>(near(rng)));
        const auto h = static_cast<std::uint16_t>(r);
        if (((h >> 10) & 0x1Fu) != 0x1Fu) return h;
        break;
      }
      case AxpyType::bf16: {
        if (!wide) return ref::float_to_bf16_bits(static_cast<float>(near(rng)));
        const auto h = static_cast<std::uint16_t>(r);
        if (((h >> 7) & 0xFFu) != 0xFFu) return h;
        break;
      }
    }
  }
}

void put(AxpyType t, unsigned char* base, std::size_t i, std::uint64_t bits) {
  std::memcpy(base + i * elem_bytes(t), &bits, elem_bytes(t));  // little-endian: low bytes
}

std::uint64_t get(AxpyType t, const unsigned char* base, std::size_t i) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, base + i * elem_bytes(t), elem_bytes(t));
  return bits;
}

/// x, y and the expected out at a = 0.5, bit patterns, worked out by hand.
struct Special {
  std::uint64_t x, y, out;
  const char* what;
};

std::vector<Special> specials(AxpyType t) {
  switch (t) {
    case AxpyType::fp16:
      return {
          {0x1400, 0x3C00, 0x3C00, "1 + 2^-11: tie, down to even"},
          {0x1400, 0x3C01, 0x3C02, "(1 + 2^-10) + 2^-11: tie, up to even"},
          {0x9400, 0xBC00, 0xBC00, "negative tie, down to even"},
          {0x9400, 0xBC01, 0xBC02, "negative tie, up to even"},
          {0x4000, 0x6800, 0x6800, "2048 + 1: tie at ulp 2, to even"},
          {0x4000, 0x6801, 0x6802, "2050 + 1: tie at ulp 2, to even"},
          {0x0001, 0x0000, 0x0000, "half the smallest subnormal: tie to zero"},
          {0x0003, 0x0000, 0x0002, "1.5 subnormal ulps: tie to 2"},
          {0x0001, 0x0001, 0x0002, "subnormal 1 + 0.5: tie to 2"},
          {0x0002, 0x0001, 0x0002, "subnormal exact"},
          {0x0400, 0x83FF, 0x81FF, "normal + negative subnormal = subnormal"},
          {0x8000, 0x8000, 0x8000, "-0 * 0.5 + -0 = -0"},
          {0x8000, 0x0000, 0x0000, "-0 + +0 = +0"},
          {0x7BFF, 0x7BFF, 0x7C00, "65504 * 1.5 overflows to inf"},
          {0xFBFF, 0xFBFF, 0xFC00, "-65504 * 1.5 overflows to -inf"},
          {0x3C00, 0xB800, 0x0000, "0.5 - 0.5 = +0"},
      };
    case AxpyType::bf16:
      return {
          {0x3C00, 0x3F80, 0x3F80, "1 + 2^-8: tie, down to even"},
          {0x3C00, 0x3F81, 0x3F82, "(1 + 2^-7) + 2^-8: tie, up to even"},
          {0xBC00, 0xBF80, 0xBF80, "negative tie, down to even"},
          {0xBC00, 0xBF81, 0xBF82, "negative tie, up to even"},
          {0x0001, 0x0000, 0x0000, "half the smallest subnormal: tie to zero"},
          {0x0003, 0x0000, 0x0002, "1.5 subnormal ulps: tie to 2"},
          {0x0080, 0x8001, 0x003F, "normal + negative subnormal = subnormal"},
          {0x8000, 0x8000, 0x8000, "-0 * 0.5 + -0 = -0"},
          {0x7F7F, 0x7F7F, 0x7F80, "max * 1.5 overflows to inf"},
          {0xFF7F, 0xFF7F, 0xFF80, "-max * 1.5 overflows to -inf"},
      };
    case AxpyType::fp32:
      return {
          {0x34000000, 0x3F800000, 0x3F800000, "1 + 2^-24: tie, down to even"},
          {0x34000000, 0x3F800001, 0x3F800002, "(1 + 2^-23) + 2^-24: tie, up to even"},
          {0xB4000000, 0xBF800001, 0xBF800002, "negative tie, up to even"},
          {0x00000001, 0x00000000, 0x00000000, "half the smallest denormal: tie to zero"},
          {0x00000003, 0x00000000, 0x00000002, "1.5 denormal ulps: tie to 2"},
          {0x00800000, 0x807FFFFF, 0x803FFFFF, "normal + negative denormal = denormal"},
          {0x80000000, 0x80000000, 0x80000000, "-0 * 0.5 + -0 = -0"},
          {0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000, "max * 1.5 overflows to inf"},
      };
    case AxpyType::fp64:
      return {
          {0x3CB0000000000000, 0x3FF0000000000000, 0x3FF0000000000000, "1 + 2^-53: tie, down to even"},
          {0x3CB0000000000000, 0x3FF0000000000001, 0x3FF0000000000002, "(1 + 2^-52) + 2^-53: tie, up"},
          {0x0000000000000001, 0x0000000000000000, 0x0000000000000000, "half the smallest denormal: to zero"},
          {0x0000000000000003, 0x0000000000000000, 0x0000000000000002, "1.5 denormal ulps: tie to 2"},
          {0x8000000000000000, 0x8000000000000000, 0x8000000000000000, "-0 * 0.5 + -0 = -0"},
          {0x7FEFFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000, "max * 1.5 overflows to inf"},
      };
  }
  return {};
}

// ---- axpy ----

/// Runs axpy_kernel<T> as launch_axpy would (the scalar rounded to float below FP64).
void run_axpy(AxpyType t, double a, const Buffer& x, const Buffer& y, Buffer& out, std::size_t n, unsigned blocks) {
  const auto* xv = reinterpret_cast<const uint4*>(x.bytes());
  const auto* yv = reinterpret_cast<const uint4*>(y.bytes());
  auto* ov = reinterpret_cast<uint4*>(out.bytes());
  const Dim3 grid{blocks}, block{kThreads};
  const auto fa = static_cast<float>(a);
  switch (t) {
    case AxpyType::fp64:
      gpubench::simt::launch(grid, block, mk::axpy_kernel<mk::AxpyFp64, mk::kAxpyUnroll>, a, xv, yv, ov, n);
      return;
    case AxpyType::fp32:
      gpubench::simt::launch(grid, block, mk::axpy_kernel<mk::AxpyFp32, mk::kAxpyUnroll>, fa, xv, yv, ov, n);
      return;
    case AxpyType::fp16:
      gpubench::simt::launch(grid, block, mk::axpy_kernel<mk::AxpyFp16, mk::kAxpyUnroll>, fa, xv, yv, ov, n);
      return;
    case AxpyType::bf16:
      gpubench::simt::launch(grid, block, mk::axpy_kernel<mk::AxpyBf16, mk::kAxpyUnroll>, fa, xv, yv, ov, n);
      return;
  }
}

/// Inputs of n random finite elements with the special pairs planted at the start, in the
/// middle and at the very end (the scalar tail when n is not a multiple of the vector).
void make_inputs(AxpyType t, std::size_t n, unsigned seed, Buffer& x, Buffer& y) {
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < n; ++i) {
    put(t, x.bytes(), i, random_finite(t, rng));
    put(t, y.bytes(), i, random_finite(t, rng));
  }
  const auto sp = specials(t);
  for (std::size_t base : {std::size_t{0}, n / 2, n >= sp.size() ? n - sp.size() : 0}) {
    for (std::size_t j = 0; j < sp.size() && base + j < n; ++j) {
      put(t, x.bytes(), base + j, sp[j].x);
      put(t, y.bytes(), base + j, sp[j].y);
    }
  }
}

/// Checks out[0..n) against axpy_element bit for bit and the bytes past n still poisoned.
::testing::AssertionResult matches_reference(AxpyType t, double a, const Buffer& x, const Buffer& y, const Buffer& out,
                                             std::size_t n) {
  Buffer want(n * elem_bytes(t));
  for (std::size_t i = 0; i < n; ++i) ref::axpy_element(t, a, x.bytes(), y.bytes(), want.bytes(), i);
  for (std::size_t i = 0; i < n; ++i) {
    if (get(t, out.bytes(), i) != get(t, want.bytes(), i)) {
      return ::testing::AssertionFailure()
             << "out[" << i << "] = 0x" << std::hex << get(t, out.bytes(), i) << ", expected 0x"
             << get(t, want.bytes(), i) << " (x 0x" << get(t, x.bytes(), i) << ", y 0x" << get(t, y.bytes(), i) << ")";
    }
  }
  for (std::size_t b = n * elem_bytes(t); b < out.capacity(); ++b) {
    if (out.bytes()[b] != kPoisonByte) return ::testing::AssertionFailure() << "byte " << b << " past n written";
  }
  return ::testing::AssertionSuccess();
}

/// Sizes (elements) for a grid of `blocks`: tail only; one vector; vectors and a tail below one
/// chunk (the remainder loop only); two full chunks + a partial one + a tail.
std::vector<std::size_t> axpy_sizes(AxpyType t, unsigned blocks) {
  const std::size_t p = per_vector(t);
  const std::size_t threads = std::size_t{blocks} * kThreads;
  const std::size_t chunk = static_cast<std::size_t>(mk::kAxpyUnroll) * threads * p;
  std::vector<std::size_t> sizes = {1, p, p + 1, 37 * p + p - 1, 2 * chunk + threads * p + 5 * p + p - 1};
  if (p > 2) sizes.push_back(p - 1);
  return sizes;
}

std::string where(AxpyType t, double a, std::size_t n, unsigned blocks) {
  return std::string(type_name(t)) + ", a = " + std::to_string(a) + ", n = " + std::to_string(n) + ", " +
         std::to_string(blocks) + " blocks";
}

TEST(MemoryAxpyEmulation, MatchesReferenceBitForBitAtOddSizes) {
  for (AxpyType t : kTypes) {
    for (unsigned blocks : {1u, 3u}) {
      for (std::size_t n : axpy_sizes(t, blocks)) {
        for (double a : {ref::kAxpyScalar, 1.0 / 3.0, -2.75}) {
          SCOPED_TRACE(where(t, a, n, blocks));
          Buffer x(n * elem_bytes(t)), y(n * elem_bytes(t)), out(n * elem_bytes(t));
          make_inputs(t, n, static_cast<unsigned>(n * 7 + blocks), x, y);
          run_axpy(t, a, x, y, out, n, blocks);
          ASSERT_TRUE(matches_reference(t, a, x, y, out, n));
        }
      }
    }
  }
}

// More blocks than vectors: the extra threads have nothing to do and must write nothing.
TEST(MemoryAxpyEmulation, MoreBlocksThanWork) {
  for (AxpyType t : kTypes) {
    const std::size_t n = 5 * per_vector(t) + 1;
    SCOPED_TRACE(type_name(t));
    Buffer x(n * elem_bytes(t)), y(n * elem_bytes(t)), out(n * elem_bytes(t));
    make_inputs(t, n, 3, x, y);
    run_axpy(t, ref::kAxpyScalar, x, y, out, n, 40);
    ASSERT_TRUE(matches_reference(t, ref::kAxpyScalar, x, y, out, n));
  }
}

TEST(MemoryAxpyEmulation, ZeroElementsWritesNothing) {
  for (AxpyType t : kTypes) {
    Buffer x(16), y(16), out(16);
    run_axpy(t, ref::kAxpyScalar, x, y, out, 0, 2);
    for (std::size_t b = 0; b < out.capacity(); ++b) ASSERT_EQ(out.bytes()[b], kPoisonByte) << type_name(t);
  }
}

// The hand-computed results of the special pairs: the reference gets them (so its conversions,
// which the emulated kernel uses, round to nearest even - a truncating one fails the "up to even"
// ties, round-half-away the "down to even" ones - and keep subnormals), and so does the kernel,
// each pair once in a 16-byte vector and once in the scalar tail: pair j sits at element
// (j + shift) mod count for every shift, in n = whole vectors + (vector - 1) elements.
TEST(MemoryAxpyEmulation, SpecialValuesRoundToNearestEven) {
  for (AxpyType t : kTypes) {
    const auto sp = specials(t);
    ASSERT_FALSE(sp.empty());
    const std::size_t p = per_vector(t);
    const std::size_t n = (sp.size() + p - 1) / p * p + p - 1;
    for (std::size_t shift = 0; shift < sp.size(); ++shift) {
      Buffer x(n * elem_bytes(t)), y(n * elem_bytes(t)), out(n * elem_bytes(t)), want(n * elem_bytes(t));
      for (std::size_t i = 0; i < n; ++i) {
        const Special& s = sp[(i + shift) % sp.size()];
        put(t, x.bytes(), i, s.x);
        put(t, y.bytes(), i, s.y);
      }
      run_axpy(t, ref::kAxpyScalar, x, y, out, n, 1);
      for (std::size_t i = 0; i < n; ++i) {
        const Special& s = sp[(i + shift) % sp.size()];
        SCOPED_TRACE(std::string(type_name(t)) + " element " + std::to_string(i) + " of " + std::to_string(n) + ": " +
                     s.what);
        ref::axpy_element(t, ref::kAxpyScalar, x.bytes(), y.bytes(), want.bytes(), i);
        ASSERT_EQ(get(t, want.bytes(), i), s.out) << "reference";
        ASSERT_EQ(get(t, out.bytes(), i), s.out) << "kernel";
      }
      ASSERT_TRUE(matches_reference(t, ref::kAxpyScalar, x, y, out, n));
    }
  }
}

/// out of a*x + y computed with a separate multiply and add (two roundings) in the compute type.
std::uint64_t unfused(AxpyType t, double a, std::uint64_t x, std::uint64_t y) {
  switch (t) {
    case AxpyType::fp64: {
      double dx, dy;
      std::memcpy(&dx, &x, 8);
      std::memcpy(&dy, &y, 8);
      volatile double p = a * dx;  // volatile: no contraction into an FMA
      const double r = p + dy;
      std::uint64_t b;
      std::memcpy(&b, &r, 8);
      return b;
    }
    case AxpyType::fp32: {
      float fx, fy;
      const auto x32 = static_cast<std::uint32_t>(x), y32 = static_cast<std::uint32_t>(y);
      std::memcpy(&fx, &x32, 4);
      std::memcpy(&fy, &y32, 4);
      volatile float p = static_cast<float>(a) * fx;
      const float r = p + fy;
      std::uint32_t b;
      std::memcpy(&b, &r, 4);
      return b;
    }
    case AxpyType::fp16: {
      volatile float p = static_cast<float>(a) * k::half_bits_to_float(static_cast<std::uint16_t>(x));
      return k::float_to_half_bits(p + k::half_bits_to_float(static_cast<std::uint16_t>(y)));
    }
    case AxpyType::bf16: {
      volatile float p = static_cast<float>(a) * ref::bf16_bits_to_float(static_cast<std::uint16_t>(x));
      return ref::float_to_bf16_bits(p + ref::bf16_bits_to_float(static_cast<std::uint16_t>(y)));
    }
  }
  return 0;
}

// The test data can tell a fused kernel from one that rounds a*x first (at a = 1/3, where a*x
// is inexact) in FP64 and FP32, where the product's rounding reaches the result: a kernel
// without FMA would fail MatchesReferenceBitForBitAtOddSizes.
TEST(MemoryAxpyEmulation, DataTellsFusedFromUnfused) {
  for (AxpyType t : {AxpyType::fp64, AxpyType::fp32}) {
    const std::size_t n = 4097;
    const double a = 1.0 / 3.0;
    Buffer x(n * elem_bytes(t)), y(n * elem_bytes(t)), out(n * elem_bytes(t));
    make_inputs(t, n, 77, x, y);
    run_axpy(t, a, x, y, out, n, 2);
    ASSERT_TRUE(matches_reference(t, a, x, y, out, n));
    int differ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      differ += get(t, out.bytes(), i) != unfused(t, a, get(t, x.bytes(), i), get(t, y.bytes(), i)) ? 1 : 0;
    }
    EXPECT_GT(differ, 50) << type_name(t) << ": elements where a non-fused kernel would differ";
  }
}

// ---- checksum ----

std::vector<std::uint32_t> random_words(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint32_t> v(n);
  for (auto& w : v) w = static_cast<std::uint32_t>(rng());
  return v;
}

/// Runs checksum_kernel over words[offset, offset + n) with `blocks` blocks; returns the partials
/// (blocks of them, plus 4 words past the grid that must stay poisoned).
std::vector<std::uint32_t> run_checksum(const std::vector<std::uint32_t>& words, std::size_t offset, std::size_t n,
                                        unsigned blocks) {
  std::vector<std::uint32_t> partial(blocks + 4, kPoison);
  gpubench::simt::launch(Dim3{blocks}, Dim3{kThreads}, mk::checksum_kernel<mk::kChecksumUnroll>,
                         static_cast<const std::uint32_t*>(words.data() + offset), n, partial.data());
  return partial;
}

TEST(MemoryChecksumEmulation, PartialsAddUpToTheSumAtAnyBlockCountAndAlignment) {
  for (unsigned blocks : {1u, 2u, 3u, 8u}) {
    const std::size_t chunk_words = 4u * mk::kChecksumUnroll * kThreads * blocks;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{5},
                          std::size_t{1021}, 2 * chunk_words + 4 * 300 + 7}) {
      for (std::size_t offset : {0u, 1u, 2u, 3u}) {
        SCOPED_TRACE("n = " + std::to_string(n) + ", offset " + std::to_string(offset) + " words, " +
                     std::to_string(blocks) + " blocks");
        std::vector<std::uint32_t> words = random_words(n + 8, static_cast<unsigned>(n + offset + blocks));
        // std::vector<uint32_t> is 16-byte aligned in practice; the offset makes the head.
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(words.data()) % 16, 0u);
        const auto partial = run_checksum(words, offset, n, blocks);
        std::uint32_t total = 0;
        for (unsigned b = 0; b < blocks; ++b) {
          ASSERT_NE(partial[b], kPoison) << "block " << b << " wrote no partial";
          total += partial[b];
        }
        for (unsigned b = blocks; b < partial.size(); ++b) ASSERT_EQ(partial[b], kPoison) << "past the grid";
        EXPECT_EQ(total, ref::checksum_reference(words.data() + offset, n));
      }
    }
  }
}

// Every word counts once: changing one word (in the head, the bulk or the tail) changes the sum
// by exactly the change, and the words around the range are not read.
TEST(MemoryChecksumEmulation, EveryWordCountsOnceAndNothingOutside) {
  const std::size_t n = 4 * kThreads * 5 + 6, offset = 1;
  std::vector<std::uint32_t> words = random_words(n + 8, 5);
  const auto sum_of = [&] {
    const auto p = run_checksum(words, offset, n, 3);
    return p[0] + p[1] + p[2];
  };
  const std::uint32_t before = sum_of();
  for (std::size_t i : {offset, offset + 2, offset + 3, offset + n / 2, offset + n - 1}) {
    words[i] += 1000;
    EXPECT_EQ(sum_of(), before + 1000) << "word " << i;
    words[i] -= 1000;
  }
  words[0] += 1;           // before the range
  words[offset + n] += 1;  // after it
  EXPECT_EQ(sum_of(), before);
}

// ---- transform ----

TEST(MemoryTransformEmulation, EveryWordTransformedInPlace) {
  for (int rounds : {0, 1, 7}) {
    for (unsigned blocks : {1u, 3u}) {
      const std::size_t chunk_words = 4u * mk::kTransformUnroll * kThreads * blocks;
      for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{7}, std::size_t{1001},
                            2 * chunk_words + 4 * 301 + 3}) {
        for (std::size_t offset : {0u, 1u, 3u}) {
          SCOPED_TRACE("rounds " + std::to_string(rounds) + ", n = " + std::to_string(n) + ", offset " +
                       std::to_string(offset) + ", " + std::to_string(blocks) + " blocks");
          const std::vector<std::uint32_t> in = random_words(n + 8, static_cast<unsigned>(n * 3 + offset));
          std::vector<std::uint32_t> data = in;
          gpubench::simt::launch(Dim3{blocks}, Dim3{kThreads}, mk::transform_kernel<mk::kTransformUnroll>,
                                 data.data() + offset, n, rounds);
          for (std::size_t i = 0; i < data.size(); ++i) {
            const bool inside = i >= offset && i < offset + n;
            ASSERT_EQ(data[i], inside ? k::transform_word(in[i], rounds) : in[i]) << "word " << i;
          }
        }
      }
    }
  }
}

// transform_word really is `rounds` LCG steps (rounds 0 is the identity), so a kernel that ran
// one round too few or too many would fail above.
TEST(MemoryTransformEmulation, RoundsAreDistinct) {
  const std::uint32_t x = 0x12345678u;
  EXPECT_EQ(k::transform_word(x, 0), x);
  EXPECT_EQ(k::transform_word(x, 1), x * 1664525u + 1013904223u);
  EXPECT_NE(k::transform_word(x, 7), k::transform_word(x, 6));
  EXPECT_NE(k::transform_word(x, 7), k::transform_word(x, 8));
}

// The verifications' skip-ahead is the kernels' loop, round for round (each bit of the count
// exercised, up to the CUDA workload's largest count), for words with high and low bits set.
TEST(MemoryTransformEmulation, SkipAheadMapIsTheLoop) {
  for (const std::uint32_t x : {0u, 1u, 0x12345678u, 0x80000000u, 0xffffffffu}) {
    std::uint32_t loop = x;
    for (int r = 0; r <= (1 << 14); ++r) {
      ASSERT_EQ(k::transform_map(r)(x), loop) << "x " << x << ", " << r << " rounds";
      loop = k::transform_step(loop);
    }
  }
  EXPECT_EQ(k::transform_map(0)(0xabcdef01u), 0xabcdef01u);
  EXPECT_EQ(k::transform_map(-3)(0xabcdef01u), 0xabcdef01u);  // no rounds, as the loop
  static_assert(k::transform_map(3)(5u) == k::transform_word(5u, 3));
}

}  // namespace
