// Tests of the host SIMT emulation itself (kernels/simt): the kernel-emulation tests and the
// GEMM warp-collective emulations rely on these semantics.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "kernels/simt/simt.h"

namespace {

using gpubench::simt::Dim3;
using gpubench::simt::launch;

// Each thread writes its index to shared memory, waits, and reads its mirror element: correct
// only if every thread wrote before any read, i.e. the threads really run concurrently.
void reverse_kernel(const int* in, int* out) {
  __shared__ int tile[1024];
  const unsigned t = threadIdx.x;
  const unsigned n = blockDim.x;
  const unsigned base = blockIdx.x * n;
  tile[t] = in[base + t];
  __syncthreads();
  out[base + t] = tile[n - 1 - t];
}

TEST(Simt, SharedMemoryReversalAcrossSyncthreads) {
  for (unsigned block : {1u, 31u, 32u, 33u, 256u, 1024u}) {
    const unsigned blocks = 3;
    std::vector<int> in(blocks * block), out(blocks * block, -1);
    std::iota(in.begin(), in.end(), 100);
    launch(Dim3{blocks}, Dim3{block}, reverse_kernel, in.data(), out.data());
    for (unsigned b = 0; b < blocks; ++b) {
      for (unsigned t = 0; t < block; ++t) {
        ASSERT_EQ(out[b * block + t], in[b * block + block - 1 - t]) << "block " << b << " thread " << t;
      }
    }
  }
}

// Two barrier phases: a sum computed by thread 0 after phase one must be seen by all after
// phase two (a barrier implementation that only works once fails this).
void two_phase_kernel(int* out) {
  __shared__ int values[256];
  __shared__ int total;
  values[threadIdx.x] = static_cast<int>(threadIdx.x) + 1;
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) s += values[i];
    total = s;
  }
  __syncthreads();
  out[threadIdx.x] = total;
  __syncthreads();
  values[threadIdx.x] = 0;
}

TEST(Simt, RepeatedBarriers) {
  std::vector<int> out(200, -1);
  launch(Dim3{1}, Dim3{200}, two_phase_kernel, out.data());
  for (int v : out) ASSERT_EQ(v, 200 * 201 / 2);
}

void exchange_kernel(unsigned* out) {
  const unsigned linear = gpubench::simt::linear_thread_id();
  const std::array<unsigned, 32> all = gpubench::simt::warp_exchange(linear * 10 + 7);
  for (unsigned i = 0; i < 32; ++i) out[linear * 32 + i] = all[i];
}

TEST(Simt, WarpExchangeGivesEveryLaneAllValues) {
  const unsigned block = 70;  // two full warps and a partial one of 6 lanes
  std::vector<unsigned> out(block * 32, 12345);
  launch(Dim3{1}, Dim3{block}, exchange_kernel, out.data());
  for (unsigned t = 0; t < block; ++t) {
    const unsigned warp = t / 32;
    const unsigned lanes = warp == 2 ? 6 : 32;
    for (unsigned i = 0; i < 32; ++i) {
      const unsigned expected = i < lanes ? (warp * 32 + i) * 10 + 7 : 0;  // inactive: zero
      ASSERT_EQ(out[t * 32 + i], expected) << "thread " << t << " slot " << i;
    }
  }
}

// Lanes write a value, exchange, overwrite, exchange again: the second exchange must see the
// new values even though the first lane to resume reaches it before the others read the first.
void double_exchange_kernel(int* out) {
  const unsigned lane = gpubench::simt::lane_id();
  const auto first = gpubench::simt::warp_exchange(static_cast<int>(lane));
  const auto second = gpubench::simt::warp_exchange(static_cast<int>(lane) * -1);
  out[lane] = first[31 - lane] + 1000 * second[(lane + 1) % 32];
}

TEST(Simt, BackToBackExchangesDoNotMix) {
  std::vector<int> out(32, 0);
  launch(Dim3{1}, Dim3{32}, double_exchange_kernel, out.data());
  for (int lane = 0; lane < 32; ++lane) {
    ASSERT_EQ(out[lane], (31 - lane) + 1000 * -((lane + 1) % 32)) << "lane " << lane;
  }
}

void shuffle_kernel(int* out) {
  const int lane = static_cast<int>(gpubench::simt::lane_id());
  const int v = lane * lane;
  int sum = v;
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  out[lane * 5 + 0] = sum;
  out[lane * 5 + 1] = __shfl_sync(0xffffffffu, v, 3);
  out[lane * 5 + 2] = __shfl_sync(0xffffffffu, v, 35, 8);  // src 35 mod 8 = 3 of my 8-lane segment
  out[lane * 5 + 3] = __shfl_down_sync(0xffffffffu, v, 1);
  out[lane * 5 + 4] = static_cast<int>(__ballot_sync(0xffffffffu, lane % 3 == 0));
}

