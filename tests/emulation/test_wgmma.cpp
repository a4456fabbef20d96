// Tests of the emulated Hopper building blocks (kernels/wgmma.cuh, kernels/tma.cuh) against naive
// references: the wgmma matrix descriptor, the shared-memory swizzles, wgmma.mma_async
// m64nNk16 (f16 and bf16, N = 64/128/256, every swizzle mode, scale-d 0 and 1), the TMA 2-D
// box copy with its mbarrier, and the TMA 2-D box store with its bulk async-groups. The layouts are restated here in
// the form of the PTX ISA's figures (the accumulator register by register, the swizzle as "chunk XOR row bits" of a
// (row, chunk) grid), independently of the address functions in the headers, so a wrong layout there fails these tests
// instead of cancelling out.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "kernels/half_bits.h"
#include "kernels/simt/simt.h"
#include "kernels/tma.cuh"
#include "kernels/wgmma.cuh"

namespace {

namespace hopper = gpubench::kernels::hopper;
using gpubench::kernels::float_to_half_bits;
using gpubench::kernels::half_bits_to_float;
using gpubench::simt::Dim3;
using hopper::Swizzle;

constexpr Swizzle kAllSwizzles[] = {Swizzle::kNone, Swizzle::k32B, Swizzle::k64B, Swizzle::k128B};

// ---- references restated from the PTX ISA ----

/// The swizzle of the figures: chunk c of row r of a tile with span-byte rows moves to chunk
/// c ^ (row bits): 128B -> r % 8, 64B -> (r / 2) % 4, 32B -> (r / 4) % 2.
unsigned ref_swizzled_chunk(unsigned r, unsigned c, Swizzle s) {
  switch (s) {
    case Swizzle::k128B: return c ^ (r % 8);
    case Swizzle::k64B: return c ^ ((r / 2) % 4);
    case Swizzle::k32B: return c ^ ((r / 4) % 2);
    default: return c;
  }
}

unsigned span_of(Swizzle s) {
  return s == Swizzle::k128B ? 128 : s == Swizzle::k64B ? 64 : s == Swizzle::k32B ? 32 : 16;
}

/// Accumulator register d[i] of warpgroup thread t, as the figure draws it: warp w owns rows
/// 16w..16w+15; registers come in groups of four per 8 columns: {d[4j], d[4j+1]} are row g,
/// columns 8j + 2q and +1, {d[4j+2], d[4j+3]} the same columns of row g + 8 (g = lane / 4,
/// q = lane % 4).
void ref_d_position(int t, int i, int& row, int& col) {
  const int w = t / 32, lane = t % 32, g = lane / 4, q = lane % 4, j = i / 4, r = i % 4;
  row = 16 * w + g + (r >= 2 ? 8 : 0);
  col = 8 * j + 2 * q + (r % 2);
}

std::uint16_t float_to_bf16_bits(float f) {  // round to nearest even (finite inputs)
  std::uint32_t x = 0;
  std::memcpy(&x, &f, sizeof x);
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

// ---- descriptor ----

TEST(WgmmaDescriptor, KnownValue) {
  // A 128B-swizzled K-major tile at shared address 0x400: start 0x400>>4 = 0x40 in bits 0-13,
  // LBO 16>>4 = 1 in bits 16-29, SBO 1024>>4 = 0x40 in bits 32-45, swizzle 1 in bits 62-63.
  hopper::SmemDescriptor d;
  d.start_address = 0x400;
  d.leading_byte_offset = 16;
  d.stride_byte_offset = 1024;
  d.swizzle = Swizzle::k128B;
  EXPECT_EQ(hopper::encode_descriptor(d), 0x4000004000010040ull);
}

TEST(WgmmaDescriptor, FieldPositions) {
  hopper::SmemDescriptor d;
  d.start_address = 0x3FFF0;  // the largest encodable address: 14 bits after >> 4
  EXPECT_EQ(hopper::encode_descriptor(d), 0x3FFFull);
  d = {};
  d.leading_byte_offset = 0x3FFF0;
  EXPECT_EQ(hopper::encode_descriptor(d), 0x3FFFull << 16);
  d = {};
  d.stride_byte_offset = 0x3FFF0;
  EXPECT_EQ(hopper::encode_descriptor(d), 0x3FFFull << 32);
  d = {};
  d.base_offset = 7;
  EXPECT_EQ(hopper::encode_descriptor(d), 7ull << 49);
  for (unsigned s = 0; s < 4; ++s) {
    d = {};
    d.swizzle = static_cast<Swizzle>(s);
    EXPECT_EQ(hopper::encode_descriptor(d), std::uint64_t{s} << 62);
  }
  EXPECT_EQ(static_cast<unsigned>(Swizzle::kNone), 0u);
  EXPECT_EQ(static_cast<unsigned>(Swizzle::k128B), 1u);
  EXPECT_EQ(static_cast<unsigned>(Swizzle::k64B), 2u);
  EXPECT_EQ(static_cast<unsigned>(Swizzle::k32B), 3u);
  // matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4: address bits above 17 and below 4 drop.
  EXPECT_EQ(hopper::descriptor_encode(0x40000u + 0x123F), 0x123u);
}

TEST(WgmmaDescriptor, RoundTrip) {
  std::mt19937 gen(17);
  for (int trial = 0; trial < 10000; ++trial) {
    hopper::SmemDescriptor d;
    d.start_address = static_cast<std::uint32_t>(gen() & 0x3FFFu) << 4;
    d.leading_byte_offset = static_cast<std::uint32_t>(gen() & 0x3FFFu) << 4;
    d.stride_byte_offset = static_cast<std::uint32_t>(gen() & 0x3FFFu) << 4;
    d.base_offset = static_cast<std::uint32_t>(gen() & 7u);
    d.swizzle = static_cast<Swizzle>(gen() & 3u);
    const std::uint64_t desc = hopper::encode_descriptor(d);
    EXPECT_EQ(desc & ((3ull << 14) | (3ull << 30) | (7ull << 46) | (0x3FFull << 52)), 0u) << "reserved bits set";
    const hopper::SmemDescriptor back = hopper::decode_descriptor(desc);
    ASSERT_EQ(back.start_address, d.start_address);
    ASSERT_EQ(back.leading_byte_offset, d.leading_byte_offset);
    ASSERT_EQ(back.stride_byte_offset, d.stride_byte_offset);
    ASSERT_EQ(back.base_offset, d.base_offset);
    ASSERT_EQ(back.swizzle, d.swizzle);
    ASSERT_EQ(hopper::encode_descriptor(back), desc);
  }
}

// ---- swizzle ----

TEST(Swizzle, BijectionWithinEachAtomAndInvolution) {
  for (Swizzle s : kAllSwizzles) {
    const unsigned atom = hopper::swizzle_atom_bytes(s);
    EXPECT_EQ(atom, 8 * span_of(s));
    for (unsigned base : {0u, atom, 5 * atom}) {
      std::set<unsigned> image;
      for (unsigned a = base; a < base + atom; ++a) {
        const unsigned p = hopper::swizzle_address(a, s);
        ASSERT_GE(p, base);
        ASSERT_LT(p, base + atom);
        ASSERT_EQ(p % 16, a % 16) << "bytes inside a 16-byte chunk stay in place";
        ASSERT_EQ(p / span_of(s), a / span_of(s)) << "a chunk stays in its row";
        ASSERT_EQ(hopper::swizzle_address(p, s), a);
        image.insert(p);
      }
      EXPECT_EQ(image.size(), atom) << "a bijection on the atom";
    }
  }
}

TEST(Swizzle, MatchesTheDocumentedXorPattern) {
  for (Swizzle s : kAllSwizzles) {
    const unsigned span = span_of(s);
    for (unsigned r = 0; r < 16; ++r) {
      for (unsigned c = 0; c < span / 16; ++c) {
        ASSERT_EQ(hopper::swizzled_chunk_offset(r, c, s), r * span + 16 * ref_swizzled_chunk(r, c, s))
            << "row " << r << " chunk " << c << " span " << span;
      }
    }
  }
  // Worked examples (byte offsets in an atom-aligned tile).
  EXPECT_EQ(hopper::swizzled_chunk_offset(0, 5, Swizzle::k128B), 80u);         // row 0 unchanged
  EXPECT_EQ(hopper::swizzled_chunk_offset(1, 0, Swizzle::k128B), 128u + 16u);  // 0 ^ 1
  EXPECT_EQ(hopper::swizzled_chunk_offset(3, 5, Swizzle::k128B), 384u + 96u);  // 5 ^ 3 = 6
  EXPECT_EQ(hopper::swizzled_chunk_offset(7, 7, Swizzle::k128B), 896u);        // 7 ^ 7 = 0
  EXPECT_EQ(hopper::swizzled_chunk_offset(2, 0, Swizzle::k64B), 128u + 16u);   // row 2: bits 7-8 = 1
  EXPECT_EQ(hopper::swizzled_chunk_offset(7, 1, Swizzle::k64B), 448u + 32u);   // 1 ^ 3 = 2
  EXPECT_EQ(hopper::swizzled_chunk_offset(4, 0, Swizzle::k32B), 128u + 16u);   // row 4: bit 7 = 1
  EXPECT_EQ(hopper::swizzled_chunk_offset(3, 1, Swizzle::k32B), 96u + 16u);    // rows 0-3 unchanged
  EXPECT_EQ(hopper::swizzle_address(0x1234u, Swizzle::kNone), 0x1234u);
  // The pattern is a function of the address: 1024 bytes on, 128B repeats.
  EXPECT_EQ(hopper::swizzle_address(1024 + 3 * 128 + 5 * 16, Swizzle::k128B), 1024u + 384u + 96u);
}

// ---- wgmma ----

/// One wgmma test case: A (64*warpgroups x K) and B (N x K), both K-major, K = 16 * k_steps.
struct WgmmaCase {
  int n;
  bool bf16;
  Swizzle swizzle;
  bool accumulate;  // first k-step with scale-d 1 onto C, else 0
  int warpgroups;
};

/// K elements per tile row: a swizzled tile row is one span (span / 2 16-bit elements); without
/// swizzle the tile holds two k16 steps (four 8x16-byte core matrices along K).
int tile_k(Swizzle s) { return s == Swizzle::kNone ? 32 : static_cast<int>(span_of(s)) / 2; }

/// Byte offset of element (r, k) in a K-major tile, as the PTX ISA's figures draw it: without
/// swizzle, 8x16-byte core matrices, K chunks LBO = 128 bytes apart, row groups SBO apart; with
/// a swizzle, span-byte rows, row groups of 8 SBO = 8 * span apart, chunks XOR-permuted.
constexpr unsigned kNoSwizzleLbo = 128;
unsigned ref_tile_offset(unsigned r, unsigned k, Swizzle s, unsigned sbo) {
  const unsigned c = k / 8, in = (k % 8) * 2;
  if (s == Swizzle::kNone) return (r / 8) * sbo + c * kNoSwizzleLbo + (r % 8) * 16 + in;
  return (r / 8) * sbo + (r % 8) * span_of(s) + 16 * ref_swizzled_chunk(r % 8, c, s) + in;
}
unsigned tile_sbo(Swizzle s, int tk) {
  return s == Swizzle::kNone ? 8 * 16 * static_cast<unsigned>(tk / 8) : 8 * span_of(s);
}

// MN-major operands (imm-trans = 1), as CUTLASS's make_gmma_desc draws the canonical layouts:
// with a swizzle, one span of MN elements per row, rows = K, the 8-row K groups SBO apart and the
// next span of MN LBO apart, chunks XOR-permuted by row; without one, 8 MN elements (16 bytes) per
// core-matrix row, 8 K rows 16 bytes apart, the next 8 K rows LBO away, the next 8 MN elements SBO
// away. Two spans of MN by 16 K here, every element at its own byte.
TEST(WgmmaDescriptor, MnMajorAddressesFollowTheCanonicalLayouts) {
  for (Swizzle s : kAllSwizzles) {
    SCOPED_TRACE(static_cast<int>(s));
    hopper::SmemDescriptor d;
    d.swizzle = s;
    const unsigned span = span_of(s), per_span = span / 2;
    unsigned mn_extent = 0;
    if (s == Swizzle::kNone) {
      d.leading_byte_offset = 128;  // K groups
      d.stride_byte_offset = 256;   // 8-element MN groups
      mn_extent = 16;
    } else {
      d.leading_byte_offset = 16 * span;  // MN spans (after two 8-row K groups)
      d.stride_byte_offset = 8 * span;    // 8-row K groups
      mn_extent = 2 * per_span;
    }
    std::set<unsigned> seen;
    for (unsigned mn = 0; mn < mn_extent; ++mn) {
      for (unsigned k = 0; k < 16; ++k) {
        unsigned expected = 0;
        if (s == Swizzle::kNone) {
          expected = (mn / 8) * 256 + (k / 8) * 128 + (k % 8) * 16 + (mn % 8) * 2;
        } else {
          const unsigned row = (mn / per_span) * 16 + k;  // rows of one span
          expected = row * span + 16 * ref_swizzled_chunk(row % 8, (mn % per_span) / 8, s) + (mn % 8) * 2;
        }
        EXPECT_EQ(hopper::mn_major_element_address(d, mn, k), expected) << "mn " << mn << " k " << k;
        EXPECT_TRUE(seen.insert(expected).second) << "two elements at byte " << expected;
      }
    }
  }
}

void run_wgmma_case(const WgmmaCase& c, std::uint32_t seed) {
  const int m = 64 * c.warpgroups, n = c.n, k = tile_k(c.swizzle);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  auto random_bits = [&](std::size_t count) {
    std::vector<std::uint16_t> v(count);
    for (auto& h : v) {
      do {
        const float f = dist(gen);
        h = c.bf16 ? float_to_bf16_bits(f) : float_to_half_bits(f);
      } while ((h & 0x7FFFu) == 0);
    }
    return v;
  };
  auto value = [&](std::uint16_t h) { return c.bf16 ? hopper::bf16_bits_to_float(h) : half_bits_to_float(h); };
  const std::vector<std::uint16_t> a = random_bits(static_cast<std::size_t>(m) * k);  // a[r * k + kk]
  const std::vector<std::uint16_t> b = random_bits(static_cast<std::size_t>(n) * k);  // b[col * k + kk]
  std::vector<float> cmat(static_cast<std::size_t>(m) * n);
  for (auto& x : cmat) x = dist(gen);

  // Shared-memory image: per warpgroup an A tile, then the B tile, each 1024-aligned.
  const unsigned sbo = tile_sbo(c.swizzle, k);
  const unsigned a_bytes = (64 / 8) * sbo, b_bytes = static_cast<unsigned>(n / 8) * sbo;
  const unsigned b_base = static_cast<unsigned>(c.warpgroups) * a_bytes;
  std::vector<unsigned char> image(b_base + b_bytes, 0);
  std::set<unsigned> used;
  auto put = [&](unsigned off, std::uint16_t h) {
    ASSERT_TRUE(used.insert(off).second) << "reference layout maps two elements to byte " << off;
    std::memcpy(&image[off], &h, 2);
  };
  for (int r = 0; r < m; ++r) {
    for (int kk = 0; kk < k; ++kk) {
      put(static_cast<unsigned>(r / 64) * a_bytes + ref_tile_offset(r % 64, kk, c.swizzle, sbo), a[r * k + kk]);
    }
  }
  for (int col = 0; col < n; ++col) {
    for (int kk = 0; kk < k; ++kk) put(b_base + ref_tile_offset(col, kk, c.swizzle, sbo), b[col * k + kk]);
  }

  std::vector<float> out(cmat.size(), std::nanf(""));
  const int regs = n / 2;
  const Swizzle sw = c.swizzle;
  const bool bf16 = c.bf16;
  const int scale_first = c.accumulate ? 1 : 0;
  const unsigned lbo = sw == Swizzle::kNone ? kNoSwizzleLbo : 16;  // LBO is unused by swizzled K-major
  const unsigned char* img = image.data();
  const std::size_t img_bytes = image.size();
  const float* cm = cmat.data();
  float* o = out.data();

  auto kernel = [=]() {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    const unsigned t = threadIdx.x;
    const unsigned nthreads = blockDim.x;
    for (std::size_t i = t; i < img_bytes; i += nthreads) smem[i] = img[i];
    __syncthreads();
    const int wg = static_cast<int>(t / 128), wt = static_cast<int>(t % 128);
    float d[128];
    for (int i = 0; i < regs; ++i) {
      int row = 0, col = 0;
      ref_d_position(wt, i, row, col);
      d[i] = cm[(64 * wg + row) * n + col];
    }
    hopper::wgmma_fence();
    for (int step = 0; step < k / 16; ++step) {
      // The next k16 slice: 32 bytes on in a swizzled row, two core matrices (2 * LBO) on without.
      const unsigned advance = sw == Swizzle::kNone ? 2 * lbo * step : 32u * step;
      const std::uint64_t da = hopper::make_smem_desc(smem + wg * a_bytes + advance, lbo, sbo, sw);
      const std::uint64_t db = hopper::make_smem_desc(smem + b_base + advance, lbo, sbo, sw);
      const int scale = step == 0 ? scale_first : 1;
      if (regs == 32) {
        auto& dd = reinterpret_cast<float(&)[32]>(d);
        bf16 ? hopper::wgmma_m64k16_ss<64, hopper::BF16>(dd, da, db, scale)
             : hopper::wgmma_m64k16_ss<64, hopper::F16>(dd, da, db, scale);
      } else if (regs == 64) {
        auto& dd = reinterpret_cast<float(&)[64]>(d);
        bf16 ? hopper::wgmma_m64k16_ss<128, hopper::BF16>(dd, da, db, scale)
             : hopper::wgmma_m64k16_ss<128, hopper::F16>(dd, da, db, scale);
      } else {
        bf16 ? hopper::wgmma_m64k16_ss<256, hopper::BF16>(d, da, db, scale)
             : hopper::wgmma_m64k16_ss<256, hopper::F16>(d, da, db, scale);
      }
    }
    hopper::wgmma_commit_group();
    hopper::wgmma_wait_group<0>();
    for (int i = 0; i < regs; ++i) {
      int row = 0, col = 0;
      ref_d_position(wt, i, row, col);
      o[(64 * wg + row) * n + col] = d[i];
    }
  };
  gpubench::simt::launch_with_smem(Dim3{1, 1, 1}, Dim3{128u * static_cast<unsigned>(c.warpgroups), 1, 1}, image.size(),
                                   kernel);
  ASSERT_EQ(hopper::wgmma_outstanding(), 0u);

  // Reference in double from the same rounded inputs. The emulation rounds to float once per
  // k16 step, so it may differ from the double result by a few float ulps of the magnitudes
  // involved: tolerance 4 * 2^-24 per step times the sum of |terms|.
  for (int r = 0; r < m; ++r) {
    for (int col = 0; col < n; ++col) {
      double ref = c.accumulate ? cmat[r * n + col] : 0.0, mag = std::fabs(ref);
      for (int kk = 0; kk < k; ++kk) {
        const double p = static_cast<double>(value(a[r * k + kk])) * value(b[col * k + kk]);
        ref += p;
        mag += std::fabs(p);
      }
      const double got = out[r * n + col];
      ASSERT_NEAR(got, ref, 4.0 * (k / 16) * mag * std::ldexp(1.0, -24) + 1e-30)
          << "D[" << r << "][" << col << "] n=" << n << (c.bf16 ? " bf16" : " f16") << " swizzle "
          << static_cast<unsigned>(c.swizzle);
    }
  }
}

class WgmmaShapes : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(WgmmaShapes, EverySwizzleScaleD0And1) {
  const auto [n, bf16] = GetParam();
  std::uint32_t seed = 1000 + static_cast<std::uint32_t>(n) + (bf16 ? 7 : 0);
  for (Swizzle s : kAllSwizzles) {
    for (bool accumulate : {false, true}) {
      SCOPED_TRACE(testing::Message() << "swizzle " << static_cast<unsigned>(s) << " accumulate " << accumulate);
      run_wgmma_case({n, bf16, s, accumulate, 1}, seed++);
      if (HasFatalFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(F16AndBf16, WgmmaShapes,
                         ::testing::Combine(::testing::Values(64, 128, 256), ::testing::Values(false, true)),
                         [](const ::testing::TestParamInfo<std::tuple<int, bool>>& p) {
                           return std::string(std::get<1>(p.param) ? "bf16" : "f16") + "_n" +
                                  std::to_string(std::get<0>(p.param));
                         });

TEST(Wgmma, TwoWarpgroupsOwnTheirOwnRows) {
  run_wgmma_case({128, false, Swizzle::k128B, true, 2}, 77);
  run_wgmma_case({64, true, Swizzle::kNone, false, 2}, 78);
}

TEST(Wgmma, ReadsSharedMemoryWhenTheWaitCoversIt) {
  // A stage overwritten between issue and wait is what the MMA sees (as on a GPU, where the
  // read is asynchronous): the emulation performs the MMA at the wait.
  std::vector<float> out(128 * 32, -1.0f);
  float* o = out.data();
  auto kernel = [=]() {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    for (unsigned i = threadIdx.x; i < 4096; i += 128) smem[i] = 0;
    __syncthreads();
    if (threadIdx.x == 0) {  // A = all ones (f16 0x3C00), B = all ones: 64 x 64 tiles, 128B swizzle
      for (unsigned i = 0; i < 1024 + 1024; i += 2) {
        smem[i] = 0x00;
        smem[i + 1] = 0x3C;
      }
    }
    __syncthreads();
    float d[32] = {};
    const std::uint64_t da = hopper::make_smem_desc(smem, 16, 1024, Swizzle::k128B);
    const std::uint64_t db = hopper::make_smem_desc(smem + 1024, 16, 1024, Swizzle::k128B);
    hopper::wgmma_fence();
    hopper::wgmma_m64k16_ss<64, hopper::F16>(d, da, db, 0);
    hopper::wgmma_commit_group();
    __syncthreads();
    if (threadIdx.x == 0) std::memset(smem + 1024, 0, 1024);  // B zeroed before the wait
    __syncthreads();
    hopper::wgmma_wait_group<0>();
    for (int i = 0; i < 32; ++i) o[threadIdx.x * 32 + i] = d[i];
  };
  // Only 8 rows of A/B exist per 1024 bytes: that is enough here, every row reads ones or zeros.
  gpubench::simt::launch_with_smem(Dim3{1, 1, 1}, Dim3{128, 1, 1}, 64 * 128 + 64 * 128, kernel);
  for (float x : out) ASSERT_EQ(x, 0.0f);
}

// ---- TMA and mbarrier ----

constexpr int kInner = 72, kOuter = 100;  // a 100 x 72 tensor of 16-bit elements, 160-byte rows

std::vector<std::uint16_t> make_tensor(std::uint64_t stride_elems) {
  std::vector<std::uint16_t> g(stride_elems * kOuter, 0xDEAD);  // padding between rows
  for (int y = 0; y < kOuter; ++y) {
    for (int x = 0; x < kInner; ++x) g[y * stride_elems + x] = static_cast<std::uint16_t>(1 + y * 256 + x);
  }
  return g;
}

/// Loads one box with one thread and returns the shared-memory bytes after the wait.
std::vector<unsigned char> load_box(const hopper::TensorMap2d& map, int x, int y, bool& poisoned_before_wait) {
  const unsigned bytes = map.box_bytes();
  std::vector<unsigned char> smem_copy(bytes);
  unsigned char* out = smem_copy.data();
  bool* poisoned = &poisoned_before_wait;
  const hopper::TensorMap2d* m = &map;
  auto kernel = [=]() {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    auto* bar = reinterpret_cast<std::uint64_t*>(smem + 32768);
    hopper::mbarrier_init(bar, 1);
    hopper::mbarrier_arrive_expect_tx(bar, bytes);
    hopper::tma_load_2d(smem, m, x, y, bar);
    *poisoned = true;
    for (unsigned i = 0; i < bytes; ++i) *poisoned = *poisoned && smem[i] == 0xFF;
    while (!hopper::mbarrier_try_wait_parity(bar, 0)) {
    }
    std::memcpy(out, smem, bytes);
  };
  gpubench::simt::launch_with_smem(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 32768 + 64, kernel);
  return smem_copy;
}

TEST(Tma, BoxCopyEverySwizzleInteriorEdgeAndNegative) {
  const std::uint64_t stride_elems = 80;  // 160-byte rows: a multiple of 16 past the 144 data bytes
  const std::vector<std::uint16_t> g = make_tensor(stride_elems);
  for (Swizzle s : kAllSwizzles) {
    const unsigned box_inner = s == Swizzle::kNone ? 24 : span_of(s) / 2;  // 48-byte rows unswizzled
    const unsigned box_outer = 16;
    const auto map = hopper::make_tensor_map_2d(g.data(), kInner, kOuter, stride_elems * 2, box_inner, box_outer, 2, s);
    EXPECT_EQ(map.box_bytes(), box_inner * box_outer * 2);
    for (auto [x, y] : {std::pair{8, 16}, std::pair{kInner - 8, kOuter - 5}, std::pair{-4, -3}}) {
      SCOPED_TRACE(testing::Message() << "swizzle " << static_cast<unsigned>(s) << " box at (" << x << ", " << y
                                      << ")");
      bool poisoned = false;
      const std::vector<unsigned char> smem = load_box(map, x, y, poisoned);
      EXPECT_TRUE(poisoned) << "the box must be poison until the barrier completes";
      const unsigned row_bytes = box_inner * 2;
      for (unsigned r = 0; r < box_outer; ++r) {
        for (unsigned e = 0; e < box_inner; ++e) {
          const int gx = x + static_cast<int>(e), gy = y + static_cast<int>(r);
          const bool inside = gx >= 0 && gy >= 0 && gx < kInner && gy < kOuter;
          const std::uint16_t want = inside ? g[gy * stride_elems + gx] : 0;
          const unsigned byte = e * 2;
          // Swizzled rows are one span: (row, chunk) -> row * span + 16 * (chunk ^ row bits).
          const unsigned off = s == Swizzle::kNone
                                   ? r * row_bytes + byte
                                   : r * row_bytes + 16 * ref_swizzled_chunk(r % 8, byte / 16, s) + byte % 16;
          std::uint16_t got = 0;
          std::memcpy(&got, &smem[off], 2);
          ASSERT_EQ(got, want) << "element (" << r << ", " << e << ")";
        }
      }
    }
  }
}

// ---- TMA stores (FP32 boxes, as the GEMM's epilogue writes C) ----

constexpr float kUntouched = -1.0f;  // every element of the tensor before a store

/// Element (row, e) of a box, as the threads fill it: a value no tensor element starts with.
float box_value(unsigned r, unsigned e, int tag) { return static_cast<float>(tag * 100000 + r * 1000 + e); }

/// Byte offset of element (r, e) of a float box with `box_inner`-element rows in shared memory,
/// laid out as the figures draw a swizzled load (the store reads the same layout).
unsigned box_offset(unsigned r, unsigned e, unsigned box_inner, Swizzle s) {
  const unsigned byte = e * 4, row_bytes = box_inner * 4;
  return s == Swizzle::kNone ? r * row_bytes + byte
                             : r * row_bytes + 16 * ref_swizzled_chunk(r % 8, byte / 16, s) + byte % 16;
}

TEST(Tma, StoreWritesOnlyTheBoxElementsInsideTheTensorEverySwizzle) {
  const std::uint64_t stride_elems = 76;  // 304-byte rows: a multiple of 16 past the 288 data bytes
  for (Swizzle s : kAllSwizzles) {
    const unsigned box_inner = s == Swizzle::kNone ? 12 : span_of(s) / 4, box_outer = 16;
    for (auto [x, y] : {std::pair{8, 16}, std::pair{kInner - 4, kOuter - 5}, std::pair{-4, -3}}) {
      SCOPED_TRACE(testing::Message() << "swizzle " << static_cast<unsigned>(s) << " box at (" << x << ", " << y
                                      << ")");
      std::vector<float> g(stride_elems * kOuter, kUntouched);
      const auto map =
          hopper::make_tensor_map_2d(g.data(), kInner, kOuter, stride_elems * 4, box_inner, box_outer, 4, s);
      const hopper::TensorMap2d* m = &map;
      auto kernel = [=]() {
        GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
        for (unsigned r = 0; r < box_outer; ++r) {
          for (unsigned e = 0; e < box_inner; ++e) {
            const float v = box_value(r, e, 1);
            std::memcpy(smem + box_offset(r, e, box_inner, s), &v, 4);
          }
        }
        hopper::fence_proxy_async_shared();
        hopper::tma_store_2d(m, smem, x, y);
        hopper::bulk_commit_group();
        hopper::bulk_wait_group<0>();
      };
      gpubench::simt::launch_with_smem(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 8192, kernel);
      EXPECT_EQ(hopper::tma_stores_outstanding(), 0u);
      for (int gy = 0; gy < kOuter; ++gy) {
        for (std::uint64_t gx = 0; gx < stride_elems; ++gx) {
          const int e = static_cast<int>(gx) - x, r = gy - y;
          const bool in_box = e >= 0 && r >= 0 && e < static_cast<int>(box_inner) && r < static_cast<int>(box_outer);
          const bool written = in_box && gx < static_cast<std::uint64_t>(kInner);  // never the row padding
          const float want = written ? box_value(static_cast<unsigned>(r), static_cast<unsigned>(e), 1) : kUntouched;
          ASSERT_EQ(g[gy * stride_elems + gx], want) << "element (" << gy << ", " << gx << ")";
        }
      }
    }
  }
}

TEST(Tma, AStoreReadsItsBoxAtTheWaitThatRetiresItsGroup) {
  // Two groups from two boxes: wait_group.read 1 retires the first only; a box written again
  // before the wait that retires its store is stored with what it holds then (the emulation
  // performs a store as late as the PTX ISA allows, so a kernel that reuses a box too early
  // stores the wrong data here).
  std::vector<float> g(64 * 64, kUntouched);
  const auto map = hopper::make_tensor_map_2d(g.data(), 64, 64, 64 * 4, 32, 8, 4, Swizzle::k128B);
  const hopper::TensorMap2d* m = &map;
  std::vector<int> log(4, -1);
  int* l = log.data();
  float* gp = g.data();
  auto fill = [](unsigned char* box, int tag) {
    for (unsigned r = 0; r < 8; ++r)
      for (unsigned e = 0; e < 32; ++e) {
        const float v = box_value(r, e, tag);
        std::memcpy(box + box_offset(r, e, 32, Swizzle::k128B), &v, 4);
      }
  };
  auto kernel = [=]() {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    fill(smem, 1);
    hopper::tma_store_2d(m, smem, 0, 0);
    hopper::bulk_commit_group();
    fill(smem + 1024, 2);
    hopper::tma_store_2d(m, smem + 1024, 32, 8);
    hopper::bulk_commit_group();
    l[0] = static_cast<int>(hopper::tma_stores_outstanding());
    hopper::bulk_wait_group_read<1>();
    l[1] = gp[0] == box_value(0, 0, 1) && gp[8 * 64 + 32] == kUntouched;  // the first only
    fill(smem + 1024, 3);  // the second box, before the wait that retires its store
    hopper::bulk_wait_group_read<0>();
    l[2] = gp[8 * 64 + 32] == box_value(0, 0, 3);
    l[3] = static_cast<int>(hopper::tma_stores_outstanding());
  };
  gpubench::simt::launch_with_smem(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 4096, kernel);
  EXPECT_EQ(log[0], 2);
  EXPECT_EQ(log[1], 1);
  EXPECT_EQ(log[2], 1);
  EXPECT_EQ(log[3], 0);
}

TEST(Mbarrier, CompletesOnlyWhenAllBytesAndArrivalsArrivedAndFlipsPhase) {
  const std::uint64_t stride_elems = 80;
  const std::vector<std::uint16_t> g = make_tensor(stride_elems);
  const auto map = hopper::make_tensor_map_2d(g.data(), kInner, kOuter, stride_elems * 2, 64, 8, 2, Swizzle::k128B);
  std::vector<int> log;
  int* l = nullptr;
  log.assign(16, -1);
  l = log.data();
  const hopper::TensorMap2d* m = &map;
  auto kernel = [=]() {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    auto* bar = reinterpret_cast<std::uint64_t*>(smem + 4096);
    const unsigned box = m->box_bytes();
    hopper::mbarrier_init(bar, 1);
    hopper::mbarrier_arrive_expect_tx(bar, 2 * box);  // phase 0 expects two boxes
    hopper::tma_load_2d(smem, m, 0, 0, bar);
    l[0] = hopper::mbarrier_try_wait_parity(bar, 0);  // one box landed: not complete
    hopper::tma_load_2d(smem + 1024, m, 0, 8, bar);
    l[1] = hopper::mbarrier_try_wait_parity(bar, 0);  // both: phase 0 complete
    l[2] = hopper::mbarrier_try_wait_parity(bar, 1);  // phase 1 has not completed
    hopper::mbarrier_arrive_expect_tx(bar, box);
    l[3] = hopper::mbarrier_try_wait_parity(bar, 1);  // bytes missing
    hopper::tma_load_2d(smem + 2048, m, 0, 16, bar);
    l[4] = hopper::mbarrier_try_wait_parity(bar, 1);  // phase 1 complete, parity back to 0
    l[5] = hopper::mbarrier_try_wait_parity(bar, 0);  // phase 2 (parity 0) not complete yet
    // Two arrivals, transaction bytes completing before they are expected (the count dips below 0).
    auto* bar2 = bar + 1;
    hopper::mbarrier_init(bar2, 2);
    hopper::mbarrier_complete_tx(bar2, 64);
    hopper::mbarrier_arrive(bar2);
    l[6] = hopper::mbarrier_try_wait_parity(bar2, 0);
    hopper::mbarrier_arrive_expect_tx(bar2, 64);
    l[7] = hopper::mbarrier_try_wait_parity(bar2, 0);
  };
  gpubench::simt::launch_with_smem(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 4096 + 64, kernel);
  EXPECT_EQ(log[0], 0);
  EXPECT_EQ(log[1], 1);
  EXPECT_EQ(log[2], 0);
  EXPECT_EQ(log[3], 0);
  EXPECT_EQ(log[4], 1);
  EXPECT_EQ(log[5], 0);
  EXPECT_EQ(log[6], 0);
  EXPECT_EQ(log[7], 1);
  EXPECT_EQ(hopper::tma_outstanding(), 0u);
}

TEST(TmaThenWgmma, SwizzledBoxesFeedTheMma) {
  // The Hopper GEMM's data path on one tile: TMA boxes of A (64 x 64) and B (64 x 64, K-major)
  // with 128B swizzle, four k16 wgmma steps advancing the descriptors by 32 bytes.
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<std::uint16_t> a(64 * 64), b(64 * 64);
  for (auto& h : a) h = float_to_half_bits(dist(gen));
  for (auto& h : b) h = float_to_half_bits(dist(gen));
  const auto map_a = hopper::make_tensor_map_2d(a.data(), 64, 64, 128, 64, 64, 2, Swizzle::k128B);
  const auto map_b = hopper::make_tensor_map_2d(b.data(), 64, 64, 128, 64, 64, 2, Swizzle::k128B);
  std::vector<float> out(64 * 64, std::nanf(""));
  float* o = out.data();
  const hopper::TensorMap2d* ma = &map_a;
  const hopper::TensorMap2d* mb = &map_b;
  auto kernel = [=]() {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    auto* bar = reinterpret_cast<std::uint64_t*>(smem + 16384);
    if (threadIdx.x == 0) {
      hopper::mbarrier_init(bar, 1);
      hopper::fence_proxy_async_shared();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      hopper::mbarrier_arrive_expect_tx(bar, ma->box_bytes() + mb->box_bytes());
      hopper::tma_load_2d(smem, ma, 0, 0, bar);
      hopper::tma_load_2d(smem + 8192, mb, 0, 0, bar);
    }
    __syncthreads();
    while (!hopper::mbarrier_try_wait_parity(bar, 0)) {
    }
    float d[32];
    hopper::wgmma_fence();
    for (int k = 0; k < 4; ++k) {
      const std::uint64_t da = hopper::make_smem_desc(smem + 32 * k, 16, 1024, Swizzle::k128B);
      const std::uint64_t db = hopper::make_smem_desc(smem + 8192 + 32 * k, 16, 1024, Swizzle::k128B);
      hopper::wgmma_m64k16_ss<64, hopper::F16>(d, da, db, k > 0 ? 1 : 0);
    }
    hopper::wgmma_commit_group();
    hopper::wgmma_wait_group<0>();
    for (int i = 0; i < 32; ++i) {
      int row = 0, col = 0;
      ref_d_position(static_cast<int>(threadIdx.x), i, row, col);
      o[row * 64 + col] = d[i];
    }
  };
  gpubench::simt::launch_with_smem(Dim3{1, 1, 1}, Dim3{128, 1, 1}, 16384 + 64, kernel);
  for (int r = 0; r < 64; ++r) {
    for (int c = 0; c < 64; ++c) {
      double ref = 0, mag = 0;
      for (int k = 0; k < 64; ++k) {
        const double p = static_cast<double>(half_bits_to_float(a[r * 64 + k])) * half_bits_to_float(b[c * 64 + k]);
        ref += p;
        mag += std::fabs(p);
      }
      ASSERT_NEAR(out[r * 64 + c], ref, 16.0 * mag * std::ldexp(1.0, -24)) << "D[" << r << "][" << c << "]";
    }
  }
}

}  // namespace

// A warp-specialised handoff as the GEMM does it: thread 32 waits on `full` (yielding while it
// fails) for thread 0's arrival, then releases `empty`, which thread 0 waits on; both complete.
// A wait that nothing can complete is reported as a deadlock instead of spinning forever.
TEST(Mbarrier, PollingThreadsHandOffStagesBothWays) {
  int handoffs = 0;
  auto kernel = [&handoffs]() {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    auto* full = reinterpret_cast<std::uint64_t*>(smem);
    std::uint64_t* empty = full + 1;
    if (threadIdx.x == 0) {
      hopper::mbarrier_init(full, 1);
      hopper::mbarrier_init(empty, 1);
    }
    __syncthreads();
    for (unsigned round = 0; round < 5; ++round) {
      if (threadIdx.x == 0) {
        while (!hopper::mbarrier_try_wait_parity(empty, (round & 1u) ^ 1u)) {
        }
        hopper::mbarrier_arrive(full);
      } else if (threadIdx.x == 32) {
        while (!hopper::mbarrier_try_wait_parity(full, round & 1u)) {
        }
        ++handoffs;
        hopper::mbarrier_arrive(empty);
      }
    }
  };
  gpubench::simt::launch_with_smem(Dim3{1, 1, 1}, Dim3{64, 1, 1}, 64, kernel);
  EXPECT_EQ(handoffs, 5);
}

TEST(MbarrierDeathTest, AWaitNothingCanCompleteIsADeadlock) {
  auto kernel = []() {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    auto* bar = reinterpret_cast<std::uint64_t*>(smem);
    if (threadIdx.x == 0) hopper::mbarrier_init(bar, 2);
    __syncthreads();
    if (threadIdx.x == 0) hopper::mbarrier_arrive(bar);  // one of the two arrivals never comes
    while (!hopper::mbarrier_try_wait_parity(bar, 0)) {
    }
  };
  EXPECT_DEATH(gpubench::simt::launch_with_smem(Dim3{1, 1, 1}, Dim3{64, 1, 1}, 64, kernel),
               "deadlock in block \\(0,0,0\\): 64 threads poll");
}
