// Tests of the emulated thread-block clusters (kernels/simt, kernels/cluster.cuh, the cluster forms
// in kernels/tma.cuh): the blocks of a cluster co-scheduled, each with its own shared memory; the
// cluster identity registers; mapa to a peer's shared memory; barrier.cluster arrive/wait; the
// remote mbarrier arrive; the multicast TMA load landing in every block of its mask and
// completing on each one's barrier; the slow-peer schedule; and every misuse the emulation turns
// into an abort instead of a wrong answer (deadlocks, a block that exits under its peers, an
// uninitialised barrier, a mask outside the cluster).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cluster.cuh"
#include "kernels/simt/simt.h"
#include "kernels/tma.cuh"

namespace {

namespace hopper = gpubench::kernels::hopper;
using gpubench::simt::Dim3;
using gpubench::simt::launch_cluster_with_smem;

// ---- identity ----

TEST(Cluster, RanksAndClusterIndicesFollowTheBlockIndex) {
  struct Seen {
    unsigned block_x = 99, block_y = 99, rank = 99, cluster_x = 99, clusters_x = 99, blocks = 99;
  };
  // A 6 x 2 grid in 2 x 1 clusters, then a 4 x 4 grid in 2 x 2 clusters.
  for (const auto& [grid, cluster] :
       {std::pair{Dim3{6, 2, 1}, Dim3{2, 1, 1}}, std::pair{Dim3{4, 4, 1}, Dim3{2, 2, 1}}}) {
    std::vector<Seen> seen(grid.x * grid.y);
    Seen* s = seen.data();
    launch_cluster_with_smem(grid, Dim3{64}, cluster, 64, [=] {
      if (threadIdx.x != 7) return;
      Seen& me = s[blockIdx.y * gridDim.x + blockIdx.x];
      me = Seen{blockIdx.x,
                blockIdx.y,
                hopper::cluster_ctarank(),
                hopper::cluster_id_x(),
                hopper::cluster_count_x(),
                gpubench::simt::detail::cluster_blocks()};
    });
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        SCOPED_TRACE(testing::Message() << "block (" << x << ", " << y << ") in clusters of " << cluster.x << " x "
                                        << cluster.y);
        const Seen& me = seen[y * grid.x + x];
        EXPECT_EQ(me.block_x, x);
        EXPECT_EQ(me.block_y, y);
        EXPECT_EQ(me.rank, x % cluster.x + cluster.x * (y % cluster.y));  // x fastest
        EXPECT_EQ(me.cluster_x, x / cluster.x);
        EXPECT_EQ(me.clusters_x, grid.x / cluster.x);
        EXPECT_EQ(me.blocks, cluster.x * cluster.y);
      }
    }
  }
}

TEST(Cluster, APlainLaunchIsOneBlockClusters) {
  std::vector<unsigned> seen(3 * 3, 99);
  unsigned* s = seen.data();
  gpubench::simt::launch_with_smem(Dim3{3}, Dim3{32}, 64, [=] {
    if (threadIdx.x != 0) return;
    s[blockIdx.x * 3 + 0] = hopper::cluster_ctarank();
    s[blockIdx.x * 3 + 1] = hopper::cluster_id_x();
    s[blockIdx.x * 3 + 2] = hopper::cluster_count_x();
  });
  for (unsigned b = 0; b < 3; ++b) {
    EXPECT_EQ(seen[b * 3 + 0], 0u);
    EXPECT_EQ(seen[b * 3 + 1], b);
    EXPECT_EQ(seen[b * 3 + 2], 3u);
  }
}

// ---- shared memory and mapa ----

