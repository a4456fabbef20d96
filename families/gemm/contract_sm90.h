// Instruction contract of families/gemm/gemm_sm90.cu (see kernels/contract.h), checked by
// tests/contract for sm_90a, the only target the file is built for.
//
// hgemm_wgmma_kernel<F16|BF16, 1|2>: 384 threads (a producer and two consumer warpgroups) under
//   __launch_bounds__(384, 1), so ptxas caps registers at 168 at entry; setmaxnreg then moves
//   them: the producer drops to 40 (setmaxnreg.dec), the consumers rise to 232 (setmaxnreg.inc)
//   for their 128 accumulators. One block per SM (192 KiB of stages + barriers + alignment
//   slack): occupancy 384 / 2048 = 0.1875 on an H100, by design (the pipeline, not warps, hides
//   latency). Per stage, fully unrolled: 4 wgmma.m64n256k16 with B transposed (imm-trans-b 1,
//   MN-major) and the TMA box loads completing on an mbarrier (kClusterM = 1: 5, A 64x128 and B
//   4 x 64x64; kClusterM = 2: A and two B boxes multicast to the cluster); the epilogue stores
//   pairs of floats (64 st.global.v2.f32). Thread 0 prefetches the tensor maps it uses into the
//   descriptor cache (prefetch.tensormap, UTMACCTL.PF in SASS: 3 with the TMA-store epilogue, 2
//   without). No Ampere path: no mma.sync, ldmatrix or cp.async. In
//   SASS: HGMMA.64x256x16, UTMALDG.2D, the SYNCS mbarrier operations and USETMAXREG, no local
//   memory (LDL/STL are forbidden for every kernel). The wgmma pipeline as written: one
//   WARPGROUP.ARRIVE before a stage's four HGMMA, only the last of them closing the group (gsb0),
//   one WARPGROUP.DEPBAR.LE gsb0, 0x1 in the loop (a stage left in flight) and one 0x0 after it;
//   a serialised build (what CUDA 12.0-12.8's ptxas made of uninitialised accumulators: advisory
//   C7515) has an ARRIVE and a DEPBAR.LE gsb0, 0x0 around every HGMMA. The cluster kernel's own
//   expectations are in wgmma_gemm_cluster; the single-block one must show nothing of clusters.
#pragma once

#include <string>

#include "families/gemm/hgemm_sm90.cuh"
#include "kernels/contract.h"

