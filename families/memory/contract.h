// Instruction contract of the memory-management family's kernels (families/memory/memory.cu,
// bodies in memory.cuh), checked by the contract tests for every target architecture (see
// kernels/contract.h for the fields).
//
// What it pins down:
//  - every bulk loop moves 16-byte vectors: 128-bit global loads (and, for axpy and the
//    transform, stores) in PTX (ld.global[.nc].v4 / st.global.v4) and in SASS (LDG.E.128 /
//    STG.E.128);
//  - axpy computes in the right precision, one fused operation per element and nothing else:
//    fma.rn.f64 (DFMA) for FP64, fma.rn.f32 (FFMA) for FP32, FP16 and BF16, and never an FMA of
//    another precision (FP16 arithmetic in half, or FP32 promoted to double, would change the
//    bits). The count is exact: kAxpyUnroll x kPerVector in the unrolled chunk, kPerVector in
//    the one-vector remainder loop and 1 in the scalar tail (FP64 2x2+2+1 = 7, FP32 4x2+4+1 =
//    13, FP16/BF16 8x2+8+1 = 25), so an element computed twice, or a vector half-computed,
//    fails. No .ftz (denormals are results too) and no rounding mode but round-to-nearest;
//  - FP16/BF16 narrow with the packed round-to-nearest conversions (cvt.rn.f16x2.f32 /
//    cvt.rn.bf16x2.f32: F2FP ... PACK_AB in SASS), FP16 widens with cvt.f32.f16 (HADD2.F32);
//  - the checksum writes exactly one 32-bit partial per block after one barrier (warp shuffles,
//    then one value per warp through 32 bytes of shared memory).
//
// Budgets: nvcc 13 / ptxas 13 give (registers, sm_80 / sm_90 / sm_100 / sm_120):
//   axpy fp64 30/30/24/38, fp32 32/32/26/40, fp16 32/32/31/38, bf16 32/32/31/38,
//   checksum 30/30/28/30, transform 30/30/29/31.
// The budget is the most that keeps full occupancy at 256 threads: 32 where an SM holds 2048
// threads (A100, H100, B200: 65536 / 2048), 40 on sm_120 (1536 threads: 6 blocks of 256 x 40
// registers fit in 64 K). Full occupancy puts 64 bytes of axpy loads in flight per thread, 128
// KiB per SM: far above the 15-25 KiB per SM that DRAM latency x bandwidth needs, so the
// budget could be traded for deeper unrolling later without losing bandwidth.
#pragma once

#include "kernels/contract.h"

