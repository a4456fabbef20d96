// The Hopper probe's kernels (sm_90a): each runs one building block of the wgmma GEMM
// (families/gemm/hgemm_sm90.cuh) alone, so that a GPU says which of them the emulation
// (kernels/wgmma.cuh, kernels/tma.cuh) reads differently from the hardware:
//  - tma_box_kernel     one TMA load of a 128B-swizzled box, its shared memory copied out as it
//                       landed (the swizzle the emulation applies is judged on the host)
//  - tma_store_probe_kernel  the GEMM epilogue's box: slot j of a 128B-swizzled FP32 box holds j,
//                       one TMA store writes it to a tensor (the host judges where each landed)
//  - multicast_kernel   a 2 x 1 cluster in which each block multicasts one box into both and
//                       arrives on both blocks' barriers (the pair kernel's B and its releases)
//  - wgmma_probe_kernel A (64 x 64, K-major) and B (64 x 256, MN-major) loaded as the GEMM loads
//                       one stage, then 4 x wgmma.m64n256k16 from descriptors given at run time,
//                       every thread's raw accumulator fragment written out
// Every wait gives up after kGiveUpNs on a GPU and reports it in `status`, so a load or an arrive
// that never completes is a line in the log, not a hang. Under the host emulation the waits are
// plain polls: one that nothing can complete is reported there as a deadlock.
// Launchers: families/gemm/hopper_probe.cu; what the outputs should hold: hopper_probe_judge.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "families/gemm/hopper_probe_shapes.h"  // Descriptors, the shapes
#include "kernels/cluster.cuh"
#include "kernels/simt/simt.h"  // GPUBENCH_DYNAMIC_SHARED under nvcc
#include "kernels/tma.cuh"
#include "kernels/wgmma.cuh"

namespace gpubench::kernels::hopper_probe {

namespace hopper = ::gpubench::kernels::hopper;
namespace probe = ::gpubench::kernels::probe;

using probe::Descriptors;                                     ///< the descriptor fields under test, in bytes
using probe::kFragment;                                       ///< accumulator floats per thread
using probe::kMmaN;                                           ///< N of the probe's wgmma
using probe::kThreads;                                        ///< one warpgroup
constexpr std::uint32_t kBoxBytes = probe::kBoxElements * 2;  ///< 64 rows of 128 bytes (one swizzle span)
constexpr std::uint32_t kABytes = kBoxBytes;                  ///< A: 64 rows (m) x 64 k
constexpr std::uint32_t kBBytes = 4 * kBoxBytes;              ///< B: 64 k x 256 n in four 64-column boxes
constexpr std::uint32_t kAtomBytes = 1024;                    ///< the 128B swizzle's repeat
using probe::kSmemBytes;                                      ///< dynamic shared memory of every probe kernel
static_assert(kSmemBytes == kABytes + kBBytes + 3 * sizeof(std::uint64_t) + kAtomBytes,
              "the operands, two mbarriers and a flag, aligned to the swizzle atom");
constexpr std::uint64_t kGiveUpNs = 200'000'000;  ///< a wait longer than this has failed (GPU)

/// What a probe block reports (the host poisons it first: a block that never ran leaves -1).
enum Status : int { kOk = 0, kLoadTimeout = 1, kArriveTimeout = 2 };

/// Waits for phase `parity` of `bar`; false when kGiveUpNs passed first (GPU only).
__device__ __forceinline__ bool wait_or_give_up(std::uint64_t* bar, unsigned parity) {
#if defined(__CUDACC__)
  std::uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (!hopper::mbarrier_try_wait_parity(bar, parity)) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > kGiveUpNs) return false;
  }
  return true;
#else
  while (!hopper::mbarrier_try_wait_parity(bar, parity)) {
  }
  return true;
#endif
}

/// The start of dynamic shared memory rounded up to the swizzle atom (the TMA swizzles and wgmma
/// unswizzles by address bits, so a tile must start on one).
__device__ __forceinline__ unsigned char* atom_aligned(unsigned char* raw) {
  const std::uint32_t misalign = hopper::shared_address(raw) % kAtomBytes;
  return raw + (misalign == 0 ? 0 : kAtomBytes - misalign);
}

