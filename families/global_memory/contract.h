// Instruction contract of the device-memory kernels (global_memory.cu / global_memory.cuh), checked
// by tests/contract for every target architecture (see kernels/contract.h for the fields).
//
// Why these numbers: the streaming kernels keep kMemoryUnroll 16-byte loads in flight per
// thread, so bytes in flight per SM = resident threads x 64 B; at full occupancy that is 128 KiB
// per SM, far above what DRAM latency x bandwidth needs (about 15 KiB per SM on H100). The
// budget is what nvcc 13 gives them on sm_80/sm_90 (32 registers: full occupancy, 8 blocks of
// 256); ptxas for sm_100/sm_120 schedules them with more registers, so those get their own
// budget with occupancy still >= 75 %.
// The PTX regexes accept cache qualifiers (`ld.global.nc.v4.u32` is a 128-bit global load).
#pragma once

#include "kernels/contract.h"

namespace gpubench::kernels {

/// 128-bit global load / store in PTX and in SASS.
inline constexpr const char* kPtxLoad128 = R"(\bld\.global(\.[a-zA-Z0-9_:]+)*\.v4\.(u32|b32|s32|f32)\b)";
inline constexpr const char* kPtxStore128 = R"(\bst\.global(\.[a-zA-Z0-9_:]+)*\.v4\.(u32|b32|s32|f32)\b)";
inline constexpr const char* kSassLoad128 = R"(\bLDG\.E(\.[A-Z0-9_]+)*\.128\b)";
inline constexpr const char* kSassStore128 = R"(\bSTG\.E(\.[A-Z0-9_]+)*\.128\b)";

/// copy's and read's 16-byte loads bypass the L1 (ld.global.cg; see global_memory.cuh), never
/// the non-coherent path that caches in it.
inline constexpr const char* kPtxLoad128L2 = R"(\bld\.global\.cg\.v4\.(u32|b32|s32|f32)\b)";
inline constexpr const char* kPtxLoad128Nc = R"(\bld\.global\.nc\.v4)";

/// Contracts of every kernel in memory.cu.
// clang-format off: one kernel per row, each line one group of properties
inline const contract::FileContract kMemoryContract = {
    contract::kernel(R"(::copy_kernel<4>\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({kPtxLoad128L2, kPtxStore128})
        .no_ptx({kPtxLoad128Nc})
        .sass({kSassLoad128, kSassStore128})
        // sm_100's ptxas gives the L2-only loads 48 registers (40 with the non-coherent ones):
        // 5 blocks, 4 x 16 B x 1280 threads = 80 KiB in flight per SM, still several times what
        // DRAM latency x bandwidth needs.
        .on_arch(100, 48, 0.625)
        .on_arch(120, 48, 0.75),
    contract::kernel(R"(::read_kernel<4>\()")
        .block(256)
        .registers(32)
        .static_smem(128)
        .occupancy(1.0)  // smem: one sum per warp
        .ptx({kPtxLoad128L2})
        .no_ptx({R"(\bst\.global\.v4)", kPtxLoad128Nc})
        .sass({kSassLoad128})
        .on_arch(100, 40, 0.75)
        .on_arch(120, 40, 0.75),
    // Every block reads the whole set: 128-bit loads, nothing stored but the block's sum.
    contract::kernel(R"(::block_set_read_kernel<4>\()")
        .block(256)
        .registers(32)
        .static_smem(128)
        .occupancy(1.0)
        .ptx({kPtxLoad128})
        .no_ptx({R"(\bst\.global\.v4)"})
        .sass({kSassLoad128})
        .on_arch(100, 40, 0.75)
        .on_arch(120, 40, 0.75),
    contract::kernel(R"(::write_kernel<4>\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({kPtxStore128})
        .no_ptx({R"(\bld\.global)"})  // write-only: no global load at all
        .sass({kSassStore128})
        .no_sass({R"(\bLDG\b)"})
        .on_arch(100, 40, 0.75)
        .on_arch(120, 40, 0.75),
    contract::kernel(R"(::strided_copy_kernel<8>\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({R"(\bld\.global(\.nc)?\.f32\b)", R"(\bst\.global\.f32\b)"})
        .on_arch(100, 40, 0.75)
        .on_arch(120, 40, 0.75),
    contract::kernel(R"(::gather_kernel<8>\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({R"(\bld\.global(\.nc)?\.u32\b)", R"(\bld\.global(\.nc)?\.f32\b)", R"(\bst\.global\.f32\b)"})
        .on_arch(100, 40, 0.75)
        .on_arch(120, 40, 0.75),
    // The input fill (words and floats): stores only (the inputs are a formula of the index),
    // never a load.
    contract::kernel(R"(::seeded_fill_kernel<(false|true)>\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({R"(\bst\.global\.(u32|b32|f32)\b)"})
        .no_ptx({R"(\bld\.global)"})
        .on_arch(100, 40, 0.75)
        .on_arch(120, 40, 0.75),
    // The chase ring's fill: stores only (the ring is a formula of the entry), never a load.
    contract::kernel(R"(::chase_ring_fill_kernel\()")
        .block(256)
        .registers(32)
        .static_smem(0)
        .occupancy(1.0)
        .ptx({R"(\bst\.global\.(u32|b32)\b)"})
        .no_ptx({R"(\bld\.global)"})
        .on_arch(100, 40, 0.75)
        .on_arch(120, 40, 0.75),
    // One thread by design (latency, not bandwidth): occupancy is irrelevant.
    contract::kernel(R"(::pointer_chase_kernel<4>\()")
        .block(1)
        .registers(32)
        .static_smem(0)
        .occupancy(0.0)
        .ptx({R"(%clock64)", R"(\bld\.global(\.nc)?\.u32\b)"}),
};
// clang-format on

}  // namespace gpubench::kernels