// Each block fills its shared memory with its rank, passes the cluster barrier and reads its peer's
// through mapa: right only if the blocks run together and each has its own memory.
TEST(Cluster, BlocksRunTogetherEachWithItsOwnSharedMemory) {
  constexpr unsigned kBytes = 4096;
  std::vector<int> bad(4, -1);
  int* b = bad.data();
  launch_cluster_with_smem(Dim3{4}, Dim3{128}, Dim3{2}, kBytes, [=] {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    const unsigned rank = hopper::cluster_ctarank();
    for (unsigned i = threadIdx.x; i < kBytes; i += blockDim.x) smem[i] = static_cast<unsigned char>(0x10 + rank);
    hopper::cluster_sync();
    const unsigned peer = rank ^ 1u;
    int wrong = 0;
    for (unsigned i = threadIdx.x; i < kBytes; i += blockDim.x) {
      const unsigned char* theirs = hopper::cluster_shared_pointer(hopper::map_shared_rank(smem + i, peer));
      wrong += *theirs != 0x10 + peer ? 1 : 0;
      wrong += smem[i] != 0x10 + rank ? 1 : 0;
    }
    hopper::cluster_sync();  // the peer keeps its memory until every read of it is done
    if (wrong != 0 || threadIdx.x == 0) b[blockIdx.x] = wrong;
  });
  for (int w : bad) EXPECT_EQ(w, 0);
}

TEST(Cluster, MapaNamesTheSameOffsetInTheTargetBlock) {
  std::vector<std::uintptr_t> got(8, 0);
  std::uintptr_t* g = got.data();
  launch_cluster_with_smem(Dim3{2}, Dim3{32}, Dim3{2}, 1024, [=] {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    if (threadIdx.x == 0) {
      const unsigned rank = hopper::cluster_ctarank();
      unsigned char* p = smem + 200;
      g[rank * 4 + 0] = reinterpret_cast<std::uintptr_t>(p);
      g[rank * 4 + 1] =
          reinterpret_cast<std::uintptr_t>(hopper::cluster_shared_pointer(hopper::map_shared_rank(p, rank)));
      g[rank * 4 + 2] = reinterpret_cast<std::uintptr_t>(hopper::cluster_shared_pointer(hopper::shared_address(p)));
      g[rank * 4 + 3] =
          reinterpret_cast<std::uintptr_t>(hopper::cluster_shared_pointer(hopper::map_shared_rank(p, rank ^ 1u)));
    }
    hopper::cluster_sync();
  });
  for (unsigned r = 0; r < 2; ++r) {
    EXPECT_EQ(got[r * 4 + 1], got[r * 4 + 0]) << "mapa to its own rank names its own memory";
    EXPECT_EQ(got[r * 4 + 2], got[r * 4 + 0]) << "a shared::cta address is its own block's in the cluster window";
    EXPECT_EQ(got[r * 4 + 3], got[(r ^ 1u) * 4 + 0]) << "mapa to the peer names the peer's memory, same offset";
  }
  EXPECT_NE(got[0], got[4]);
}

// ---- barrier.cluster ----

// Three phases: every thread writes its round number, passes the cluster barrier, and reads what
// every thread of the other block wrote in that round.
TEST(Cluster, TheClusterBarrierOrdersEveryThreadOfEveryBlockPhaseAfterPhase) {
  constexpr unsigned kThreads = 96;
  std::vector<int> slots(2 * kThreads, -1);
  std::vector<int> bad(2, -1);
  int* s = slots.data();
  int* b = bad.data();
  launch_cluster_with_smem(Dim3{2}, Dim3{kThreads}, Dim3{2}, 64, [=] {
    const unsigned rank = hopper::cluster_ctarank();
    int wrong = 0;
    for (int round = 0; round < 3; ++round) {
      s[rank * kThreads + threadIdx.x] = round;
      hopper::cluster_arrive();
      hopper::cluster_wait();
      for (unsigned t = 0; t < kThreads; ++t) wrong += s[(rank ^ 1u) * kThreads + t] != round ? 1 : 0;
      hopper::cluster_sync();  // nobody writes the next round before everyone has read this one
    }
    if (threadIdx.x == 0) b[rank] = 0;
    if (wrong != 0) b[rank] = wrong;
  });
  EXPECT_EQ(bad[0], 0);
  EXPECT_EQ(bad[1], 0);
}

// ---- mbarrier across the cluster ----

