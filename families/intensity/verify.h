// Inputs and output checks of the intensity sweep and peak-FMA benchmarks, shared by the CUDA and
// host backends so both are judged by the same rule.
//
// Checking n outputs of k-step chains directly would cost n x k host FMAs (10^11 for a 256 MiB,
// k = 2048 sweep point). Instead every input is drawn at random from a grid of exactly
// representable values (4096 floats, 1024 halves per lane, in [kLo, kHi) of
// families/intensity/reference.h): the chain's result depends on the input value only, so the
// reference is a table computed once per grid value (4096 x k FMAs) and each output is checked
// against its input's entry in O(1). Every element is checked.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/backend.h"

namespace gpubench {

/// Distinct FP32 input values: kLo + j / kIntensityGridF32 for j in [0, kIntensityGridF32).
constexpr int kIntensityGridF32 = 4096;
/// Distinct binary16 input values per lane: kLo + j / kIntensityGridF16 (exact halves).
constexpr int kIntensityGridF16 = 1024;

/// in[i] = a seeded random value of the FP32 grid, filled in parallel.
void fill_intensity_f32(float* in, std::size_t n, std::uint64_t seed);
/// in[i] = a half2 word whose two lanes are seeded random values of the binary16 grid.
void fill_intensity_f16x2(std::uint32_t* in, std::size_t n, std::uint64_t seed);

/// The tolerances the CUDA workloads and gpubench_kernel_check use: none. Each kernel step is
/// one fma.rn (FP32 __fmaf_rn, FP16 fma.rn.f16x2: IEEE fused multiply-add, one rounding to
/// nearest even), and the reference makes the same single rounding (std::fma; for FP16 an exact
/// sum rounded to odd, then to nearest: tests/test_emulation.cpp), on inputs in [0.5, 1.5) that
/// stay normal, so the outputs are equal bit for bit. Anything else is a different computation:
/// an unfused multiply-then-add chain, an FP16 chain carried in FP32, a step too many or too few
/// (tests/test_tolerance.cpp).
constexpr double kIntensityF32RelTol = 0;
constexpr int kIntensityF16Ulps = 0;

/// out[i] == `steps` steps of x <- x * a + b from in[i] for i % every == 0, out[i] == in[i]
/// otherwise, within `rel_tol` (the kernels reproduce the reference exactly; the tolerance only
/// keeps a last-ulp difference from hiding a number). Also fails when in[] is no longer on the
/// grid (the kernel overwrote its input). Reports the first wrong index.
Verification check_intensity_f32(const float* in, const float* out, std::size_t n, long long steps, int every, float a,
                                 float b, double rel_tol);
/// Each lane of out[i] == `steps` fma.rn.f16x2 steps from the same lane of in[i], within
/// `ulps` units in the last place of binary16.
Verification check_intensity_f16x2(const std::uint32_t* in, const std::uint32_t* out, std::size_t n, long long steps,
                                   std::uint32_t a, std::uint32_t b, int ulps);

}  // namespace gpubench
