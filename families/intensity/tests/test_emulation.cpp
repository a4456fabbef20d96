// Emulation tests of the intensity-sweep and peak-FMA kernels (families/intensity/intensity.cuh):
// the kernel bodies run under the host SIMT shim at odd sizes, tails and grid shapes and must
// reproduce the recurrence of families/intensity/reference.h bit for bit on every element, leave
// no element unwritten (outputs start poisoned) and write nothing past the end.
// Also checks the FP16 FMA emulation itself against independently derived roundings.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "families/intensity/intensity.cuh"
#include "families/intensity/reference.h"
#include "kernels/half_bits.h"

namespace {

namespace ik = gpubench::kernels::intensity;
using gpubench::kernels::float_to_half_bits;
using gpubench::kernels::half_bits_to_float;
using gpubench::simt::Dim3;
using gpubench::simt::launch;

constexpr std::uint32_t kPoison = 0x7fc0dead;  // a NaN no kernel here can produce
constexpr std::size_t kGuard = 37;             // poisoned words past the end that must survive

float poison_f32() {
  float f;
  std::memcpy(&f, &kPoison, sizeof f);
  return f;
}

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Random inputs in [0.5, 1.5) (16-byte aligned storage via std::vector<float4-sized> is not
// guaranteed, so buffers are over-allocated and offset to a 16-byte boundary).
template <class T>
struct Aligned {
  std::vector<T> storage;
  T* p = nullptr;
  explicit Aligned(std::size_t n) : storage(n + 16 / sizeof(T)) {
    auto addr = reinterpret_cast<std::uintptr_t>(storage.data());
    p = storage.data() + ((16 - addr % 16) % 16) / sizeof(T);
  }
};

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(ik::Coefficients::kLo, ik::Coefficients::kHi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<std::uint32_t> random_half2(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint32_t> v(n);
  const auto f = random_floats(2 * n, seed);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = float_to_half_bits(f[2 * i]) | (static_cast<std::uint32_t>(float_to_half_bits(f[2 * i + 1])) << 16);
  }
  return v;
}

template <int K, int kEvery>
void check_fp32_sweep(std::size_t n, unsigned grid, unsigned block) {
  SCOPED_TRACE("fp32 K=" + std::to_string(K) + " every=" + std::to_string(kEvery) + " n=" + std::to_string(n) +
               " grid=" + std::to_string(grid) + " block=" + std::to_string(block));
  const float a = ik::Coefficients::kA32, b = ik::Coefficients::kB32;
  const auto host_in = random_floats(n, static_cast<std::uint32_t>(n * 31 + K));
  Aligned<float> in(n), out(n + kGuard);
  std::copy(host_in.begin(), host_in.end(), in.p);
  std::fill(out.p, out.p + n + kGuard, poison_f32());
  launch(Dim3{grid, 1, 1}, Dim3{block, 1, 1}, ik::intensity_fp32_kernel<K, kEvery>, static_cast<const float*>(in.p),
         out.p, n, a, b);
  for (std::size_t i = 0; i < n; ++i) {
    const float want = i % kEvery == 0 ? ik::fma_chain_f32(host_in[i], a, b, K) : host_in[i];
    ASSERT_EQ(bits(want), bits(out.p[i])) << "element " << i;
  }
  for (std::size_t i = n; i < n + kGuard; ++i) ASSERT_EQ(kPoison, bits(out.p[i])) << "wrote past the end at " << i;
}

template <int K>
void check_fp16x2_sweep(std::size_t n, unsigned grid, unsigned block) {
  SCOPED_TRACE("fp16x2 K=" + std::to_string(K) + " n=" + std::to_string(n) + " grid=" + std::to_string(grid) +
               " block=" + std::to_string(block));
  const std::uint32_t a = ik::splat_half2(ik::Coefficients::kA16), b = ik::splat_half2(ik::Coefficients::kB16);
  const auto host_in = random_half2(n, static_cast<std::uint32_t>(n * 17 + K));
  Aligned<std::uint32_t> in(n), out(n + kGuard);
  std::copy(host_in.begin(), host_in.end(), in.p);
  std::fill(out.p, out.p + n + kGuard, kPoison);
  launch(Dim3{grid, 1, 1}, Dim3{block, 1, 1}, ik::intensity_fp16x2_kernel<K>, static_cast<const std::uint32_t*>(in.p),
         out.p, n, a, b);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(ik::fma_chain_f16x2(host_in[i], a, b, K), out.p[i]) << "element " << i;
  for (std::size_t i = n; i < n + kGuard; ++i) ASSERT_EQ(kPoison, out.p[i]) << "wrote past the end at " << i;
}

// Sizes around the tile (block x 8 elements): empty tiles, only a tail, exact tiles, tiles plus
// a tail, more tiles than blocks (grid-stride).
TEST(IntensityEmulation, Fp32SweepOddSizesAndGrids) {
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{767}, std::size_t{768}, std::size_t{769},
                        std::size_t{5 * 768 + 13}}) {
    check_fp32_sweep<1, 1>(n, 3, 96);
    check_fp32_sweep<5, 1>(n, 2, 33);
    check_fp32_sweep<1, 2>(n, 5, 64);
  }
  check_fp32_sweep<16, 1>(3 * 2048 + 5, 1, 256);  // the production block size, one block
  check_fp32_sweep<3, 1>(10000, 7, 160);
}