TEST(Cluster, RemoteArrivesCompleteAPeersBarrier) {
  std::vector<int> done(2, 0);
  int* d = done.data();
  launch_cluster_with_smem(Dim3{2}, Dim3{64}, Dim3{2}, 64, [=] {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    auto* bar = reinterpret_cast<std::uint64_t*>(smem);
    const unsigned rank = hopper::cluster_ctarank();
    if (threadIdx.x == 0) {
      hopper::mbarrier_init(bar, 4);  // two arrivals from each block
      hopper::fence_mbarrier_init();
    }
    hopper::cluster_arrive_relaxed();
    hopper::cluster_wait();
    if (threadIdx.x == 5 || threadIdx.x == 40) {  // one to each block's barrier
      hopper::mbarrier_arrive_cluster(hopper::map_shared_rank(bar, 0));
      hopper::mbarrier_arrive_cluster(hopper::map_shared_rank(bar, 1));
    }
    while (!hopper::mbarrier_try_wait_parity(bar, 0)) {
    }
    if (threadIdx.x == 0) d[rank] = 1;
    hopper::cluster_sync();
  });
  EXPECT_EQ(done[0], 1);
  EXPECT_EQ(done[1], 1);
}

constexpr int kInner = 40, kOuter = 30;  // a 30 x 40 tensor of 16-bit elements (80-byte rows)

// Block 1 of a cluster of 4 multicasts one box to blocks 0 and 2: it is poison there at once,
// lands in each when that block polls its own barrier (at the box's offset), completing the box's
// bytes on each one's barrier; blocks 1 and 3 (not in the mask) keep their memory.
TEST(Cluster, AMulticastLoadLandsInEveryMaskedBlockAndCompletesEachBarrier) {
  std::vector<std::uint16_t> g(kInner * kOuter);
  for (int y = 0; y < kOuter; ++y) {
    for (int x = 0; x < kInner; ++x) g[y * kInner + x] = static_cast<std::uint16_t>(1 + y * 256 + x);
  }
  const auto map = hopper::make_tensor_map_2d(g.data(), kInner, kOuter, kInner * 2, 16, 8, 2, hopper::Swizzle::kNone);
  constexpr unsigned kBox = 512;  // bytes at offset kBox of each block: 16 x 8 elements, 32-byte rows
  std::vector<std::uint16_t> seen(4 * 16 * 8, 0);
  std::vector<int> poisoned(4, -1);
  std::uint16_t* out = seen.data();
  int* p = poisoned.data();
  const hopper::TensorMap2d* m = &map;
  launch_cluster_with_smem(Dim3{4}, Dim3{32}, Dim3{4}, 2048, [=] {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    auto* bar = reinterpret_cast<std::uint64_t*>(smem);
    const unsigned rank = hopper::cluster_ctarank();
    const bool target = rank == 0 || rank == 2;
    if (threadIdx.x == 0) {
      for (unsigned i = 0; i < 256; ++i) smem[kBox + i] = 0x5A;
      hopper::mbarrier_init(bar, 1);
      hopper::fence_mbarrier_init();
    }
    hopper::cluster_arrive_relaxed();
    hopper::cluster_wait();
    if (threadIdx.x == 0 && target) hopper::mbarrier_arrive_expect_tx(bar, m->box_bytes());
    hopper::cluster_sync();  // the targets expect the bytes before the copy is issued (not required)
    if (threadIdx.x == 0 && rank == 1) {
      hopper::tma_load_2d_multicast(smem + kBox, m, 8, 12, bar, 0b0101);
      int all = 1;
      for (unsigned r : {0u, 2u}) {
        const unsigned char* box = hopper::cluster_shared_pointer(hopper::map_shared_rank(smem + kBox, r));
        for (unsigned i = 0; i < m->box_bytes(); ++i) all = all && box[i] == 0xFF;
      }
      p[1] = all;
    }
    if (target) {
      while (!hopper::mbarrier_try_wait_parity(bar, 0)) {
      }
    }
    if (threadIdx.x == 0) std::memcpy(out + rank * 128, smem + kBox, 256);
    hopper::cluster_sync();
  });
  EXPECT_EQ(poisoned[1], 1) << "the box is poison in every target block once issued";
  for (unsigned r = 0; r < 4; ++r) {
    SCOPED_TRACE(testing::Message() << "block rank " << r);
    for (unsigned row = 0; row < 8; ++row) {
      for (unsigned e = 0; e < 16; ++e) {
        const int gx = 8 + static_cast<int>(e), gy = 12 + static_cast<int>(row);
        const std::uint16_t want = r == 0 || r == 2
                                       ? (gx < kInner && gy < kOuter ? g[gy * kInner + gx] : std::uint16_t{0})
                                       : std::uint16_t{0x5A5A};
        ASSERT_EQ(seen[r * 128 + row * 16 + e], want) << "element (" << row << ", " << e << ")";
      }
    }
  }
  EXPECT_EQ(hopper::tma_outstanding(), 0u);
}