namespace gpubench::kernels {

namespace memory_contract {

/// 128-bit global load / store in PTX (any cache qualifier: ld.global.nc.v4.u32 is one).
inline constexpr const char* kPtxLoad128 = R"(\bld\.global(\.[a-zA-Z0-9_:]+)*\.v4\.(u32|b32|s32|f32)\b)";
inline constexpr const char* kPtxStore128 = R"(\bst\.global(\.[a-zA-Z0-9_:]+)*\.v4\.(u32|b32|s32|f32)\b)";
/// 128-bit global load / store in SASS (LDG.E.128, LDG.E.128.CONSTANT, STG.E.128).
inline constexpr const char* kSassLoad128 = R"(\bLDG\.E(\.[A-Z0-9_]+)*\.128\b)";
inline constexpr const char* kSassStore128 = R"(\bSTG\.E(\.[A-Z0-9_]+)*\.128\b)";

/// FMA in PTX by precision; any FMA at all (to forbid the other precisions).
inline constexpr const char* kPtxFmaF64 = R"(\bfma\.rn\.f64\b)";
inline constexpr const char* kPtxFmaF32 = R"(\bfma\.rn\.f32\b)";
inline constexpr const char* kPtxFmaNotF32 = R"(\bfma(\.[a-z0-9]+)*\.(f64|f16|f16x2|bf16|bf16x2)\b)";
inline constexpr const char* kPtxFmaNotF64 = R"(\bfma(\.[a-z0-9]+)*\.(f32|f16|f16x2|bf16|bf16x2)\b)";
/// Flush-to-zero or a rounding other than to-nearest-even anywhere in the kernel.
inline constexpr const char* kPtxFtz = R"(\.ftz\b)";
inline constexpr const char* kPtxNotNearest = R"(\b(cvt|fma|add|mul)\.(rz|rm|rp|rna|rs)\b)";

/// FP16: widened with cvt.f32.f16, narrowed two at a time with cvt.rn.f16x2.f32.
inline constexpr const char* kPtxWidenF16 = R"(\bcvt\.f32\.f16\b)";
inline constexpr const char* kPtxNarrowF16x2 = R"(\bcvt\.rn\.f16x2\.f32\b)";
inline constexpr const char* kPtxNarrowBf16x2 = R"(\bcvt\.rn\.bf16x2\.f32\b)";
/// F2FP.PACK_AB (sm_80) / F2FP.F16.F32.PACK_AB (sm_90 on); the BF16 form; HADD2.F32 widening.
inline constexpr const char* kSassPackF16 = R"(\bF2FP(\.F16)?(\.F32)?\.PACK_AB\b)";
inline constexpr const char* kSassPackBf16 = R"(\bF2FP\.BF16(\.F32)?\.PACK_AB\b)";
inline constexpr const char* kSassWidenF16 = R"(\bHADD2\.F32\b)";

}  // namespace memory_contract

/// Contracts of every kernel in families/memory/memory.cu.
// clang-format off: one kernel per row, each line one group of properties
inline const contract::FileContract kMemoryFamilyContract = {
    contract::kernel(R"(::axpy_kernel<[^>]*::AxpyFp64, 2>\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({memory_contract::kPtxLoad128, memory_contract::kPtxStore128})
        .ptx_count(memory_contract::kPtxFmaF64, 7)
        .no_ptx({memory_contract::kPtxFmaNotF64, memory_contract::kPtxFtz, memory_contract::kPtxNotNearest})
        .sass({memory_contract::kSassLoad128, memory_contract::kSassStore128, R"(\bDFMA\b)"})
        .no_sass({R"(\bFFMA\b)"})
        .on_arch(120, 40, 1.0),
    contract::kernel(R"(::axpy_kernel<[^>]*::AxpyFp32, 2>\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({memory_contract::kPtxLoad128, memory_contract::kPtxStore128})
        .ptx_count(memory_contract::kPtxFmaF32, 13)
        .no_ptx({memory_contract::kPtxFmaNotF32, memory_contract::kPtxFtz, memory_contract::kPtxNotNearest})
        .sass({memory_contract::kSassLoad128, memory_contract::kSassStore128, R"(\bFFMA\b)"})
        .no_sass({R"(\bDFMA\b)"})
        .on_arch(120, 40, 1.0),
    contract::kernel(R"(::axpy_kernel<[^>]*::AxpyFp16, 2>\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({memory_contract::kPtxLoad128, memory_contract::kPtxStore128})
        .ptx({memory_contract::kPtxWidenF16, memory_contract::kPtxNarrowF16x2})
        .ptx_count(memory_contract::kPtxFmaF32, 25)
        .no_ptx({memory_contract::kPtxFmaNotF32, memory_contract::kPtxFtz, memory_contract::kPtxNotNearest})
        .sass({memory_contract::kSassLoad128, memory_contract::kSassStore128, R"(\bFFMA\b)"})
        .sass({memory_contract::kSassWidenF16, memory_contract::kSassPackF16})
        .no_sass({R"(\bDFMA\b)"})
        .on_arch(120, 40, 1.0),
    contract::kernel(R"(::axpy_kernel<[^>]*::AxpyBf16, 2>\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({memory_contract::kPtxLoad128, memory_contract::kPtxStore128, memory_contract::kPtxNarrowBf16x2})
        .ptx_count(memory_contract::kPtxFmaF32, 25)
        .no_ptx({memory_contract::kPtxFmaNotF32, memory_contract::kPtxFtz, memory_contract::kPtxNotNearest})
        .sass({memory_contract::kSassLoad128, memory_contract::kSassStore128, R"(\bFFMA\b)"})
        .sass({memory_contract::kSassPackBf16})
        .no_sass({R"(\bDFMA\b)"})
        .on_arch(120, 40, 1.0),
    contract::kernel(R"(::checksum_kernel<4>\()")
        .block(256)
        .registers(32)
        .static_smem(32)  // one sum per warp
        .occupancy(1.0)
        .ptx({memory_contract::kPtxLoad128, R"(\bshfl\.sync\.bfly\.b32\b)"})
        .no_ptx({R"(\bst\.global(\.[a-z0-9_]+)*\.v[24]\b)"})
        .ptx_count(R"(\bst\.global\b)", 1)
        .ptx_count(R"(\bbar\.sync\b)", 1)
        .sass({memory_contract::kSassLoad128})
        .on_arch(120, 40, 1.0),
    contract::kernel(R"(::transform_kernel<2>\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({memory_contract::kPtxLoad128, memory_contract::kPtxStore128, R"(\bmad\.lo\.(s|u)32\b)"})
        .sass({memory_contract::kSassLoad128, memory_contract::kSassStore128})
        .on_arch(120, 40, 1.0),
};
// clang-format on

}  // namespace gpubench::kernels