TEST(IntensityEmulation, Fp16x2SweepOddSizesAndGrids) {
  for (std::size_t n : {std::size_t{1}, std::size_t{9}, std::size_t{768}, std::size_t{770}, std::size_t{4 * 768 + 5}}) {
    check_fp16x2_sweep<1>(n, 3, 96);
    check_fp16x2_sweep<6>(n, 2, 65);
  }
  check_fp16x2_sweep<32>(2 * 2048 + 3, 1, 256);
}

// The peak kernels cover n - n mod (block x 4) elements with a grid-stride loop over tiles and
// leave the remainder alone (the launcher only accepts whole tiles).
TEST(IntensityEmulation, PeakKernelsGridStride) {
  const float a = ik::Coefficients::kA32, b = ik::Coefficients::kB32;
  for (unsigned grid : {1u, 3u, 8u}) {
    const unsigned block = 96;
    const std::size_t tile = block * ik::kPeakChains, n = tile * 7;
    const int rounds = 3;
    const auto host_in = random_floats(n, grid);
    Aligned<float> in(n), out(n + kGuard);
    std::copy(host_in.begin(), host_in.end(), in.p);
    std::fill(out.p, out.p + n + kGuard, poison_f32());
    // Pass n + 5: the partial tile past n must stay untouched.
    launch(Dim3{grid, 1, 1}, Dim3{block, 1, 1}, ik::peak_fp32_kernel<ik::kPeakChains, 4>,
           static_cast<const float*>(in.p), out.p, n + 5, rounds, a, b);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(bits(ik::fma_chain_f32(host_in[i], a, b, rounds * 4)), bits(out.p[i])) << "grid " << grid << " i " << i;
    }
    for (std::size_t i = n; i < n + kGuard; ++i) ASSERT_EQ(kPoison, bits(out.p[i])) << "grid " << grid;
  }
  const std::uint32_t ha = ik::splat_half2(ik::Coefficients::kA16), hb = ik::splat_half2(ik::Coefficients::kB16);
  const unsigned block = 64;
  const std::size_t n = block * ik::kPeakChains * 5;
  const auto host_in = random_half2(n, 99);
  Aligned<std::uint32_t> in(n), out(n);
  std::copy(host_in.begin(), host_in.end(), in.p);
  std::fill(out.p, out.p + n, kPoison);
  launch(Dim3{2, 1, 1}, Dim3{block, 1, 1}, ik::peak_fp16x2_kernel<ik::kPeakChains, 3>,
         static_cast<const std::uint32_t*>(in.p), out.p, n, 2, ha, hb);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(ik::fma_chain_f16x2(host_in[i], ha, hb, 6), out.p[i]) << i;
}

// ---- the FP16 FMA emulation (the device operation under the shim, and the host reference) ----

std::uint16_t h(float f) { return float_to_half_bits(f); }

// Where a * x + b is exact in binary32, one float rounding to half is the correct single rounding.
TEST(IntensityEmulation, HalfFmaMatchesSingleRoundingWhereFloatIsExact) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> mant(0, 1023), ex(-6, 6), sign(0, 1);
  int checked = 0;
  for (int t = 0; t < 200000; ++t) {
    auto pick = [&] {
      const float m = 1.0f + static_cast<float>(mant(rng)) / 1024.0f;
      return h((sign(rng) ? -1.0f : 1.0f) * std::ldexp(m, ex(rng)));
    };
    const std::uint16_t x = pick(), a = pick(), b = pick();
    const double exact = static_cast<double>(half_bits_to_float(x)) * half_bits_to_float(a) + half_bits_to_float(b);
    const float f = static_cast<float>(exact);
    if (static_cast<double>(f) != exact) continue;  // not exact in float: covered below
    ASSERT_EQ(float_to_half_bits(f), ik::fma_step_f16(x, a, b)) << x << " " << a << " " << b;
    ++checked;
  }
  EXPECT_GT(checked, 100000);
}