// ---- the slow peer ----

// One block of each cluster gets a turn in the last pass of four: with block-wide barriers as the
// only waits, the fast block is three steps ahead when the slow one makes its first, and which
// one is slow rotates from cluster to cluster.
TEST(Cluster, OneBlockOfEachClusterRunsBehindItsPeer) {
  std::vector<int> order;
  std::vector<int>* o = &order;
  launch_cluster_with_smem(Dim3{4}, Dim3{32}, Dim3{2}, 64, [=] {
    for (int step = 0; step < 4; ++step) {
      if (threadIdx.x == 0) o->push_back(static_cast<int>(blockIdx.x));
      __syncthreads();
    }
  });
  ASSERT_EQ(order.size(), 16u);
  // Cluster 0 (blocks 0, 1): rank 0 is slow; cluster 1 (blocks 2, 3): rank 1 is. In a pass the
  // blocks run in rank order.
  const std::vector<int> first_cluster(order.begin(), order.begin() + 5);
  const std::vector<int> second_cluster(order.begin() + 8, order.begin() + 13);
  EXPECT_EQ(first_cluster, (std::vector<int>{1, 1, 1, 0, 1})) << "block 1 steps three times before block 0 starts";
  EXPECT_EQ(second_cluster, (std::vector<int>{2, 2, 2, 2, 3})) << "block 2 steps four times before block 3 starts";
}

// ---- misuse ----

TEST(ClusterDeathTest, AThreadThatNeverReachesTheClusterBarrierIsADeadlock) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto kernel = [] {
    if (hopper::cluster_ctarank() == 1 && threadIdx.x == 3) return;
    hopper::cluster_sync();
  };
  EXPECT_DEATH(launch_cluster_with_smem(Dim3{2}, Dim3{64}, Dim3{2}, 64, kernel),
               "deadlock in cluster \\(0,0,0\\) of blocks \\(0,0,0\\) \\(1,0,0\\) of a launch with 64 threads per "
               "block: 0 wait at __syncthreads, 127 wait at barrier.cluster, 1 have returned");
}

TEST(ClusterDeathTest, ARemoteArriveThatNeverComesIsADeadlock) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto kernel = [] {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    auto* bar = reinterpret_cast<std::uint64_t*>(smem);
    if (threadIdx.x == 0) hopper::mbarrier_init(bar, 2);
    hopper::cluster_sync();
    // Only block 0 arrives on block 1's barrier; block 1 expects two arrivals.
    if (threadIdx.x == 0 && hopper::cluster_ctarank() == 0) {
      hopper::mbarrier_arrive_cluster(hopper::map_shared_rank(bar, 1));
    }
    if (hopper::cluster_ctarank() == 1) {
      while (!hopper::mbarrier_try_wait_parity(bar, 0)) {
      }
    }
    hopper::cluster_sync();
  };
  EXPECT_DEATH(launch_cluster_with_smem(Dim3{2}, Dim3{32}, Dim3{2}, 64, kernel),
               "deadlock in cluster \\(0,0,0\\) of blocks \\(0,0,0\\) \\(1,0,0\\): 32 threads poll");
}

