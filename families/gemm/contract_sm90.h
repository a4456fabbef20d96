// Instruction contract of families/gemm/gemm_sm90.cu (see kernels/contract.h), checked by
// tests/contract for sm_90a, the only target the file is built for.
//
// hgemm_wgmma_kernel<F16|BF16>: 384 threads (a producer and two consumer warpgroups) under
//   __launch_bounds__(384, 1), so ptxas caps registers at 168 at entry; setmaxnreg then moves
//   them: the producer drops to 40 (setmaxnreg.dec), the consumers rise to 232 (setmaxnreg.inc)
//   for their 128 accumulators. One block per SM (192 KiB of stages + barriers + alignment
//   slack): occupancy 384 / 2048 = 0.1875 on an H100, by design (the pipeline, not warps, hides
//   latency). Per stage, fully unrolled: 4 wgmma.m64n256k16 with B transposed (imm-trans-b 1,
//   MN-major) and 5 TMA box loads (A 64x128, B 4 x 64x64) completing on an mbarrier; the epilogue
//   stores pairs of floats (64 st.global.v2.f32). No Ampere path: no mma.sync, ldmatrix or
//   cp.async. In SASS: HGMMA.64x256x16, UTMALDG.2D, the SYNCS mbarrier operations and
//   USETMAXREG, no local memory (LDL/STL are forbidden for every kernel).
#pragma once

#include <string>

#include "families/gemm/hgemm_sm90.cuh"
#include "kernels/contract.h"

namespace gpubench::kernels {

namespace detail {
/// The contract of one instantiation; `type` is the PTX input type ("f16" or "bf16").
inline contract::KernelContract wgmma_gemm_contract(const std::string& tag, const std::string& type,
                                                    const std::string& hgmma_suffix) {
  return contract::kernel(R"(hgemm_wgmma_kernel<gpubench::kernels::hopper::)" + tag + R"(>\()")
      .block(hgemm_sm90::kThreads)
      .registers(168)
      .static_smem(0)
      .dynamic_smem(static_cast<int>(hgemm_sm90::kSmemBytes))
      .occupancy(0.1875)
      .ptx_count(
          R"(\bwgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.)" + type + R"(\.)" + type + R"(\b.*, p, 1, 1, 0, 1;)",
          4)
      .ptx_count(R"(\bcp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes\b)", 5)
      .ptx_count(R"(\bst\.global\.v2\.f32\b)", 64)
      .ptx({R"(\bsetmaxnreg\.dec\.sync\.aligned\.u32 40;)", R"(\bsetmaxnreg\.inc\.sync\.aligned\.u32 232;)",
            R"(\bwgmma\.fence\.sync\.aligned\b)", R"(\bwgmma\.commit_group\.sync\.aligned\b)",
            R"(\bwgmma\.wait_group\.sync\.aligned 1;)", R"(\bwgmma\.wait_group\.sync\.aligned 0;)",
            R"(\bmbarrier\.try_wait\.parity\.shared::cta\.b64\b)",
            R"(\bmbarrier\.arrive\.expect_tx\.shared::cta\.b64\b)", R"(\bmbarrier\.arrive\.shared::cta\.b64\b)",
            R"(\bfence\.mbarrier_init\.release\.cluster\b)"})
      .no_ptx({R"(\bmma\.sync\b)", R"(\bldmatrix\b)", R"(\bcp\.async\.(ca|cg)\b)", R"(\bwmma\.)"})
      .sass({R"(\bHGMMA\.64x256x16\.F32)" + hgmma_suffix + R"(.*gdesc\[UR[0-9]+\]\.tnspB)", R"(\bUTMALDG\.2D\b)",
             R"(\bSYNCS\.PHASECHK\.TRANS64\.TRYWAIT\b)", R"(\bSYNCS\.ARRIVE\.TRANS64\b)",
             R"(\bUSETMAXREG\.TRY_ALLOC\b)", R"(\bUSETMAXREG\.DEALLOC\b)", R"(\bWARPGROUP\.DEPBAR\.LE\b)",
             R"(\bSTG\.E\.64\b)"})
      .no_sass({R"(\bHMMA\b)", R"(\bLDSM\b)", R"(\bLDGSTS\b)"});
}
}  // namespace detail

/// Contracts of every kernel in gemm_sm90.cu. SASS names the FP16 HGMMA without a type suffix
/// and the BF16 one with .BF16.
inline const contract::FileContract kGemmSm90Contract = {
    detail::wgmma_gemm_contract("F16", "f16", R"(\s)"),
    detail::wgmma_gemm_contract("BF16", "bf16", R"(\.BF16\b)"),
};

}  // namespace gpubench::kernels
