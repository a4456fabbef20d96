// The intensity checks' tolerances (kIntensityF32RelTol, kIntensityF16Ulps in
// families/intensity/verify.h: exact) pinned from both sides: the reference chain (one rounding
// per step, what fma.rn does on the GPU and the kernels do under the emulation) passes; the
// shortcuts fail - an FP32 chain with the multiply and the add rounded separately, an FP16 chain
// carried in FP32 and rounded to half once at the end, a result one ulp off. Loosening either
// tolerance lets a shortcut through, and this test fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "families/intensity/reference.h"
#include "families/intensity/verify.h"
#include "kernels/half_bits.h"

namespace gpubench {
namespace {

namespace ik = kernels::intensity;
using Coeff = ik::Coefficients;

constexpr std::size_t kN = 4096;

TEST(IntensityTolerance, Fp32ReferencePassesAndAnUnfusedChainFails) {
  std::vector<float> in(kN), fused(kN), unfused(kN);
  fill_intensity_f32(in.data(), kN, 7);
  for (long long k : {256LL, 2048LL}) {
    SCOPED_TRACE(k);
    for (std::size_t i = 0; i < kN; ++i) {
      fused[i] = ik::fma_chain_f32(in[i], Coeff::kA32, Coeff::kB32, k);
      volatile float x = in[i];  // volatile: the compiler may not fuse the multiply and the add
      for (long long s = 0; s < k; ++s) {
        volatile float product = x * Coeff::kA32;
        x = product + Coeff::kB32;
      }
      unfused[i] = x;
    }
    EXPECT_TRUE(
        check_intensity_f32(in.data(), fused.data(), kN, k, 1, Coeff::kA32, Coeff::kB32, kIntensityF32RelTol).ok);
    const Verification v =
        check_intensity_f32(in.data(), unfused.data(), kN, k, 1, Coeff::kA32, Coeff::kB32, kIntensityF32RelTol);
    EXPECT_FALSE(v.ok) << "an unfused chain (two roundings a step) passed";
    std::vector<float> off = fused;
    off[kN / 2] = std::nextafter(off[kN / 2], 10.0f);  // one ulp
    EXPECT_FALSE(
        check_intensity_f32(in.data(), off.data(), kN, k, 1, Coeff::kA32, Coeff::kB32, kIntensityF32RelTol).ok);
  }
}

TEST(IntensityTolerance, Fp16ReferencePassesAndAChainCarriedInFp32Fails) {
  std::vector<std::uint32_t> in(kN), exact(kN), carried(kN);
  fill_intensity_f16x2(in.data(), kN, 9);
  const std::uint32_t a = ik::splat_half2(Coeff::kA16), b = ik::splat_half2(Coeff::kB16);
  const long long k = 4;  // before the chains settle on the fixed point 2
  for (std::size_t i = 0; i < kN; ++i) {
    exact[i] = ik::fma_chain_f16x2(in[i], a, b, k);
    std::uint32_t word = 0;
    for (int lane = 0; lane < 2; ++lane) {
      float x = kernels::half_bits_to_float(static_cast<std::uint16_t>(in[i] >> (16 * lane)));
      for (long long s = 0; s < k; ++s) x = x * Coeff::kA16 + Coeff::kB16;  // FP32 throughout
      word |= static_cast<std::uint32_t>(kernels::float_to_half_bits(x)) << (16 * lane);
    }
    carried[i] = word;
  }
  EXPECT_TRUE(check_intensity_f16x2(in.data(), exact.data(), kN, k, a, b, kIntensityF16Ulps).ok);
  EXPECT_FALSE(check_intensity_f16x2(in.data(), carried.data(), kN, k, a, b, kIntensityF16Ulps).ok)
      << "an FP16 chain carried in FP32 passed";
  std::vector<std::uint32_t> off = exact;
  off[kN / 2] ^= 1u;  // the low lane one ulp off
  EXPECT_FALSE(check_intensity_f16x2(in.data(), off.data(), kN, k, a, b, kIntensityF16Ulps).ok);
}

}  // namespace
}  // namespace gpubench