TEST(ClusterDeathTest, TouchingTheSharedMemoryOfABlockThatExitedAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto kernel = [] {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    auto* bar = reinterpret_cast<std::uint64_t*>(smem);
    if (threadIdx.x == 0) hopper::mbarrier_init(bar, 1);
    // No cluster barrier: block 1 returns at once, and block 0, the slow block of this cluster,
    // arrives on its barrier after that.
    if (hopper::cluster_ctarank() == 0 && threadIdx.x == 0) {
      hopper::mbarrier_arrive_cluster(hopper::map_shared_rank(bar, 1));
    }
  };
  EXPECT_DEATH(launch_cluster_with_smem(Dim3{2}, Dim3{32}, Dim3{2}, 64, kernel),
               "access to the shared memory of a block that has exited");
}

// The two multicast death tests' source: one 64 x 8 box of 16-bit ones, 128-byte swizzled; a
// kernel copies it into the 1 KiB at the start of its shared memory and completes on the barrier
// that follows it (dynamic shared memory of 2048 bytes).
const hopper::TmaMap& one_box_map() {
  static std::vector<std::uint16_t> g(64 * 8, 1);
  static const auto map = hopper::make_tensor_map_2d(g.data(), 64, 8, 128, 64, 8, 2, hopper::Swizzle::k128B);
  return map;
}
std::uint64_t* box_barrier(unsigned char* smem) { return reinterpret_cast<std::uint64_t*>(smem + 1024); }

TEST(ClusterDeathTest, AMulticastBeforeThePeerInitialisedItsBarrierAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto kernel = [] {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    std::uint64_t* bar = box_barrier(smem);
    if (threadIdx.x == 0) hopper::mbarrier_init(bar, 1);
    __syncthreads();  // only block-wide: the peer's barrier may not exist yet
    if (threadIdx.x == 0 && hopper::cluster_ctarank() == 1)
      hopper::tma_load_2d_multicast(smem, &one_box_map(), 0, 0, bar, 3);
  };
  // Rank 0 (the slow block) has not run when rank 1 issues the copy.
  EXPECT_DEATH(launch_cluster_with_smem(Dim3{2}, Dim3{32}, Dim3{2}, 2048, kernel),
               "multicast completing on an mbarrier its block has not initialised yet");
}

TEST(ClusterDeathTest, AMulticastMaskOutsideTheClusterAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto kernel = [] {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    std::uint64_t* bar = box_barrier(smem);
    if (threadIdx.x == 0) hopper::mbarrier_init(bar, 1);
    hopper::cluster_sync();
    if (threadIdx.x == 0) hopper::tma_load_2d_multicast(smem, &one_box_map(), 0, 0, bar, 0b100);
  };
  EXPECT_DEATH(launch_cluster_with_smem(Dim3{2}, Dim3{32}, Dim3{2}, 2048, kernel),
               "multicast cta mask names a rank outside the cluster");
}

TEST(ClusterDeathTest, AnMbarrierUsedBeforeItsInitAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto kernel = [] {
    GPUBENCH_DYNAMIC_SHARED(unsigned char, smem);
    hopper::mbarrier_arrive(reinterpret_cast<std::uint64_t*>(smem));
  };
  EXPECT_DEATH(gpubench::simt::launch_with_smem(Dim3{1}, Dim3{1}, 64, kernel),
               "mbarrier used before mbarrier.init in this block");
}

TEST(ClusterDeathTest, ClusterBarrierMisuseAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(launch_cluster_with_smem(Dim3{2}, Dim3{32}, Dim3{2}, 64, [] { hopper::cluster_wait(); }),
               "waits at barrier.cluster without having arrived");
  EXPECT_DEATH(launch_cluster_with_smem(Dim3{2}, Dim3{32}, Dim3{2}, 64,
                                        [] {
                                          hopper::cluster_arrive();
                                          hopper::cluster_arrive();
                                        }),
               "arrived at barrier.cluster twice without waiting");
  EXPECT_DEATH(launch_cluster_with_smem(Dim3{3}, Dim3{32}, Dim3{2}, 64, [] {}),
               "invalid cluster dimensions \\(2,1,1\\) for grid \\(3,1,1\\)");
}

}  // namespace
