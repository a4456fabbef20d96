// The device-memory kernel bodies (families/global_memory/global_memory.cuh) run under the host SIMT
// emulation at odd sizes, misaligned heads, tails and several grid shapes (one block, fewer
// blocks than one pass needs, more blocks than there is work), against scalar references.
// Outputs sit between guard bytes that must stay untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "families/global_memory/global_memory.cuh"
#include "kernels/simt/simt.h"

namespace {

using gpubench::simt::Dim3;
using gpubench::simt::launch;
namespace k = gpubench::kernels;

constexpr unsigned char kGuard = 0xA5;
constexpr std::uint32_t kPoison = 0x7FC00BADu;

/// Grid shapes: (blocks, threads per block).
struct Shape {
  unsigned blocks;
  unsigned threads;
};
const Shape kShapes[] = {{1, 32}, {1, 256}, {3, 256}, {2, 96}, {40, 256}};

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

std::vector<std::uint32_t> random_words(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint32_t> v(n);
  for (auto& w : v) w = static_cast<std::uint32_t>(rng());
  return v;
}

std::string where(std::size_t size, std::size_t offset, Shape s) {
  return "size " + std::to_string(size) + ", offset " + std::to_string(offset) + ", grid " + std::to_string(s.blocks) +
         "x" + std::to_string(s.threads);
}

// 16-byte aligned buffers with room for an offset on either side.
struct alignas(16) Block16 {
  unsigned char b[16];
};

const std::size_t kCopySizes[] = {0, 1, 15, 16, 17, 31, 33, 255, 4095, 4096, 4097, 65549, (1u << 18) + 7};

TEST(MemoryKernels, CopyCoAlignedAnySize) {
  for (std::size_t bytes : kCopySizes) {
    for (std::size_t offset : {0u, 1u, 7u, 15u}) {
      for (Shape s : kShapes) {
        const auto src_data = random_bytes(bytes + 64, static_cast<unsigned>(bytes + offset));
        std::vector<Block16> src((bytes + 64) / 16 + 1), dst((bytes + 64) / 16 + 1);
        auto* sp = reinterpret_cast<unsigned char*>(src.data());
        auto* dp = reinterpret_cast<unsigned char*>(dst.data());
        std::memcpy(sp, src_data.data(), bytes + 64);
        std::memset(dp, kGuard, dst.size() * 16);
        launch(Dim3{s.blocks}, Dim3{s.threads}, k::copy_kernel<k::kMemoryUnroll>,
               static_cast<const unsigned char*>(sp + offset), dp + offset, bytes, 1, 1, std::size_t{0});
        for (std::size_t i = 0; i < dst.size() * 16; ++i) {
          const bool inside = i >= offset && i < offset + bytes;
          const unsigned char expected = inside ? sp[i] : kGuard;
          ASSERT_EQ(dp[i], expected) << "byte " << i << ", " << where(bytes, offset, s);
        }
      }
    }
  }
}

TEST(MemoryKernels, CopyRelativelyMisalignedFallsBackToBytes) {
  for (std::size_t bytes : {1u, 17u, 4097u, 70001u}) {
    for (Shape s : {Shape{1, 64}, Shape{7, 256}}) {
      const auto data = random_bytes(bytes + 32, static_cast<unsigned>(bytes));
      std::vector<Block16> src((bytes + 32) / 16 + 1), dst((bytes + 32) / 16 + 1);
      auto* sp = reinterpret_cast<unsigned char*>(src.data());
      auto* dp = reinterpret_cast<unsigned char*>(dst.data());
      std::memcpy(sp, data.data(), bytes + 32);
      std::memset(dp, kGuard, dst.size() * 16);
      launch(Dim3{s.blocks}, Dim3{s.threads}, k::copy_kernel<k::kMemoryUnroll>,
             static_cast<const unsigned char*>(sp + 3), dp + 8, bytes, 1, 1, std::size_t{0});
      for (std::size_t i = 0; i < dst.size() * 16; ++i) {
        const bool inside = i >= 8 && i < 8 + bytes;
        ASSERT_EQ(dp[i], inside ? sp[i - 8 + 3] : kGuard) << "byte " << i << ", " << where(bytes, 3, s);
      }
    }
  }
}

TEST(MemoryKernels, ReadSumsEveryElementOnce) {
  for (std::size_t n : {0u, 1u, 3u, 4u, 5u, 7u, 1023u, 4097u, 30011u}) {
    for (std::size_t offset : {0u, 1u, 3u}) {  // elements: 0, 4, 12 bytes off a 16-byte boundary
      for (Shape s : kShapes) {
        if (s.threads % 32 != 0) continue;  // the block reduction needs whole warps
        std::vector<std::uint32_t> storage = random_words(n + 8, static_cast<unsigned>(n * 7 + offset));
        const std::uint32_t* in = storage.data() + offset;
        // (std::vector<uint32_t> data is 16-byte aligned from operator new)
        const std::uint32_t expected = std::accumulate(in, in + n, std::uint32_t{0});
        std::vector<std::uint32_t> partial(s.blocks + 1, kPoison);
        launch(Dim3{s.blocks}, Dim3{s.threads}, k::read_kernel<k::kMemoryUnroll>, in, n, partial.data(), 1, 1,
               std::size_t{0});
        std::uint32_t sum = 0;
        for (unsigned b = 0; b < s.blocks; ++b) {
          ASSERT_NE(partial[b], kPoison) << "block " << b << " wrote no partial, " << where(n, offset, s);
          sum += partial[b];
        }
        EXPECT_EQ(sum, expected) << where(n, offset, s);
        EXPECT_EQ(partial[s.blocks], kPoison) << "wrote past the partials, " << where(n, offset, s);
      }
    }
  }
}

// Every block reads the whole set, `passes` times: each block's partial is passes x the sum.
// Sizes below, at and above one unrolled sweep of a block (4 x threads vectors); odd grids.
TEST(MemoryKernels, BlockSetReadEveryBlockReadsTheWholeSet) {
  for (std::size_t n : {0u, 4u, 8u, 1020u, 1024u, 4096u, 4100u, 20004u}) {
    for (Shape s : kShapes) {
      if (s.threads % 32 != 0) continue;  // the block reduction needs whole warps
      for (int passes : {1, 3}) {
        const std::vector<std::uint32_t> in = random_words(n, static_cast<unsigned>(n + 11));
        const auto expected = static_cast<std::uint32_t>(std::accumulate(in.begin(), in.end(), std::uint32_t{0}) *
                                                         static_cast<std::uint32_t>(passes));
        std::vector<std::uint32_t> partial(s.blocks + 1, kPoison);
        launch(Dim3{s.blocks}, Dim3{s.threads}, k::block_set_read_kernel<k::kMemoryUnroll>, in.data(), n,
               partial.data(), passes);
        for (unsigned b = 0; b < s.blocks; ++b)
          EXPECT_EQ(partial[b], expected) << "block " << b << ", passes " << passes << ", " << where(n, 0, s);
        EXPECT_EQ(partial[s.blocks], kPoison) << "wrote past the partials, " << where(n, 0, s);
      }
    }
  }
}

TEST(MemoryKernels, ReadSumWrapsModulo2To32) {
  std::vector<std::uint32_t> in(1000, 0xFFFFFFFFu);
  std::vector<std::uint32_t> partial(4, kPoison);
  launch(Dim3{4}, Dim3{128}, k::read_kernel<k::kMemoryUnroll>, static_cast<const std::uint32_t*>(in.data()), in.size(),
         partial.data(), 1, 1, std::size_t{0});
  std::uint32_t sum = 0;
  for (std::uint32_t p : partial) sum += p;
  EXPECT_EQ(sum, static_cast<std::uint32_t>(0u - 1000u));  // 1000 x (2^32 - 1) mod 2^32
}

// Several passes in one launch, rotating over slots (kernels::Passes): 5 passes over 3 slots
// touch slots 0, 1, 2, 0, 1. Every slot of the copy and the write is complete; the read sums
// each pass's slot.
TEST(MemoryKernels, PassesRotateOverSlots) {
  constexpr int kPasses = 5, kSlots = 3;
  for (std::size_t n : {1u, 5u, 1023u, 4099u}) {
    const std::size_t stride_words = (n + 63) / 64 * 64 + 64;  // a 256-byte multiple, past the data
    for (Shape s : kShapes) {
      if (s.threads % 32 != 0) continue;
      auto in = random_words(stride_words * kSlots, static_cast<unsigned>(n));
      std::vector<std::uint32_t> out(stride_words * kSlots, kPoison);
      launch(Dim3{s.blocks}, Dim3{s.threads}, k::copy_kernel<k::kMemoryUnroll>,
             reinterpret_cast<const unsigned char*>(in.data()), reinterpret_cast<unsigned char*>(out.data()), n * 4,
             kPasses, kSlots, stride_words * 4);
      for (std::size_t i = 0; i < out.size(); ++i) {
        const bool inside = i % stride_words < n;
        ASSERT_EQ(out[i], inside ? in[i] : kPoison) << "copy word " << i << ", " << where(n, 0, s);
      }
      std::vector<std::uint32_t> partial(s.blocks, kPoison);
      launch(Dim3{s.blocks}, Dim3{s.threads}, k::read_kernel<k::kMemoryUnroll>,
             static_cast<const std::uint32_t*>(in.data()), n, partial.data(), kPasses, kSlots, stride_words);
      std::uint32_t expected = 0;
      for (int p = 0; p < kPasses; ++p) {
        const std::uint32_t* slot = in.data() + static_cast<std::size_t>(p % kSlots) * stride_words;
        expected = std::accumulate(slot, slot + n, expected);
      }
      EXPECT_EQ(std::accumulate(partial.begin(), partial.end(), std::uint32_t{0}), expected) << where(n, 0, s);
      std::vector<std::uint32_t> filled(stride_words * kSlots, kPoison);
      launch(Dim3{s.blocks}, Dim3{s.threads}, k::write_kernel<k::kMemoryUnroll>, filled.data(), n, 7u, kPasses, kSlots,
             stride_words);
      for (std::size_t i = 0; i < filled.size(); ++i) {
        const std::size_t j = i % stride_words;
        ASSERT_EQ(filled[i], j < n ? 7u + static_cast<std::uint32_t>(j) : kPoison) << "write word " << i;
      }
    }
  }
}

TEST(MemoryKernels, WriteFillsSeedPlusIndex) {
  for (std::size_t n : {1u, 2u, 3u, 4u, 5u, 17u, 1023u, 4099u, 65543u}) {
    for (std::size_t offset : {0u, 1u, 3u}) {
      for (Shape s : kShapes) {
        const std::uint32_t seed = 0xFFFFFFF0u;  // wraps within the first 16 elements
        std::vector<std::uint32_t> out(n + 8, kPoison);
        launch(Dim3{s.blocks}, Dim3{s.threads}, k::write_kernel<k::kMemoryUnroll>, out.data() + offset, n, seed, 1, 1,
               std::size_t{0});
        for (std::size_t i = 0; i < out.size(); ++i) {
          const bool inside = i >= offset && i < offset + n;
          const std::uint32_t expected = inside ? seed + static_cast<std::uint32_t>(i - offset) : kPoison;
          ASSERT_EQ(out[i], expected) << "element " << i << ", " << where(n, offset, s);
        }
      }
    }
  }
}

// The input fill writes the formula of kernels/seeded_words.h at every index of its words (and
// its byte tail), whatever the grid, and nothing after them.
TEST(MemoryKernels, SeededFillWritesTheFormulaAndNothingElse) {
  const std::uint64_t seed = 0x0123456789abcdefull;
  for (std::size_t bytes : {0u, 1u, 3u, 4u, 5u, 7u, 64u, 1027u, 4099u, 65551u}) {
    for (Shape s : kShapes) {
      std::vector<std::uint32_t> out(bytes / 4 + 4, kPoison);
      launch(Dim3{s.blocks}, Dim3{s.threads}, k::seeded_fill_kernel<false>, out.data(), bytes, seed);
      const auto* b = reinterpret_cast<const unsigned char*>(out.data());
      for (std::size_t i = 0; i < bytes / 4; ++i)
        ASSERT_EQ(out[i], k::seeded_word(seed, i)) << "word " << i << ", " << where(bytes, 0, s);
      for (std::size_t t = 0; t < bytes % 4; ++t)
        ASSERT_EQ(b[bytes / 4 * 4 + t], k::seeded_tail_byte(seed, bytes / 4, t)) << "tail byte " << t;
      const auto* poison = reinterpret_cast<const unsigned char*>(&kPoison);
      for (std::size_t i = bytes; i < out.size() * 4; ++i)
        ASSERT_EQ(b[i], poison[i % 4]) << "byte " << i << " after the fill, " << where(bytes, 0, s);

      if (bytes % 4 != 0) continue;  // floats: whole words only
      std::vector<std::uint32_t> f(bytes / 4 + 4, kPoison);
      launch(Dim3{s.blocks}, Dim3{s.threads}, k::seeded_fill_kernel<true>, f.data(), bytes, seed);
      for (std::size_t i = 0; i < f.size(); ++i) {
        const float v = k::seeded_float(seed, i);
        std::uint32_t want_bits;
        std::memcpy(&want_bits, &v, sizeof want_bits);
        ASSERT_EQ(f[i], i < bytes / 4 ? want_bits : kPoison) << "float " << i << ", " << where(bytes, 0, s);
      }
    }
  }
}

// The seeded floats: exact multiples of 2^-23 in [-1, 1), spread over the whole range.
TEST(MemoryKernels, SeededFloatsAreExactAndInRange) {
  double lo = 1, hi = -1;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const float v = k::seeded_float(7, i);
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    const double scaled = static_cast<double>(v) * 8388608.0;
    ASSERT_EQ(scaled, static_cast<double>(static_cast<std::int64_t>(scaled))) << "float " << i;
    const auto top = static_cast<std::int64_t>(k::seeded_bits(7, i) >> 40) - (1 << 23);
    ASSERT_EQ(static_cast<std::int64_t>(scaled), top) << "float " << i;
    lo = std::min(lo, static_cast<double>(v));
    hi = std::max(hi, static_cast<double>(v));
  }
  EXPECT_LT(lo, -0.99);
  EXPECT_GT(hi, 0.99);
}

