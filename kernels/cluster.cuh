// Hopper (sm_90) thread-block clusters: who a block is in its cluster, the cluster barrier, and
// the addresses of a peer block's shared memory:
//   cluster_ctarank, cluster_id_x, cluster_count_x   %cluster_ctarank, %clusterid.x, %nclusterid.x
//   cluster_arrive, cluster_arrive_relaxed,          barrier.cluster.arrive.release / .relaxed,
//   cluster_wait, cluster_sync                       barrier.cluster.wait.acquire
//   map_shared_rank                                  mapa.shared::cluster: the shared::cluster
//                                                    address of the same location in another block
// Under nvcc each wrapper is inline PTX, compiled for sm_90 and newer (other device targets trap).
// Under the host SIMT shim (kernels/simt/simt.h) the blocks of a cluster run co-scheduled, each
// with its own dynamic shared memory, and these are emulated from the PTX ISA ("Cluster of
// Cooperative Thread Arrays", "barrier.cluster", "mapa", "Special Registers"):
//  - a shared::cluster address is modelled as ((rank + 1) << 24) | offset, the offset being the
//    block-relative shared::cta address; an address below 2^24 is a shared::cta address of the
//    executing block, which the PTX ISA makes valid in the shared::cluster window too. The
//    hardware's encoding is not documented; kernels must only pass these addresses to the
//    shared::cluster operations, never do arithmetic across blocks with them.
//  - cluster_shared_pointer resolves such an address; it aborts when the block it names has
//    exited, so a kernel that lets a block exit while a peer can still arrive on its barriers or
//    copy into its shared memory fails here instead of corrupting a GPU's shared memory.
//  - the cluster barrier is strict (every thread of every block of the cluster arrives, once per
//    phase, before it waits), and a barrier no thread can complete is reported as a deadlock.
#pragma once

#include <cstdint>

#include "kernels/simt/simt.h"
#include "kernels/wgmma.cuh"  // shared_address, shared_pointer

#if !defined(__CUDACC__)
#include <cstdio>
#include <cstdlib>
#endif