TEST(Simt, Shuffles) {
  std::vector<int> out(32 * 5, -1);
  launch(Dim3{1}, Dim3{32}, shuffle_kernel, out.data());
  int total = 0;
  unsigned ballot = 0;
  for (int i = 0; i < 32; ++i) {
    total += i * i;
    if (i % 3 == 0) ballot |= 1u << i;
  }
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(out[lane * 5 + 0], total) << lane;
    EXPECT_EQ(out[lane * 5 + 1], 9) << lane;
    const int src = (lane & ~7) + 3;
    EXPECT_EQ(out[lane * 5 + 2], src * src) << lane;
    const int down = lane == 31 ? lane : lane + 1;
    EXPECT_EQ(out[lane * 5 + 3], down * down) << lane;
    EXPECT_EQ(static_cast<unsigned>(out[lane * 5 + 4]), ballot) << lane;
  }
}

void index_kernel(unsigned* out) {
  const unsigned bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  out[bx * threads + tx] +=
      1 + (blockIdx.x << 24 | blockIdx.y << 16 | blockIdx.z << 8 | threadIdx.z << 4 | threadIdx.y << 2 | threadIdx.x);
}

TEST(Simt, GridsAndBlocksIn3D) {
  const Dim3 grid{3, 2, 2};
  const Dim3 block{3, 2, 4};
  const unsigned n = 3 * 2 * 2 * 3 * 2 * 4;
  std::vector<unsigned> out(n, 0);
  launch(grid, block, index_kernel, out.data());
  unsigned i = 0;
  for (unsigned bz = 0; bz < 2; ++bz)
    for (unsigned by = 0; by < 2; ++by)
      for (unsigned bx = 0; bx < 3; ++bx)
        for (unsigned tz = 0; tz < 4; ++tz)
          for (unsigned ty = 0; ty < 2; ++ty)
            for (unsigned tx = 0; tx < 3; ++tx) {
              // every thread of every block ran exactly once with the right indices
              ASSERT_EQ(out[i], 1 + (bx << 24 | by << 16 | bz << 8 | tz << 4 | ty << 2 | tx)) << i;
              ++i;
            }
}

void atomic_kernel(unsigned* counter) { atomicAdd(counter, 1u + blockIdx.x); }

TEST(Simt, ManyBlocksRunOneAfterAnother) {
  unsigned counter = 0;
  launch(Dim3{100}, Dim3{64}, atomic_kernel, &counter);
  EXPECT_EQ(counter, 64u * (100u * 101u / 2u));
}

void dynamic_smem_kernel(int* out) {
  GPUBENCH_DYNAMIC_SHARED(int, buffer);
  buffer[threadIdx.x] = static_cast<int>(threadIdx.x) * 3;
  __syncthreads();
  out[threadIdx.x] = buffer[(threadIdx.x + 1) % blockDim.x];
}

TEST(Simt, DynamicSharedMemory) {
  std::vector<int> out(48, -1);
  gpubench::simt::launch_with_smem(Dim3{1}, Dim3{48}, 48 * sizeof(int), dynamic_smem_kernel, out.data());
  for (int t = 0; t < 48; ++t) ASSERT_EQ(out[t], ((t + 1) % 48) * 3);
}

void throwing_kernel() {
  if (threadIdx.x == 5) throw std::runtime_error("kernel failure");
}

TEST(Simt, ExceptionInAKernelReachesTheCaller) {
  EXPECT_THROW(launch(Dim3{2}, Dim3{32}, throwing_kernel), std::runtime_error);
  // the emulation is usable again afterwards
  std::vector<int> out(32, -1);
  launch(Dim3{1}, Dim3{32}, reverse_kernel, std::vector<int>(32, 4).data(), out.data());
  EXPECT_EQ(out[0], 4);
}

void early_return_kernel() {
  if (threadIdx.x == 3) return;  // a bug on a GPU: thread 3 never reaches the barrier
  __syncthreads();
}

void divergent_warp_kernel() {
  if (gpubench::simt::lane_id() < 16) gpubench::simt::syncwarp();
}

void mixed_collectives_kernel() {
  if (gpubench::simt::lane_id() == 0) {
    gpubench::simt::syncwarp();
  } else {
    (void)gpubench::simt::warp_exchange(1);
  }
}

TEST(SimtDeathTest, BarrierNotReachedByAllThreadsAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(launch(Dim3{1}, Dim3{64}, early_return_kernel),
               "deadlock in block \\(0,0,0\\).*63 wait at __syncthreads, 1 have returned");
  EXPECT_DEATH(launch(Dim3{1}, Dim3{32}, divergent_warp_kernel), "deadlock.*warp 0: 16 of 32 lanes wait at __syncwarp");
  EXPECT_DEATH(launch(Dim3{1}, Dim3{32}, mixed_collectives_kernel), "reached different warp collectives");
}

TEST(SimtDeathTest, BuiltinsOutsideALaunchAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)threadIdx.x, "outside gpubench::simt::launch");
}

}  // namespace
