// BF16 and FP8 E4M3 on the host (families/gemm/low_precision.h): exact values of the formats,
// round to nearest even at the ties, E4M3's saturation and NaN, and the GEMM input generators'
// promise (values exact in their format, no zeros, the whole grid used).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "families/gemm/low_precision.h"
#include "harness/verify.h"

namespace gpubench::kernels {
namespace {

TEST(Bf16, KnownValuesAndEveryPatternRoundTrips) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80u);
  EXPECT_EQ(float_to_bf16_bits(-2.0f), 0xC000u);
  EXPECT_EQ(float_to_bf16_bits(0.0f), 0x0000u);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000u);
  EXPECT_EQ(bf16_bits_to_float(0x3F80u), 1.0f);
  EXPECT_EQ(bf16_bits_to_float(0x0001u), 0x1p-133f);  // smallest subnormal
  for (std::uint32_t b = 0; b <= 0xFFFFu; ++b) {
    const float f = bf16_bits_to_float(static_cast<std::uint16_t>(b));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(f)))) << b;
    } else {
      ASSERT_EQ(float_to_bf16_bits(f), b) << b;
    }
  }
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f), 0x3F80u);             // tie: down to even
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3F82u);         // tie: up to even
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81u);  // above the tie: up
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f - 0x1p-20f), 0x3F80u);  // below it: down
  EXPECT_EQ(float_to_bf16_bits(0x1.fffffep127f), 0x7F80u);            // FLT_MAX rounds up: infinity
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::nanf("")))));
}

TEST(E4m3, KnownValues) {
  EXPECT_EQ(float_to_e4m3_bits(1.0f), 0x38u);  // exponent 7 (bias 7), mantissa 0
  EXPECT_EQ(float_to_e4m3_bits(0.5f), 0x30u);
  EXPECT_EQ(float_to_e4m3_bits(-1.75f), 0xBEu);
  EXPECT_EQ(float_to_e4m3_bits(448.0f), 0x7Eu);       // largest finite: S.1111.110
  EXPECT_EQ(float_to_e4m3_bits(0x1p-6f), 0x08u);      // smallest normal
  EXPECT_EQ(float_to_e4m3_bits(0x1p-9f), 0x01u);      // smallest subnormal
  EXPECT_EQ(float_to_e4m3_bits(7 * 0x1p-9f), 0x07u);  // largest subnormal
  EXPECT_EQ(float_to_e4m3_bits(-0.0f), 0x80u);
  EXPECT_EQ(e4m3_bits_to_float(0x7Eu), 448.0f);
  EXPECT_EQ(e4m3_bits_to_float(0x01u), 0x1p-9f);
  EXPECT_EQ(e4m3_bits_to_float(0xB8u), -1.0f);
  EXPECT_TRUE(std::isnan(e4m3_bits_to_float(0x7Fu)));  // NaN: S.1111.111, no infinities
  EXPECT_TRUE(std::isnan(e4m3_bits_to_float(0xFFu)));
  EXPECT_EQ(e4m3_bits_to_float(0x78u), 256.0f);  // S.1111.000 is a number, not infinity
}

TEST(E4m3, EveryPatternRoundTripsAnd254AreNumbers) {
  int numbers = 0;
  for (int b = 0; b < 256; ++b) {
    const float f = e4m3_bits_to_float(static_cast<std::uint8_t>(b));
    if (std::isnan(f)) {
      EXPECT_EQ(b & 0x7F, 0x7F) << b;
      EXPECT_EQ(float_to_e4m3_bits(f) & 0x7F, 0x7F) << b;
      continue;
    }
    ++numbers;
    EXPECT_EQ(float_to_e4m3_bits(f), b) << b;
  }
  EXPECT_EQ(numbers, 254);
}