namespace gpubench::kernels::hopper {

#if defined(__CUDACC__)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define GPUBENCH_CLUSTER_UNAVAILABLE 1
#endif

/// %cluster_ctarank: the calling block's rank in its cluster (0 .. blocks per cluster - 1).
__device__ __forceinline__ unsigned cluster_ctarank() {
#if defined(GPUBENCH_CLUSTER_UNAVAILABLE)
  __trap();
  return 0;
#else
  unsigned r = 0;
  asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
#endif
}

/// %clusterid.x: the calling block's cluster index along x in the grid.
__device__ __forceinline__ unsigned cluster_id_x() {
#if defined(GPUBENCH_CLUSTER_UNAVAILABLE)
  __trap();
  return 0;
#else
  unsigned r = 0;
  asm("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
  return r;
#endif
}

/// %nclusterid.x: clusters along x in the grid.
__device__ __forceinline__ unsigned cluster_count_x() {
#if defined(GPUBENCH_CLUSTER_UNAVAILABLE)
  __trap();
  return 0;
#else
  unsigned r = 0;
  asm("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
  return r;
#endif
}

/// barrier.cluster.arrive.release: the calling thread arrives on the cluster barrier, its earlier
/// memory operations (mbarrier.init made visible by fence.mbarrier_init included) released to the
/// cluster. All threads of a warp execute it together (.aligned).
__device__ __forceinline__ void cluster_arrive() {
#if defined(GPUBENCH_CLUSTER_UNAVAILABLE)
  __trap();
#else
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
#endif
}

/// barrier.cluster.arrive.relaxed: arrives without releasing anything; what must be visible to
/// the cluster is released by a fence first (fence.mbarrier_init.release.cluster after
/// mbarrier.init, the PTX ISA's pattern). The .release form costs a GPU-scope MEMBAR.
__device__ __forceinline__ void cluster_arrive_relaxed() {
#if defined(GPUBENCH_CLUSTER_UNAVAILABLE)
  __trap();
#else
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
#endif
}

/// barrier.cluster.wait.acquire: waits until every thread of the cluster has arrived.
__device__ __forceinline__ void cluster_wait() {
#if defined(GPUBENCH_CLUSTER_UNAVAILABLE)
  __trap();
#else
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

/// mapa.shared::cluster.u32: the shared::cluster address of the location `p` (in the calling
/// block's shared memory) has in the block of rank `rank` of the cluster.
__device__ __forceinline__ std::uint32_t map_shared_rank(const void* p, unsigned rank) {
#if defined(GPUBENCH_CLUSTER_UNAVAILABLE)
  __trap();
  return 0;
#else
  std::uint32_t out = 0;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(shared_address(p)), "r"(rank));
  return out;
#endif
}

#if defined(GPUBENCH_CLUSTER_UNAVAILABLE)
#undef GPUBENCH_CLUSTER_UNAVAILABLE
#endif

#else  // host SIMT emulation

namespace detail {
[[noreturn]] inline void cluster_abort(const char* what, unsigned rank) {
  std::fprintf(stderr, "cluster emulation: %s (block rank %u)\n", what, rank);
  std::abort();
}
constexpr std::uint32_t kClusterRankShift = 24;  ///< see the file comment: ((rank + 1) << 24) | offset
}  // namespace detail

/// Emulated %cluster_ctarank.
inline unsigned cluster_ctarank() { return gpubench::simt::detail::cluster_rank(); }
/// Emulated %clusterid.x.
inline unsigned cluster_id_x() { return gpubench::simt::detail::cluster_idx().x; }
/// Emulated %nclusterid.x.
inline unsigned cluster_count_x() { return gridDim.x / gpubench::simt::detail::cluster_dim().x; }
/// Emulated barrier.cluster.arrive.release.
inline void cluster_arrive() { gpubench::simt::cluster_arrive(); }
/// Emulated barrier.cluster.arrive.relaxed.
inline void cluster_arrive_relaxed() { gpubench::simt::cluster_arrive(); }
/// Emulated barrier.cluster.wait.acquire.
inline void cluster_wait() { gpubench::simt::cluster_wait(); }

/// Emulated mapa.shared::cluster.u32 (see the file comment for the address model).
inline std::uint32_t map_shared_rank(const void* p, unsigned rank) {
  if (rank >= gpubench::simt::detail::cluster_blocks())
    detail::cluster_abort("mapa to a rank outside the cluster", rank);
  return ((rank + 1u) << detail::kClusterRankShift) | shared_address(p);
}

/// Emulation only: the memory a shared::cluster address names. Aborts for a rank outside the
/// cluster or a block that has exited.
inline unsigned char* cluster_shared_pointer(std::uint32_t addr) {
  const std::uint32_t tag = addr >> detail::kClusterRankShift;
  if (tag == 0) return shared_pointer(addr);  // a shared::cta address of the executing block
  const unsigned rank = tag - 1u;
  if (rank >= gpubench::simt::detail::cluster_blocks()) {
    detail::cluster_abort("shared::cluster address of a rank outside the cluster", rank);
  }
  if (gpubench::simt::detail::cluster_block_exited(rank)) {
    detail::cluster_abort(
        "access to the shared memory of a block that has exited (a block must not exit while its cluster peers can "
        "still arrive on its barriers or copy into its shared memory)",
        rank);
  }
  auto* base = static_cast<unsigned char*>(gpubench::simt::detail::cluster_shared_memory(rank));
  if (base == nullptr) detail::cluster_abort("shared::cluster address in a launch without dynamic shared memory", rank);
  return base + (addr & ((1u << detail::kClusterRankShift) - 1u));
}

#endif

/// barrier.cluster arrive then wait: every thread of the cluster has arrived.
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

}  // namespace gpubench::kernels::hopper