float as_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

TEST(MemoryKernels, StridedCopiesOnlyMultiplesOfTheStride) {
  for (std::size_t n : {1u, 7u, 100u, 1000u, 4099u}) {
    for (int stride : {1, 2, 3, 4, 7, 8, 32, 33, 1000, 5000}) {
      for (Shape s : kShapes) {
        std::vector<float> in(n);
        const auto words = random_words(n, static_cast<unsigned>(n + stride));
        for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(words[i] % 100000) + 0.5f;
        std::vector<float> out(n + 4, as_float(kPoison));
        launch(Dim3{s.blocks}, Dim3{s.threads}, k::strided_copy_kernel<k::kGatherUnroll>,
               static_cast<const float*>(in.data()), out.data(), n, stride);
        for (std::size_t i = 0; i < out.size(); ++i) {
          const bool touched = i < n && i % static_cast<std::size_t>(stride) == 0;
          ASSERT_EQ(bits(out[i]), touched ? bits(in[i]) : kPoison)
              << "element " << i << ", stride " << stride << ", " << where(n, 0, s);
        }
      }
    }
  }
}

TEST(MemoryKernels, StridedWithNonPositiveStrideTouchesNothing) {
  std::vector<float> in(64, 1.0f), out(64, as_float(kPoison));
  launch(Dim3{1}, Dim3{32}, k::strided_copy_kernel<k::kGatherUnroll>, static_cast<const float*>(in.data()), out.data(),
         in.size(), 0);
  for (float f : out) ASSERT_EQ(bits(f), kPoison);
}

