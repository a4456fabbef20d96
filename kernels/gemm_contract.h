// Instruction contract of kernels/gemm.cu (see kernels/contract.h), for sm_80 and sm_90.
//
// sgemm_tiled_kernel: the K step of 8 is fully unrolled into exactly 8 x 8 x 8 = 512 fma.rn.f32
//   (the 8x8 register tile times 8 k), fed by 128-bit shared loads (ld.shared.v4.f32) and 128-bit
//   global loads/stores; __launch_bounds__(256, 2) caps registers at 128, so 2 blocks = 16 warps
//   per SM (occupancy 0.25, the usual point for register-tiled SGEMM: ILP, not warps, hides latency).
// sgemm_naive_kernel: the baseline; only the universal rules plus full occupancy.
// hgemm_mma_kernel: per K tile of 32, 2 k16 steps x (4 ldmatrix.x4 + 2 ldmatrix.x4.trans +
//   16 mma.sync m16n8k16) fully unrolled = 32 mma, 8 ldmatrix, 4 ldmatrix.trans; 4 cp.async of
//   16 bytes per thread per stage, unrolled in the 3-stage prologue and the loop = 16; commit and
//   wait_group present. 64 KiB dynamic shared memory and <= 128 registers: 2 blocks per SM on
//   A100 (164 KiB shared) and H100 (228 KiB), occupancy 0.25. SASS: HMMA.16816.F32, LDSM, LDGSTS.
// hgemm_wmma_kernel: the baseline; wmma.mma.sync present, one padded stage of static shared memory.
#pragma once

#include "kernels/contract.h"

namespace gpubench::kernels {

/// The contracts of every kernel in kernels/gemm.cu.
inline contract::FileContract gemm_contract() {
  contract::FileContract file;

  contract::KernelContract tiled;
  tiled.kernel = R"(sgemm_tiled_kernel\()";
  tiled.block_threads = 256;
  tiled.max_registers = 128;
  tiled.max_static_smem_bytes = 2 * 2 * 8 * 128 * 4;  // two stages of A^T and B, 8 x 128 floats
  tiled.min_occupancy = 0.25;
  tiled.ptx_counts = {{R"(\bfma\.rn\.f32\b)", 512}};
  tiled.ptx_required = {R"(ld\.shared\.v4\.f32)", R"(ld\.global(\.nc)?\.v4\.f32)", R"(st\.global\.v4\.f32)",
                        R"(st\.shared\.v4\.f32)"};
  // Any other FP32 arithmetic in the kernel would be FLOP outside the counted FMAs.
  tiled.ptx_forbidden = {R"(\b(mul|add|sub)\.(rn\.)?f32\b)"};
  tiled.sass_required = {R"(\bFFMA\b)", R"(\bLDS\.128\b)", R"(\bLDG\.E\.128)"};
  file.push_back(tiled);

  contract::KernelContract naive;
  naive.kernel = R"(sgemm_naive_kernel\()";
  naive.block_threads = 256;
  naive.max_registers = 32;
  naive.max_static_smem_bytes = 0;
  naive.min_occupancy = 1.0;
  naive.ptx_required = {R"(\bfma\.rn\.f32\b)"};
  file.push_back(naive);

  contract::KernelContract mma;
  mma.kernel = R"(hgemm_mma_kernel\()";
  mma.block_threads = 256;
  mma.max_registers = 128;
  mma.max_static_smem_bytes = 0;
  mma.dynamic_smem_bytes = 4 * (128 * 32 + 32 * 128) * 2;  // hgemm::kSmemBytes
  mma.min_occupancy = 0.25;
  mma.ptx_counts = {{R"(mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32)", 32},
                    {R"(ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16)", 8},
                    {R"(ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16)", 4},
                    {R"(cp\.async\.cg\.shared\.global \[[^]]+\], \[[^]]+\], 16)", 16}};
  mma.ptx_required = {R"(cp\.async\.commit_group)", R"(cp\.async\.wait_group 2)", R"(cp\.async\.wait_group 0)"};
  // The fast kernel must not fall back to the wmma API or to CUDA-core FP32 math in its loop.
  mma.ptx_forbidden = {R"(\bwmma\.)", R"(\bfma\.rn\.f32\b)"};
  mma.sass_required = {R"(\bHMMA\.16816\.F32\b)", R"(\bLDSM\.16\.M88\.4\b)", R"(\bLDSM\.16\.MT88\.4\b)",
                       R"(\bLDGSTS\.E\.BYPASS\.128\b)"};
  file.push_back(mma);

  contract::KernelContract wmma;
  wmma.kernel = R"(hgemm_wmma_kernel\()";
  wmma.block_threads = 256;
  wmma.max_registers = 128;
  wmma.max_static_smem_bytes = (128 * 40 + 32 * 136) * 2;  // padded A and B stage
  wmma.min_occupancy = 0.25;
  wmma.ptx_required = {R"(wmma\.mma\.sync\.aligned\.row\.row\.m16n16k16\.f32\.f32)", R"(wmma\.load\.a\.sync)"};
  wmma.sass_required = {R"(\bHMMA\.16816\.F32\b)"};
  file.push_back(wmma);

  return file;
}

}  // namespace gpubench::kernels