// Roundings worked out by hand. In [1, 2) halves are 2^-10 apart; the ties are the midpoints.
TEST(IntensityEmulation, HalfFmaRoundsOnceToNearestEven) {
  const float u = 1.0f / 1024.0f;  // 2^-10
  // Above a tie by 2^-20: (1 + u)^2 + u/2 = 1 + 2u + u/2 + u^2 rounds up to 1 + 3u.
  EXPECT_EQ(h(1 + 3 * u), ik::fma_step_f16(h(1 + u), h(1 + u), h(u / 2)));
  // Below a tie: (1 + u)(1 - u/2) = 1 + u/2 - u^2/2 rounds down to 1.
  EXPECT_EQ(h(1), ik::fma_step_f16(h(1 + u), h(1 - u / 2), h(0)));
  // Exactly on ties: to the even neighbour (1 + u/2 -> 1; 1 + u + u/2 -> 1 + 2u).
  EXPECT_EQ(h(1), ik::fma_step_f16(h(1), h(1), h(u / 2)));
  EXPECT_EQ(h(1 + 2 * u), ik::fma_step_f16(h(1 + u), h(1), h(u / 2)));
}

// The case that separates one rounding from two: x * a = 2^-11 (1 + u)(1 - u) = u/2 - 2^-31
// and b = 1 + u give 1 + u + u/2 - 2^-31, below the tie between 1 + u (odd) and 1 + 2u (even)
// by less than float resolves. Rounding to float first lands on the tie, which then goes to
// the even 1 + 2u; the single rounding of fma.rn.f16x2 gives 1 + u.
TEST(IntensityEmulation, HalfFmaAvoidsDoubleRounding) {
  const float u = 1.0f / 1024.0f;
  const std::uint16_t x = h(u / 2 * (1 + u)), a = h(1 - u), b = h(1 + u);
  const double exact = static_cast<double>(half_bits_to_float(x)) * half_bits_to_float(a) + half_bits_to_float(b);
  ASSERT_EQ(1.0 + 1.5 / 1024.0 - std::ldexp(1.0, -31), exact) << "test premise: inputs are exact halves";
  ASSERT_EQ(h(1 + 2 * u), float_to_half_bits(static_cast<float>(exact))) << "test premise: float first rounds up";
  EXPECT_EQ(h(1 + u), ik::fma_step_f16(x, a, b));
}

TEST(IntensityEmulation, Half2LanesAreIndependent) {
  const std::uint32_t x = h(1.5f) | (static_cast<std::uint32_t>(h(-2.0f)) << 16);
  const std::uint32_t r = ik::fma_step_f16x2(x, ik::splat_half2(0.5f), ik::splat_half2(0.25f));
  EXPECT_EQ(h(1.0f), r & 0xFFFFu);                            // 1.5 * 0.5 + 0.25
  EXPECT_EQ(h(-0.75f), static_cast<std::uint16_t>(r >> 16));  // -2 * 0.5 + 0.25
}

// The recurrence stays bounded and keeps depending on k over the whole sweep (the verification
// of a kernel that ran the wrong number of steps must fail).
TEST(IntensityEmulation, CoefficientsKeepChainsBoundedAndKSensitive) {
  const float a = ik::Coefficients::kA32, b = ik::Coefficients::kB32;
  for (float x0 : {ik::Coefficients::kLo, 1.0f, 1.4999f}) {
    const float k2047 = ik::fma_chain_f32(x0, a, b, 2047), k2048 = ik::fma_chain_f32(x0, a, b, 2048);
    EXPECT_NE(k2047, k2048) << x0;
    EXPECT_GT(k2048, x0);
    EXPECT_LT(k2048, 3.0f);
    const float long_run = ik::fma_chain_f32(x0, a, b, 1 << 20);
    // Converges to the fixed point b / (1 - a) = 3, up to where each step changes x by less than
    // half an ulp.
    EXPECT_NEAR(3.0f, long_run, 1e-3f);
  }
  const std::uint32_t ha = ik::splat_half2(ik::Coefficients::kA16), hb = ik::splat_half2(ik::Coefficients::kB16);
  const std::uint32_t x = ik::splat_half2(0.5f);
  EXPECT_NE(ik::fma_chain_f16x2(x, ha, hb, 1), ik::fma_chain_f16x2(x, ha, hb, 2));
  const std::uint32_t long_run = ik::fma_chain_f16x2(x, ha, hb, 100000);
  EXPECT_NEAR(2.0f, half_bits_to_float(static_cast<std::uint16_t>(long_run)), 2.0f / 1024.0f);
}

}  // namespace
