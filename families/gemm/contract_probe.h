// Instruction contract of families/gemm/hopper_probe.cu (see kernels/contract.h), checked by
// tests/contract for sm_90a, the only target the file is built for. The probe must run the same
// instructions as the GEMM's building blocks (contract_sm90.h), or its verdict says nothing
// about them:
//  - wgmma_probe_kernel<F16|BF16>: one warpgroup; 5 plain TMA loads (A, and B in four boxes)
//    and 4 wgmma.m64n256k16 with B transposed, as one stage of the GEMM; HGMMA ... .tnspB in
//    SASS; its 128 accumulators in registers (no local memory, as for every kernel).
//  - multicast_kernel: one multicast TMA load, remote arrives through mapa, the cluster barrier.
//  - tma_box_kernel: one plain TMA load, nothing of clusters.
//  - tma_store_probe_kernel: the GEMM epilogue's TMA store (one, its bulk group committed and
//    waited for, the box's writes fenced for the async proxy), no load, nothing of clusters.
// Every wait reads %globaltimer (the bounded waits).
#pragma once

#include <string>

#include "families/gemm/contract_sm90.h"  // the TMA load forms
#include "families/gemm/hopper_probe.h"
#include "kernels/contract.h"

namespace gpubench::kernels {

namespace detail {
inline contract::KernelContract probe_base(const std::string& name) {
  return contract::kernel(name)
      .block(probe::kThreads)
      .static_smem(0)
      .dynamic_smem(static_cast<int>(probe::kSmemBytes))
      .occupancy(0.0625)
      .ptx({R"(%globaltimer)", R"(\bmbarrier\.try_wait\.parity\.shared::cta\.b64\b)",
            R"(\bmbarrier\.arrive\.expect_tx\.shared::cta\.b64\b)", R"(\bfence\.mbarrier_init\.release\.cluster\b)"})
      .sass({R"(\bUTMALDG\.2D\b)", R"(\bSYNCS\.PHASECHK\.TRANS64\.TRYWAIT\b)"});
}

inline contract::KernelContract probe_wgmma(const std::string& tag, const std::string& type,
                                            const std::string& hgmma_suffix) {
  return probe_base(R"(hopper_probe::wgmma_probe_kernel<gpubench::kernels::hopper::)" + tag + R"(>\()")
      .registers(168)
      .ptx_count(
          R"(\bwgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.)" + type + R"(\.)" + type + R"(\b.*, p, 1, 1, 0, 1;)",
          4)
      .ptx_count(kTmaPlain, 5)
      .ptx_count(kTmaMulticast, 0)
      .ptx({R"(\bwgmma\.fence\.sync\.aligned\b)", R"(\bwgmma\.commit_group\.sync\.aligned\b)",
            R"(\bwgmma\.wait_group\.sync\.aligned 0;)"})
      .sass({R"(\bHGMMA\.64x256x16\.F32)" + hgmma_suffix + R"(.*gdesc\[UR[0-9]+\]\.tnspB)"});
}
}  // namespace detail

/// Contracts of every kernel in hopper_probe.cu (SASS names the FP16 HGMMA without a type suffix).
inline const contract::FileContract kHopperProbeContract = {
    detail::probe_wgmma("F16", "f16", R"(\s)"),
    detail::probe_wgmma("BF16", "bf16", R"(\.BF16\b)"),
    detail::probe_base(R"(hopper_probe::multicast_kernel\()")
        .registers(64)
        .ptx_count(detail::kTmaMulticast, 1)
        .ptx_count(detail::kTmaPlain, 0)
        .ptx({R"(\bmapa\.shared::cluster\.u32\b)", R"(\bmbarrier\.arrive\.shared::cluster\.b64 _, \[)",
              R"(\bbarrier\.cluster\.wait\.acquire\.aligned;)", R"(%cluster_ctarank)"})
        .sass({R"(\bUTMALDG\.2D\.MULTICAST\b)"}),
    contract::kernel(R"(hopper_probe::tma_store_probe_kernel\()")
        .block(probe::kThreads)
        .registers(64)
        .static_smem(0)
        .dynamic_smem(static_cast<int>(probe::kSmemBytes))
        .occupancy(0.0625)
        .ptx_count(R"(\bcp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group \[)", 1)
        .ptx({R"(\bfence\.proxy\.async\.shared::cta;)", R"(\bcp\.async\.bulk\.commit_group;)",
              R"(\bcp\.async\.bulk\.wait_group 0;)"})
        .no_ptx({R"(\bcp\.async\.bulk\.tensor\.2d\.shared::cluster\b)", R"(\bbarrier\.cluster\b)", R"(\bwgmma\b)"})
        .sass({R"(\bUTMASTG\.2D\b)", R"(\bFENCE\.VIEW\.ASYNC\.S\b)"})
        .no_sass({R"(\bUTMALDG\b)"}),
    detail::probe_base(R"(hopper_probe::tma_box_kernel\()")
        .registers(64)
        .ptx_count(detail::kTmaPlain, 1)
        .ptx_count(detail::kTmaMulticast, 0)
        .no_ptx({R"(\bbarrier\.cluster\b)", R"(\bmapa\b)", R"(\bwgmma\b)"})
        .no_sass({R"(\bUTMALDG\.2D\.MULTICAST\b)"}),
};

}  // namespace gpubench::kernels
