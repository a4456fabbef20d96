// Instruction contract of the shared-memory kernel (families/smem/smem.cu, body in smem.cuh),
// checked by the contract tests for every target architecture (see kernels/contract.h for the
// fields).
//
// What it pins down: the read loop is built from 128-bit shared loads (ld.shared.v4.u32 in PTX,
// LDS.128 in SASS), kSmemUnroll = 4 of them per iteration at immediate row offsets (+0, +4096,
// +8192, +12288 bytes from one address register: the fourth one's +12288 / +0x3000 is
// required), so the loop spends no address arithmetic per load; the fill is a 128-bit global
// load and a 128-bit shared store; the only global store is the one 32-bit result per thread.
//
// Budgets: nvcc 13 / ptxas 13 give the kernel 26 registers on sm_80, sm_90, sm_100 and sm_120
// (budget 32: registers never limit occupancy at 256 threads). Occupancy is set by the dynamic
// shared memory, computed here at the size the bandwidth/smem workload launches with
// (kSmemContractBytesPerBlock = 32 KiB, plus 1 KiB the driver reserves per block): A100 4 blocks
// per SM (164 KiB) = 1024 of 2048 threads, 0.5; H100 and B200 6 blocks (228 KiB) = 0.75;
// RTX 5090 (sm_120: 100 KiB, 1536 threads) 3 blocks = 0.5. The shared memory delivers one
// LDS.128 warp instruction per 4 cycles per SM; each warp has 4 in flight per iteration, so a
// few warps per SM already keep it busy: these occupancies are ample.
#pragma once

#include "kernels/contract.h"

namespace gpubench::kernels {

/// Dynamic shared memory per block the occupancy targets below assume (the workload's size).
inline constexpr int kSmemContractBytesPerBlock = 32 * 1024;

/// 128-bit shared load / global load in PTX; the unrolled loop's fourth load (row offset 3 x 4 KiB).
inline constexpr const char* kPtxSharedLoad128 = R"(\bld\.shared\.v4\.(u32|b32)\b)";
inline constexpr const char* kPtxSharedLoad128Row3 = R"(\bld\.shared\.v4\.(u32|b32)\s.*\+12288\])";
inline constexpr const char* kPtxSharedStore128 = R"(\bst\.shared\.v4\.(u32|b32)\b)";
inline constexpr const char* kPtxGlobalLoad128 = R"(\bld\.global(\.[a-zA-Z0-9_:]+)*\.v4\.(u32|b32)\b)";
/// 128-bit shared load in SASS (`LDS.128 R4, [R22.X16+0x3000]` on sm_80, `[R22+UR4+0x3000]`
/// on sm_120), and the unrolled loop's fourth load.
inline constexpr const char* kSassSharedLoad128 = R"(\bLDS\.128\b)";
inline constexpr const char* kSassSharedLoad128Row3 = R"(\bLDS\.128\s+R\d+,\s*\[[^\]]*\+0x3000\])";

/// Contracts of every kernel in families/smem/smem.cu.
// clang-format off: one kernel per row, each line one group of properties
inline const contract::FileContract kSmemContract = {
    contract::kernel(R"(::smem_read_kernel<4>\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .dynamic_smem(kSmemContractBytesPerBlock)
        .occupancy(0.5)  // A100; H100 0.75
        .ptx({kPtxSharedLoad128, kPtxSharedLoad128Row3, kPtxSharedStore128})
        .ptx({kPtxGlobalLoad128, R"(\bst\.global\.u32\b)"})
        .no_ptx({R"(\bld\.shared\.(u32|b32|v2)\b)", R"(\bst\.shared\.(u32|b32|v2)\b)",
                 R"(\bst\.global(\.[a-z0-9_]+)*\.v[24]\b)"})
        .ptx_count(R"(\bst\.global\b)", 1)
        .ptx_count(R"(\bbar\.sync\b)", 1)
        .sass({kSassSharedLoad128, kSassSharedLoad128Row3, R"(\bSTS\.128\b)"})
        .no_sass({R"(\bLDS(?!\.128\b)(\.[A-Z0-9]+)*\s)"})  // no narrower shared load
        .on_arch(90, 32, 0.75)
        .on_arch(100, 32, 0.75)
        .on_arch(120, 32, 0.5),
};
// clang-format on

}  // namespace gpubench::kernels
