// Compile check of the Hopper wrappers (kernels/wgmma.cuh, kernels/tma.cuh): nvcc must accept
// their inline PTX for sm_90a and keep the instructions. Built by hand or by CI with nvcc, never
// launched (the machines that build gpubench have no GPU):
//   nvcc -std=c++17 -I. -gencode=arch=compute_90a,code=[sm_90a,compute_90a] -Werror all-warnings
//        -c tests/emulation/hopper_sm90a_check.cu
#include <cstdint>

#include "kernels/cluster.cuh"
#include "kernels/tma.cuh"
#include "kernels/wgmma.cuh"

namespace hopper = gpubench::kernels::hopper;

template <int N, class T>
__global__ void wgmma_tma_check(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                                float* out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  auto* bar = reinterpret_cast<std::uint64_t*>(smem + 64 * 64 * 2 + N * 64 * 2);
  if (threadIdx.x == 0) {
    hopper::mbarrier_init(bar, 1);
    hopper::fence_proxy_async_shared();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    hopper::mbarrier_arrive_expect_tx(bar, 64 * 64 * 2 + N * 64 * 2);
    hopper::tma_load_2d(smem, &map_a, 0, 64 * blockIdx.x, bar);
    hopper::tma_load_2d(smem + 64 * 64 * 2, &map_b, 0, 0, bar);
  }
  while (!hopper::mbarrier_try_wait_parity(bar, 0)) {
  }
  float d[N / 2] = {};
  hopper::wgmma_fence();
  for (int k = 0; k < 4; ++k) {
    const std::uint64_t da = hopper::make_smem_desc(smem + 32 * k, 16, 1024, hopper::Swizzle::k128B);
    const std::uint64_t db = hopper::make_smem_desc(smem + 64 * 64 * 2 + 32 * k, 16, 1024, hopper::Swizzle::k128B);
    hopper::wgmma_m64k16_ss<N, T>(d, da, db, k > 0 ? 1 : 0);
  }
  hopper::wgmma_commit_group();
  hopper::wgmma_wait_group<0>();
  for (int i = 0; i < N / 2; ++i) out[threadIdx.x * (N / 2) + i] = d[i];
}

// The cluster wrappers (kernels/cluster.cuh) and the cluster forms of the TMA load and the
// mbarrier arrive (kernels/tma.cuh): a 2 x 1 cluster in which each block multicasts one box to
// both and arrives on both blocks' barriers.
__global__ void __cluster_dims__(2, 1, 1) cluster_check(const __grid_constant__ CUtensorMap map, float* out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  auto* bar = reinterpret_cast<std::uint64_t*>(smem + 2 * 64 * 64 * 2);
  std::uint64_t* done = bar + 1;
  const unsigned rank = hopper::cluster_ctarank();
  if (threadIdx.x == 0) {
    hopper::mbarrier_init(bar, 1);
    hopper::mbarrier_init(done, 2);
    hopper::fence_mbarrier_init();
  }
  hopper::cluster_arrive_relaxed();
  hopper::cluster_wait();
  if (threadIdx.x == 0) {
    hopper::mbarrier_arrive_expect_tx(bar, 2 * 64 * 64 * 2);
    hopper::tma_load_2d_multicast(smem + rank * 64 * 64 * 2, &map, 0, 64 * static_cast<int>(rank), bar, 3);
  }
  while (!hopper::mbarrier_try_wait_parity(bar, 0)) {
  }
  if (threadIdx.x < 2) hopper::mbarrier_arrive_cluster(hopper::map_shared_rank(done, threadIdx.x));
  while (!hopper::mbarrier_try_wait_parity(done, 0)) {
  }
  out[(hopper::cluster_id_x() * 2 + rank) * blockDim.x + threadIdx.x] =
      static_cast<float>(smem[threadIdx.x]) + static_cast<float>(hopper::cluster_count_x());
  hopper::cluster_sync();
}

template __global__ void wgmma_tma_check<64, hopper::F16>(const __grid_constant__ CUtensorMap,
                                                          const __grid_constant__ CUtensorMap, float*);
template __global__ void wgmma_tma_check<128, hopper::F16>(const __grid_constant__ CUtensorMap,
                                                           const __grid_constant__ CUtensorMap, float*);
template __global__ void wgmma_tma_check<256, hopper::F16>(const __grid_constant__ CUtensorMap,
                                                           const __grid_constant__ CUtensorMap, float*);
template __global__ void wgmma_tma_check<64, hopper::BF16>(const __grid_constant__ CUtensorMap,
                                                           const __grid_constant__ CUtensorMap, float*);
template __global__ void wgmma_tma_check<128, hopper::BF16>(const __grid_constant__ CUtensorMap,
                                                            const __grid_constant__ CUtensorMap, float*);
template __global__ void wgmma_tma_check<256, hopper::BF16>(const __grid_constant__ CUtensorMap,
                                                            const __grid_constant__ CUtensorMap, float*);