/// Every thread waits for `bar`'s phase 0; true in every thread when all of them saw it complete
/// (a block-uniform answer, so the warpgroup stays converged for wgmma).
__device__ __forceinline__ bool block_waited(std::uint64_t* bar, volatile int* gave_up) {
  if (!wait_or_give_up(bar, 0)) *gave_up = 1;
  __syncthreads();
  return *gave_up == 0;
}

/// A one-block probe's set-up: thread 0 clears the give-up flag and initialises `bar` for the one
/// arrival of the thread that issues the loads (fenced for the TMA), then the block syncs.
__device__ __forceinline__ void init_load_barrier(std::uint64_t* bar, volatile int* gave_up) {
  if (threadIdx.x == 0) {
    *gave_up = 0;
    hopper::mbarrier_init(bar, 1);
    hopper::fence_mbarrier_init();
  }
  __syncthreads();
}

/// One TMA load of the box at (0, 0) of `map` (box_bytes long), copied out of shared memory as
/// it landed. One block of kThreads threads, kSmemBytes of dynamic shared memory.
__global__ void __launch_bounds__(kThreads) tma_box_kernel(const __grid_constant__ hopper::TmaMap map,
                                                           std::uint32_t box_bytes, std::uint16_t* out, int* status) {
  GPUBENCH_DYNAMIC_SHARED(unsigned char, smem_raw);
  unsigned char* box = atom_aligned(smem_raw);
  auto* bar = reinterpret_cast<std::uint64_t*>(box + kABytes + kBBytes);
  auto* gave_up = reinterpret_cast<volatile int*>(bar + 2);
  init_load_barrier(bar, gave_up);
  if (threadIdx.x == 0) {
    hopper::mbarrier_arrive_expect_tx(bar, box_bytes);
    hopper::tma_load_2d(box, &map, 0, 0, bar);
  }
  if (!block_waited(bar, gave_up)) {
    if (threadIdx.x == 0) *status = kLoadTimeout;
    return;
  }
  const auto* landed = reinterpret_cast<const std::uint16_t*>(box);
  for (std::uint32_t i = threadIdx.x; i < box_bytes / 2; i += kThreads) out[i] = landed[i];
  if (threadIdx.x == 0) *status = kOk;
}

/// The GEMM epilogue's store alone: the block writes slot j of a 16 x 32 FP32 box (the value j),
/// fences the writes for the TMA, and one thread stores the box at (x, y) of `map` and waits for
/// it. One block of kThreads threads, kSmemBytes of dynamic shared memory.
__global__ void __launch_bounds__(kThreads)
    tma_store_probe_kernel(const __grid_constant__ hopper::TmaMap map, int x, int y, int* status) {
  GPUBENCH_DYNAMIC_SHARED(unsigned char, smem_raw);
  unsigned char* box = atom_aligned(smem_raw);
  auto* slots = reinterpret_cast<float*>(box);
  for (int j = static_cast<int>(threadIdx.x); j < probe::kStoreBoxFloats; j += kThreads)
    slots[j] = static_cast<float>(j);
  hopper::fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    hopper::tma_store_2d(&map, box, x, y);
    hopper::bulk_commit_group();
    hopper::bulk_wait_group<0>();
    *status = kOk;
  }
}