TEST(E4m3, RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(float_to_e4m3_bits(1.0625f), 0x38u);        // halfway 1 and 1.125: down to even
  EXPECT_EQ(float_to_e4m3_bits(1.1875f), 0x3Au);        // halfway 1.125 and 1.25: up to even (1.25)
  EXPECT_EQ(float_to_e4m3_bits(1.07f), 0x39u);          // above the tie: up
  EXPECT_EQ(float_to_e4m3_bits(0x1p-10f), 0x00u);       // halfway 0 and 2^-9: to zero (even)
  EXPECT_EQ(float_to_e4m3_bits(3 * 0x1p-10f), 0x02u);   // halfway 2^-9 and 2^-8: to 2^-8 (even)
  EXPECT_EQ(float_to_e4m3_bits(15 * 0x1p-10f), 0x08u);  // rounds up into the smallest normal
  EXPECT_EQ(float_to_e4m3_bits(1.9375f), 0x40u);        // halfway 1.875 and 2: to 2 (next binade)
  EXPECT_EQ(float_to_e4m3_bits(460.0f), 0x7Eu);         // saturates to 448 ...
  EXPECT_EQ(float_to_e4m3_bits(-1e6f), 0xFEu);
  EXPECT_EQ(float_to_e4m3_bits(INFINITY), 0x7Eu);  // ... infinities too (satfinite)
  EXPECT_EQ(float_to_e4m3_bits(std::nanf("")) & 0x7F, 0x7F);
  // Every float in [-448, 448] goes to a nearest E4M3 value.
  std::vector<float> u(20000);
  fill_random_float(u.data(), u.size(), 7, -448.0f, 448.0f);
  for (float x : u) {
    const float r = e4m3_bits_to_float(float_to_e4m3_bits(x));
    for (int b = 0; b < 256; ++b) {
      const float v = e4m3_bits_to_float(static_cast<std::uint8_t>(b));
      if (!std::isnan(v)) {
        ASSERT_LE(std::fabs(x - r), std::fabs(x - v)) << x << " -> " << r << ", " << v << " nearer";
      }
    }
  }
}

TEST(GemmInputs, Bf16InputsAreExactAndNeverZero) {
  std::vector<float> u(100000);
  fill_random_float(u.data(), u.size(), 11, -1.0f, 1.0f);
  u[0] = 0.0f;
  for (float x : u) {
    const Bf16 b = bf16_gemm_input(x);
    const float v = bf16_bits_to_float(b.bits);
    EXPECT_NE(v, 0.0f);
    EXPECT_EQ(float_to_bf16_bits(v), b.bits);
    if (x != 0.0f) {
      EXPECT_LE(std::fabs(v - x), std::fabs(x) * 0x1p-8f) << x;  // the nearest BF16
    }
  }
  EXPECT_EQ(bf16_bits_to_float(bf16_gemm_input(0.0f).bits), 0.5f);
}

TEST(GemmInputs, E4m3InputsCoverTheGridOfEighthsAndNothingElse) {
  std::vector<float> u(100000);
  fill_random_float(u.data(), u.size(), 12, -1.0f, 1.0f);
  u[0] = -1.0f;
  u[1] = 0.0f;
  u[2] = std::nextafter(1.0f, 0.0f);
  std::set<float> seen;
  for (float x : u) {
    const float v = e4m3_bits_to_float(e4m3_gemm_input(x).bits);
    EXPECT_NE(v, 0.0f);
    EXPECT_EQ(v * 8.0f, std::round(v * 8.0f)) << v;  // a multiple of 1/8 ...
    EXPECT_LE(std::fabs(v), 1.0f);                   // ... in [-1, 1]
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 16u);  // all of +-1/8 .. +-8/8
}

TEST(GemmInputs, Fp8ShapeRule) {
  EXPECT_EQ(fp8_gemm_shape_error(4096, 11008, 4096), nullptr);
  EXPECT_EQ(fp8_gemm_shape_error(16, 16, 16), nullptr);
  EXPECT_NE(fp8_gemm_shape_error(1000, 1000, 1000), nullptr);
  EXPECT_NE(fp8_gemm_shape_error(64, 64, 40), nullptr);
  EXPECT_NE(fp8_gemm_shape_error(0, 64, 64), nullptr);
}

}  // namespace
}  // namespace gpubench::kernels
