// Instruction contract of families/intensity/intensity.cu (see kernels/contract.h): the exact FMA count of
// every intensity-sweep and peak instantiation, read from the PTX, so the FLOP the roofline chart
// uses are the FLOP the hardware executes; 16-byte loads and stores in the sweeps; no local
// memory; at most 32 registers, which is what full occupancy (2048 threads per SM on A100 and
// H100, 8 blocks of 256) needs.
//
// Counts per instantiation (the FMA loops are fully unrolled, families/intensity/intensity.cuh):
//  - intensity_fp32_kernel<K, every>: K * 8 / every in the vector loop + 1 in the scalar tail's
//    rolled step loop; no f16x2 FMA, no separate mul/add that would be an uncounted FLOP.
//  - intensity_fp16x2_kernel<K>: K * 8 + 1 fma.rn.f16x2; no fp32 FMA.
//  - peak kernels: kPeakChains * kPeakUnroll = 8 * 64 = 512 in the rolled rounds loop.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "families/intensity/intensity.h"
#include "kernels/contract.h"

namespace gpubench::kernels {

namespace intensity_detail {

/// FP32 / FP16x2 FMA lines in PTX.
inline constexpr const char* kPtxFmaF32 = R"(\bfma\.rn\.f32\b)";
inline constexpr const char* kPtxFmaF16x2 = R"(\bfma\.rn\.f16x2\b)";
/// Floating-point arithmetic other than the counted FMAs: FLOP the work model would not count.
inline constexpr const char* kPtxOtherFlop =
    R"(\b(mul|add|sub|div)(\.rn|\.rz|\.rm|\.rp)?(\.ftz)?(\.sat)?\.f(16|32|64)(x2)?\b)";
inline constexpr const char* kPtxFmaF64 = R"(\bfma\.rn\.f64\b)";
/// SASS: FP32 FMA; binary16x2 FMA on the FMA pipe (HFMA2) or the tensor pipe (HFMA2.MMA). ptxas
/// splits f16x2 FMAs between the two pipes and also uses `HFMA2[.MMA] Rd, -RZ, RZ, imm` as a
/// register move (in FP32 kernels too), so SASS counts are not FLOP counts: the exact count is
/// the PTX's. FP16x2 kernels must not contain FFMA; no kernel may contain other FP arithmetic.
inline constexpr const char* kSassFfma = R"(\bFFMA\b)";
inline constexpr const char* kSassHfma2 = R"(\bHFMA2(\.MMA)?\b)";
inline constexpr const char* kSassOtherFlop = R"(\b(FMUL|FADD|HMUL2|HADD2|DFMA|DMUL|DADD)\b)";
inline constexpr const char* kSassLoad128 = R"(\bLDG\.E(\.[A-Z0-9_]+)*\.128\b)";
inline constexpr const char* kSassStore128 = R"(\bSTG\.E(\.[A-Z0-9_]+)*\.128\b)";
/// 128-bit global load / store (any cache qualifier).
inline constexpr const char* kPtxLoad128 = R"(\bld\.global(\.[a-zA-Z0-9_:]+)*\.v4\.(u32|b32|f32)\b)";
inline constexpr const char* kPtxStore128 = R"(\bst\.global(\.[a-zA-Z0-9_:]+)*\.v4\.(u32|b32|f32)\b)";

/// Budgets shared by every kernel of the file: 256 threads, at most 32 registers on sm_80/90
/// (full occupancy: 8 blocks of 256 per SM); ptxas for sm_120 allocates up to 40, which still
/// fills an sm_120 SM (1536 threads).
inline contract::KernelContract base(const std::string& name_regex) {
  return contract::kernel(name_regex)
      .block(256)
      .registers(32)
      .static_smem(0)
      .occupancy(1.0)
      .no_ptx({kPtxOtherFlop, kPtxFmaF64})
      .no_sass({kSassOtherFlop})
      .on_arch(100, 32, 1.0)
      .on_arch(120, 40, 1.0);
}

/// A sweep kernel: exactly `count` FMAs of its kind, none of the other, 16-byte loads/stores.
inline contract::KernelContract sweep(const std::string& name_regex, bool fp32, int count) {
  return base(name_regex)
      .ptx_count(fp32 ? kPtxFmaF32 : kPtxFmaF16x2, count)
      .ptx_count(fp32 ? kPtxFmaF16x2 : kPtxFmaF32, 0)
      .ptx({kPtxLoad128, kPtxStore128})
      .sass({fp32 ? kSassFfma : kSassHfma2, kSassLoad128, kSassStore128})
      .no_sass(fp32 ? std::vector<std::string>{} : std::vector<std::string>{kSassFfma});
}

/// Every contract of families/intensity/intensity.cu, in instantiation order.
inline contract::FileContract intensity_contract() {
  contract::FileContract file;
  for (int k : kSweepFmaCounts) {
    const std::string kk = std::to_string(k);
    const int body = std::min(k, kSweepMaxUnrolledSteps);  // the unrolled steps; rolled rounds beyond
    file.push_back(sweep("::intensity_fp32_kernel<" + kk + ", 1>\\(", true, 8 * body + 1));
    file.push_back(sweep("::intensity_fp16x2_kernel<" + kk + ">\\(", false, 8 * body + 1));
  }
  file.push_back(sweep(R"(::intensity_fp32_kernel<1, 2>\()", true, 4 + 1));  // even elements only
  const int peak = 8 * kPeakStepsPerRound;                                   // kPeakChains x kPeakUnroll
  file.push_back(
      base(R"(::peak_fp32_kernel<8, 64>\()").ptx_count(kPtxFmaF32, peak).ptx_count(kPtxFmaF16x2, 0).sass({kSassFfma}));
  file.push_back(base(R"(::peak_fp16x2_kernel<8, 64>\()")
                     .ptx_count(kPtxFmaF16x2, peak)
                     .ptx_count(kPtxFmaF32, 0)
                     .sass({kSassHfma2})
                     .no_sass({kSassFfma}));
  return file;
}

}  // namespace intensity_detail

/// Contracts of every kernel in families/intensity/intensity.cu (checked by tests/contract).
inline const contract::FileContract kIntensityContract = intensity_detail::intensity_contract();

}  // namespace gpubench::kernels