TEST(MemoryKernels, GatherWithAPermutationAndWithRepeats) {
  for (std::size_t n : {1u, 9u, 255u, 4097u, 30011u}) {
    for (bool permutation : {true, false}) {
      for (Shape s : kShapes) {
        std::mt19937 rng(static_cast<unsigned>(n));
        std::vector<std::uint32_t> idx(n);
        if (permutation) {
          std::iota(idx.begin(), idx.end(), 0u);
          std::shuffle(idx.begin(), idx.end(), rng);
        } else {
          for (auto& i : idx) i = static_cast<std::uint32_t>(rng() % n);
        }
        std::vector<float> in(n);
        for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i) * 1.5f + 3.0f;
        std::vector<float> out(n + 4, as_float(kPoison));
        launch(Dim3{s.blocks}, Dim3{s.threads}, k::gather_kernel<k::kGatherUnroll>,
               static_cast<const float*>(in.data()), static_cast<const std::uint32_t*>(idx.data()), out.data(), n);
        for (std::size_t i = 0; i < out.size(); ++i) {
          ASSERT_EQ(bits(out[i]), i < n ? bits(in[idx[i]]) : kPoison)
              << "element " << i << (permutation ? " (permutation), " : " (repeats), ") << where(n, 0, s);
        }
      }
    }
  }
}