namespace gpubench::kernels {

namespace detail {
/// The epilogue's instructions (see the top of this file).
inline contract::KernelContract wgmma_epilogue(contract::KernelContract c, hgemm_sm90::Epilogue epilogue) {
  if (epilogue == hgemm_sm90::Epilogue::kDirect) {
    return c.ptx_count(R"(\bst\.global\.v2\.f32\b)", 64)
        .ptx_count(R"(\bprefetch\.tensormap\b)", 2)  // A's and B's maps
        .sass_count(R"(\bUTMACCTL\.PF\b)", 2)
        .ptx_count(R"(\bst\.shared\.v2\.f32\b)", 0)
        .no_ptx({R"(\bcp\.async\.bulk\.tensor\.2d\.global\.shared::cta\b)", R"(\bcp\.async\.bulk\.commit_group\b)"})
        .sass({R"(\bSTG\.E\.64\b)"})
        .no_sass({R"(\bUTMASTG\b)"});
  }
  return c.ptx_count(R"(\bst\.shared\.v2\.f32\b)", 64)
      .ptx_count(R"(\bprefetch\.tensormap\b)", 3)  // A's, B's and C's maps
      .sass_count(R"(\bUTMACCTL\.PF\b)", 3)
      .ptx_count(R"(\bcp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group \[)", 8)
      .ptx_count(R"(\bfence\.proxy\.async\.shared::cta;)", 8)
      .ptx_count(R"(\bcp\.async\.bulk\.commit_group;)", 8)
      .ptx_count(R"(\bcp\.async\.bulk\.wait_group\.read 1;)", 8)
      .ptx_count(R"(\bcp\.async\.bulk\.wait_group 0;)", 1)
      .ptx_count(R"(\bst\.global\b)", 0)
      .sass({R"(\bUTMASTG\.2D\b)", R"(\bSTS\.64\b)", R"(\bFENCE\.VIEW\.ASYNC\.S\b)"})
      .no_sass({R"(\bSTG\b)"});
}

/// What every instantiation shares; `type` is the PTX input type ("f16" or "bf16"), `cluster` the
/// template argument kClusterM.
inline contract::KernelContract wgmma_gemm_base(const std::string& tag, int cluster, hgemm_sm90::Epilogue epilogue,
                                                const std::string& type, const std::string& hgmma_suffix) {
  const bool tma_store = epilogue == hgemm_sm90::Epilogue::kTmaStore;
  const std::size_t smem = tma_store ? hgemm_sm90::smem_bytes<hgemm_sm90::Epilogue::kTmaStore>()
                                     : hgemm_sm90::smem_bytes<hgemm_sm90::Epilogue::kDirect>();
  contract::KernelContract c =
      contract::kernel(R"(hgemm_wgmma_kernel<gpubench::kernels::hopper::)" + tag + ", " + std::to_string(cluster) +
                       R"(, \(gpubench::kernels::hgemm_sm90::Epilogue\))" + (tma_store ? "0" : "1") + R"(>\()")
          .block(hgemm_sm90::kThreads)
          .registers(168)
          .static_smem(0)
          .dynamic_smem(static_cast<int>(smem))
          .occupancy(0.1875)
          .ptx_count(R"(\bwgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.)" + type + R"(\.)" + type +
                         R"(\b.*, p, 1, 1, 0, 1;)",
                     4);
  return wgmma_epilogue(c, epilogue)
      .ptx({R"(\bsetmaxnreg\.dec\.sync\.aligned\.u32 40;)", R"(\bsetmaxnreg\.inc\.sync\.aligned\.u32 232;)",
            R"(\bwgmma\.fence\.sync\.aligned\b)", R"(\bwgmma\.commit_group\.sync\.aligned\b)",
            R"(\bwgmma\.wait_group\.sync\.aligned 1;)", R"(\bwgmma\.wait_group\.sync\.aligned 0;)",
            R"(\bmbarrier\.try_wait\.parity\.shared::cta\.b64\b)",
            R"(\bmbarrier\.arrive\.expect_tx\.shared::cta\.b64\b)", R"(\bfence\.mbarrier_init\.release\.cluster\b)"})
      .no_ptx({R"(\bmma\.sync\b)", R"(\bldmatrix\b)", R"(\bcp\.async\.(ca|cg)\b)", R"(\bwmma\.)"})
      .sass({R"(\bHGMMA\.64x256x16\.F32)" + hgmma_suffix + R"(.*gdesc\[UR[0-9]+\]\.tnspB)", R"(\bUTMALDG\.2D\b)",
             R"(\bSYNCS\.PHASECHK\.TRANS64\.TRYWAIT\b)", R"(\bSYNCS\.ARRIVE\.TRANS64\b)",
             R"(\bUSETMAXREG\.TRY_ALLOC\b)", R"(\bUSETMAXREG\.DEALLOC\b)", R"(\bWARPGROUP\.DEPBAR\.LE\b)"})
      .no_sass({R"(\bHMMA\b)", R"(\bLDSM\b)", R"(\bLDGSTS\b)"})
      .sass_count(R"(\bWARPGROUP\.ARRIVE\b)", 1)
      .sass_count(R"(\bHGMMA\..*\bgsb0\b)", 1)
      .sass_count(R"(\bWARPGROUP\.DEPBAR\.LE gsb0, 0x1\b)", 1)
      .sass_count(R"(\bWARPGROUP\.DEPBAR\.LE gsb0, 0x0\b)", 1);
}

// The TMA loads, by form: a plain one (completing on this block's barrier) or a multicast one.
constexpr const char* kTmaPlain =
    R"(\bcp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes \[)";
constexpr const char* kTmaMulticast =
    R"(\bcp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes\.multicast::cluster \[)";

/// hgemm_wgmma_kernel<T, 1>: one block per tile, every consumer thread releasing its own block's
/// stages; nothing of clusters.
inline contract::KernelContract wgmma_gemm_single(const std::string& tag, hgemm_sm90::Epilogue epilogue,
                                                  const std::string& type, const std::string& hgmma_suffix) {
  return wgmma_gemm_base(tag, 1, epilogue, type, hgmma_suffix)
      .ptx_count(kTmaPlain, 5)  // A, and B in four boxes
      .ptx_count(kTmaMulticast, 0)
      .ptx({R"(\bmbarrier\.arrive\.shared::cta\.b64\b)", R"(\bbar\.sync\b)"})
      .no_ptx({R"(\bbarrier\.cluster\b)", R"(\bmapa\b)", R"(\bshared::cluster\.b64\b)", R"(%cluster_ctarank)"})
      .no_sass({R"(\bUTMALDG\.2D\.MULTICAST\b)", R"(\bUCGABAR_)"});
}

/// hgemm_wgmma_kernel<T, 2>: 2 x 1 clusters. Per stage one plain TMA load (A) and two multicast
/// ones (its half of B); each consumer warp releases a stage on both blocks' `empty` barriers
/// through mapa and the plain shared::cluster arrive (never the .release.cluster form, whose
/// GPU-scope MEMBAR would sit in the main loop); the cluster barrier after the barriers'
/// initialisation (arrive.relaxed behind fence.mbarrier_init) and before exit (arrive.release),
/// no __syncthreads. In SASS: UTMALDG.2D.MULTICAST, the remote SYNCS.ARRIVE...RED, UCGABAR_ARV and
/// UCGABAR_WAIT (with BAR.SYNC fallbacks ptxas adds for a launch without clusters).
inline contract::KernelContract wgmma_gemm_cluster(const std::string& tag, hgemm_sm90::Epilogue epilogue,
                                                   const std::string& type, const std::string& hgmma_suffix) {
  return wgmma_gemm_base(tag, hgemm_sm90::kMaxClusterM, epilogue, type, hgmma_suffix)
      .ptx_count(kTmaPlain, 1)
      .ptx_count(kTmaMulticast, 2)
      .ptx({R"(\bmapa\.shared::cluster\.u32\b)", R"(\bmbarrier\.arrive\.shared::cluster\.b64 _, \[)",
            R"(\bbarrier\.cluster\.arrive\.relaxed\.aligned;)", R"(\bbarrier\.cluster\.arrive\.release\.aligned;)",
            R"(\bbarrier\.cluster\.wait\.acquire\.aligned;)", R"(%cluster_ctarank)", R"(%clusterid\.x)",
            R"(%nclusterid\.x)"})
      .no_ptx({R"(\bmbarrier\.arrive\.release\.cluster\b)", R"(\bbar\.sync\b)"})
      .sass({R"(\bUTMALDG\.2D\.MULTICAST\b)", R"(\bSYNCS\.ARRIVE\.TRANS64\.RED\.A1T0\b)", R"(\bUCGABAR_ARV\b)",
             R"(\bUCGABAR_WAIT\b)"});
}
}  // namespace detail

/// Contracts of every kernel in gemm_sm90.cu. SASS names the FP16 HGMMA without a type suffix
/// and the BF16 one with .BF16.
inline const contract::FileContract kGemmSm90Contract = {
    detail::wgmma_gemm_single("F16", hgemm_sm90::Epilogue::kTmaStore, "f16", R"(\s)"),
    detail::wgmma_gemm_single("BF16", hgemm_sm90::Epilogue::kTmaStore, "bf16", R"(\.BF16\b)"),
    detail::wgmma_gemm_cluster("F16", hgemm_sm90::Epilogue::kTmaStore, "f16", R"(\s)"),
    detail::wgmma_gemm_cluster("BF16", hgemm_sm90::Epilogue::kTmaStore, "bf16", R"(\.BF16\b)"),
    detail::wgmma_gemm_single("F16", hgemm_sm90::Epilogue::kDirect, "f16", R"(\s)"),
    detail::wgmma_gemm_single("BF16", hgemm_sm90::Epilogue::kDirect, "bf16", R"(\.BF16\b)"),
    detail::wgmma_gemm_cluster("F16", hgemm_sm90::Epilogue::kDirect, "f16", R"(\s)"),
    detail::wgmma_gemm_cluster("BF16", hgemm_sm90::Epilogue::kDirect, "bf16", R"(\.BF16\b)"),
};

}  // namespace gpubench::kernels
