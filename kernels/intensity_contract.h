// Instruction contract of kernels/intensity.cu (see kernels/contract.h): the exact FMA count of
// every intensity-sweep and peak instantiation, read from the PTX, so the FLOP the roofline chart
// uses are the FLOP the hardware executes; 16-byte loads and stores in the sweeps; no local
// memory; at most 32 registers, which is what full occupancy (2048 threads per SM on A100 and
// H100, 8 blocks of 256) needs.
//
// Counts per instantiation (the FMA loops are fully unrolled, kernels/intensity_kernels.cuh):
//  - intensity_fp32_kernel<K, every>: K * 8 / every in the vector loop + 1 in the scalar tail's
//    rolled step loop; no f16x2 FMA, no separate mul/add that would be an uncounted FLOP.
//  - intensity_fp16x2_kernel<K>: K * 8 + 1 fma.rn.f16x2; no fp32 FMA.
//  - peak kernels: kPeakChains * kPeakUnroll = 4 * 64 = 256 in the rolled rounds loop.
#pragma once

#include <string>

#include "kernels/contract.h"
#include "kernels/intensity.h"

namespace gpubench::kernels {

/// The contracts of every kernel in kernels/intensity.cu.
inline contract::FileContract intensity_contract() {
  constexpr int kBlock = 256;
  constexpr int kMaxRegs = 32;  // 65536 registers / 2048 threads
  contract::FileContract file;
  auto base = [&](const std::string& regex) {
    contract::KernelContract c;
    c.kernel = regex;
    c.block_threads = kBlock;
    c.max_registers = kMaxRegs;
    c.max_static_smem_bytes = 0;
    c.min_occupancy = 1.0;
    // Arithmetic other than the counted FMAs would be FLOP the work model does not count.
    c.ptx_forbidden = {R"(\b(mul|add|sub)\.(rn\.)?f(16|32|64)(x2)?\b)", R"(\bfma\.rn\.f64\b)"};
    return c;
  };
  auto sweep = [&](const std::string& regex, const char* fma, const char* other_fma, const char* vec_type, int count) {
    contract::KernelContract c = base(regex);
    c.ptx_counts = {{std::string(R"(\b)") + fma + R"(\b)", count}, {std::string(R"(\b)") + other_fma + R"(\b)", 0}};
    c.ptx_required = {std::string(R"(ld\.global\.nc\.v4\.)") + vec_type, std::string(R"(st\.global\.v4\.)") + vec_type};
    file.push_back(c);
  };
  for (int k : kSweepFmaCounts) {
    sweep("intensity_fp32_kernel<" + std::to_string(k) + ", 1>\\(", R"(fma\.rn\.f32)", R"(fma\.rn\.f16x2)", "f32",
          8 * k + 1);
    sweep("intensity_fp16x2_kernel<" + std::to_string(k) + ">\\(", R"(fma\.rn\.f16x2)", R"(fma\.rn\.f32)", "u32",
          8 * k + 1);
  }
  sweep(R"(intensity_fp32_kernel<1, 2>\()", R"(fma\.rn\.f32)", R"(fma\.rn\.f16x2)", "f32", 4 + 1);

  const int peak = 4 * kPeakStepsPerRound;  // kPeakChains x kPeakUnroll
  contract::KernelContract p32 = base(R"(peak_fp32_kernel<4, 64>\()");
  p32.ptx_counts = {{R"(\bfma\.rn\.f32\b)", peak}, {R"(\bfma\.rn\.f16x2\b)", 0}};
  file.push_back(p32);
  contract::KernelContract p16 = base(R"(peak_fp16x2_kernel<4, 64>\()");
  p16.ptx_counts = {{R"(\bfma\.rn\.f16x2\b)", peak}, {R"(\bfma\.rn\.f32\b)", 0}};
  file.push_back(p16);
  return file;
}

}  // namespace gpubench::kernels