// The chase ring's fill writes next[e] = the formula's successor of e for every entry, whatever the
// grid, and nothing after the ring; the ring it writes is one cycle.
TEST(MemoryKernels, ChaseRingFillWritesTheFormulaAndNothingElse) {
  for (std::size_t n : {1u, 2u, 3u, 17u, 1000u, 4099u, 65551u}) {
    const k::ChaseRing ring = k::make_chase_ring_of(n, 0x5eedull + n);
    for (Shape s : kShapes) {
      std::vector<std::uint32_t> next(n + 4, kPoison);
      launch(Dim3{s.blocks}, Dim3{s.threads}, k::chase_ring_fill_kernel, next.data(), ring);
      for (std::size_t e = 0; e < next.size(); ++e)
        ASSERT_EQ(next[e], e < n ? k::ring_next(ring, static_cast<std::uint32_t>(e)) : kPoison)
            << "entry " << e << ", " << where(n, 0, s);
      std::uint32_t p = 0;
      std::size_t length = 0;
      do {
        p = next[p];
        ++length;
      } while (p != 0 && length <= n);
      ASSERT_EQ(length, n) << "not one cycle, " << where(n, 0, s);
    }
  }
}

TEST(MemoryKernels, PointerChaseFollowsTheChain) {
  // A single cycle through all 1000 slots (Sattolo's algorithm): the kernel follows any ring.
  const std::size_t n = 1000;
  std::vector<std::uint32_t> next(n);
  std::iota(next.begin(), next.end(), 0u);
  std::mt19937 rng(42);
  for (std::size_t i = n - 1; i > 0; --i) {
    std::swap(next[i], next[std::uniform_int_distribution<std::size_t>(0, i - 1)(rng)]);
  }
  std::uint32_t p = 0;
  std::size_t cycle = 0;
  do {
    p = next[p];
    ++cycle;
  } while (p != 0);
  ASSERT_EQ(cycle, n) << "test setup: not a single cycle";

  for (std::size_t steps : {0u, 1u, 2u, 3u, 4u, 5u, 17u, 1000u, 2503u}) {
    for (Shape s : {Shape{1, 1}, Shape{2, 32}}) {  // only thread 0 of block 0 may walk
      std::uint32_t expected = 5;
      for (std::size_t i = 0; i < steps; ++i) expected = next[expected];
      std::uint32_t sink = kPoison;
      long long cycles = -1;
      launch(Dim3{s.blocks}, Dim3{s.threads}, k::pointer_chase_kernel<k::kMemoryUnroll>,
             static_cast<const std::uint32_t*>(next.data()), steps, std::uint32_t{5}, &sink, &cycles);
      EXPECT_EQ(sink, expected) << steps << " steps";
      EXPECT_GE(cycles, 0) << steps << " steps";
    }
  }
}

}  // namespace