/// A 2 x 1 cluster: the block of rank r multicasts rows 64r..64r+63 of `map` (boxes of 64 x 64)
/// into slot r of both blocks, completing on each block's `full` barrier (which expects both
/// boxes); then threads 0 and 1 arrive on the `done` barrier of rank 0 and 1 (a remote arrive, as
/// the pair kernel's consumers release a stage), whatever their own load did, so that each block's
/// status is its own: a block whose load never landed says so, and its peer's `done` still
/// completes. Each block copies out both slots, its own box and the peer's:
/// out[rank * 2 * 4096 + slot * 4096 + i], and its status: status[rank].
__global__ void __launch_bounds__(kThreads)
    multicast_kernel(const __grid_constant__ hopper::TmaMap map, std::uint16_t* out, int* status) {
  GPUBENCH_DYNAMIC_SHARED(unsigned char, smem_raw);
  unsigned char* slots = atom_aligned(smem_raw);
  auto* full = reinterpret_cast<std::uint64_t*>(slots + kABytes + kBBytes);
  std::uint64_t* done = full + 1;
  auto* gave_up = reinterpret_cast<volatile int*>(full + 2);  // [0]: the load, [1]: the arrivals
  const unsigned rank = hopper::cluster_ctarank();
  if (threadIdx.x == 0) {
    gave_up[0] = 0;
    gave_up[1] = 0;
    hopper::mbarrier_init(full, 1);
    hopper::mbarrier_init(done, 2);
    hopper::fence_mbarrier_init();
  }
  // Both blocks' barriers exist before either multicasts into the other or arrives on it.
  hopper::cluster_arrive_relaxed();
  hopper::cluster_wait();
  if (threadIdx.x == 0) {
    hopper::mbarrier_arrive_expect_tx(full, 2 * kBoxBytes);
    hopper::tma_load_2d_multicast(slots + rank * kBoxBytes, &map, 0, 64 * static_cast<int>(rank), full, 3);
  }
  const bool landed = block_waited(full, gave_up);
  if (threadIdx.x < 2) hopper::mbarrier_arrive_cluster(hopper::map_shared_rank(done, threadIdx.x));
  const bool arrived = block_waited(done, gave_up + 1);
  if (landed) {
    const auto* landed_box = reinterpret_cast<const std::uint16_t*>(slots);
    std::uint16_t* mine = out + rank * 2u * (kBoxBytes / 2u);
    for (std::uint32_t i = threadIdx.x; i < 2u * (kBoxBytes / 2u); i += kThreads) mine[i] = landed_box[i];
  }
  if (threadIdx.x == 0) status[rank] = !landed ? kLoadTimeout : !arrived ? kArriveTimeout : kOk;
  // No block exits while its peer may still multicast into it or arrive on its barriers.
  hopper::cluster_sync();
}

/// A (64 rows x 64 k, K-major: map_a, box 64 x 64) and B (64 k x 256 n, MN-major: map_b, boxes of
/// 64 x 64) loaded as one stage of the GEMM (128B swizzle), then D = A * B by 4 x
/// wgmma.m64n256k16 with descriptors built from `d` (the GEMM's own, or a variant the host tries);
/// out[t * kFragment + i] = accumulator i of thread t. One block of one warpgroup.
template <class T>
__global__ void __launch_bounds__(kThreads)
    wgmma_probe_kernel(const __grid_constant__ hopper::TmaMap map_a, const __grid_constant__ hopper::TmaMap map_b,
                       Descriptors d, float* out, int* status) {
  GPUBENCH_DYNAMIC_SHARED(unsigned char, smem_raw);
  unsigned char* a = atom_aligned(smem_raw);
  unsigned char* b = a + kABytes;
  auto* full = reinterpret_cast<std::uint64_t*>(b + kBBytes);
  auto* gave_up = reinterpret_cast<volatile int*>(full + 2);
  init_load_barrier(full, gave_up);
  if (threadIdx.x == 0) {
    hopper::mbarrier_arrive_expect_tx(full, kABytes + kBBytes);
    hopper::tma_load_2d(a, &map_a, 0, 0, full);
    for (int j = 0; j < 4; ++j) hopper::tma_load_2d(b + j * kBoxBytes, &map_b, 64 * j, 0, full);
  }
  if (!block_waited(full, gave_up)) {
    if (threadIdx.x == 0) *status = kLoadTimeout;
    return;
  }
  float acc[kFragment];  // registers: every index below is a compile-time constant once unrolled
  GPUBENCH_UNROLL
  for (int i = 0; i < kFragment; ++i) acc[i] = 0.0f;
  hopper::wgmma_fence_operands(acc);
  hopper::wgmma_fence();
  GPUBENCH_UNROLL
  for (int kk = 0; kk < 4; ++kk) {
    const std::uint64_t desc_a = hopper::make_smem_desc(a + d.a_k_step * kk, d.a_lbo, d.a_sbo, hopper::Swizzle::k128B);
    const std::uint64_t desc_b = hopper::make_smem_desc(b + d.b_k_step * kk, d.b_lbo, d.b_sbo, hopper::Swizzle::k128B);
    hopper::wgmma_m64k16_ss<kMmaN, T, hopper::Major::kMN>(acc, desc_a, desc_b, 1);
  }
  hopper::wgmma_commit_group();
  hopper::wgmma_wait_group<0>();
  hopper::wgmma_fence_operands(acc);
  GPUBENCH_UNROLL
  for (int i = 0; i < kFragment; ++i) out[threadIdx.x * kFragment + i] = acc[i];
  if (threadIdx.x == 0) *status = kOk;
}

}  // namespace gpubench::kernels::hopper_probe
