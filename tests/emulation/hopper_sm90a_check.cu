// Compile check of the Hopper wrappers (kernels/wgmma.cuh, kernels/tma.cuh): nvcc must accept
// their inline PTX for sm_90a and keep the instructions. Built by hand or by CI with nvcc, never
// launched (the machines that build gpubench have no GPU):
//   nvcc -std=c++17 -I. -gencode=arch=compute_90a,code=[sm_90a,compute_90a] -Werror all-warnings
//        -c tests/emulation/hopper_sm90a_check.cu
#include <cstdint>

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
