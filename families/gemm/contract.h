// Instruction contract of families/gemm/gemm.cu (see kernels/contract.h), checked by tests/contract
// on every target architecture (sm_80, sm_90, and sm_100/sm_120 where nvcc has them).
//
// sgemm_tiled_kernel: the K step of 8 is fully unrolled into exactly 8 x 8 x 8 = 512 fma.rn.f32
//   (the 8x8 register tile times 8 k) and no other FP32 arithmetic, fed by 128-bit shared loads
//   and 128-bit global loads/stores. __launch_bounds__(256, 2) caps registers at 128: 2 blocks =
//   16 warps per SM, occupancy 0.25 (A100/H100: 2048 threads per SM), the usual point for a
//   register-tiled SGEMM, where ILP across the 64 independent accumulators hides latency.
// sgemm_naive_kernel: the baseline; universal rules plus full occupancy.
// hgemm_mma_kernel: 4 warps of 64x64. Per K tile of 32, 2 k16 steps x (4 ldmatrix.x4 +
//   4 ldmatrix.x4.trans + 32 mma.sync m16n8k16), fully unrolled = 64 mma, 8 ldmatrix, 8
//   ldmatrix.trans; 4 + 4 cp.async of 16 bytes per thread per stage, unrolled in the 3-stage
//   prologue and in the loop = 32; commit, wait_group 2 (kStages - 2) and a final wait_group 0.
//   No wmma and no FP32 FMA. 64 KiB of dynamic shared memory and <= 255 registers
//   (__launch_bounds__(128, 2)): 2 blocks = 8 warps per SM on A100 (164 KiB shared) and H100
//   (228 KiB), occupancy 0.125, the regime of CUTLASS's own Ampere kernels (latency is hidden by
//   32 independent mma per k16 step and 3 tiles in flight, not by warps); sm_120 (100 KiB
//   shared, 1536 threads) holds one block: 1/12.
// hgemm_wmma_kernel: the baseline; wmma.mma.sync present, one padded static stage.
#pragma once

#include "kernels/contract.h"

namespace gpubench::kernels {

/// Contracts of every kernel in gemm.cu.
// clang-format off: one kernel per row, each line one group of properties
inline const contract::FileContract kGemmContract = {
    contract::kernel(R"(sgemm_tiled_kernel\()")
        .block(256)
        .registers(128)
        .static_smem((2 * 8 * (128 + 4) + 2 * 8 * 128) * 4)  // A padded by 4 floats per k row
        .occupancy(0.25)
        .ptx_count(R"(\bfma\.rn\.f32\b)", 512)
        .ptx({R"(\bld\.shared\.v4\.f32\b)", R"(\bst\.shared\.v4\.f32\b)", R"(\bld\.global(\.[a-z0-9_]+)*\.v4\.f32\b)",
              R"(\bst\.global\.v4\.f32\b)"})
        .no_ptx({R"(\b(mul|add|sub)\.(rn\.)?f32\b)"})
        .sass({R"(\bFFMA\b)", R"(\bLDS\.128\b)", R"(\bLDG\.E(\.[A-Z0-9_]+)*\.128\b)"})
        .on_arch(120, 200, 1.0 / 6.0),  // one block per SM there (see kMinBlocksPerSm)
    contract::kernel(R"(sgemm_naive_kernel\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({R"(\bfma\.rn\.f32\b)"})
        .on_arch(100, 40, 0.75)
        .on_arch(120, 40, 0.75),
    contract::kernel(R"(hgemm_mma_kernel\()")
        .block(128)
        .registers(255)
        .static_smem(0)
        .dynamic_smem(4 * (128 * 32 + 32 * 128) * 2)
        .occupancy(0.125)
        .ptx_count(R"(\bmma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32\b)", 64)
        .ptx_count(R"(\bldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16\b)", 8)
        .ptx_count(R"(\bldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16\b)", 8)
        .ptx_count(R"(\bcp\.async\.cg\.shared\.global \[[^\]]+\], \[[^\]]+\], 16\b)", 32)
        .ptx({R"(\bcp\.async\.commit_group\b)", R"(\bcp\.async\.wait_group 2\b)", R"(\bcp\.async\.wait_group 0\b)"})
        .no_ptx({R"(\bwmma\.)", R"(\bfma\.rn\.f32\b)"})
        .sass({R"(\bHMMA\.16816\.F32\b)", R"(\bLDSM\.16\.M88\.4\b)", R"(\bLDSM\.16\.MT88\.4\b)",
               R"(\bLDGSTS\.E(\.[A-Z0-9_]+)*\.128\b)"})
        .on_arch(120, 255, 1.0 / 12.0),
    contract::kernel(R"(hgemm_wmma_kernel\()")
        .block(256)
        .registers(128)
        .static_smem((128 * 40 + 32 * 136) * 2)
        .occupancy(0.25)
        .ptx({R"(\bwmma\.mma\.sync\.aligned\.row\.row\.m16n16k16\.f32\.f32\b)", R"(\bwmma\.load\.a\.sync\b)"})
        .sass({R"(\bHMMA\.16816\.F32\b)"}),
};
// clang-format on

}  // namespace gpubench::kernels
