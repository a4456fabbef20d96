// The transfer plan the CUDA PCIe workloads follow: which timer, how a batch is chunked behind
// the spin kernel, how many opposite transfers overlap a bidirectional batch.
#include <gtest/gtest.h>

#include <numeric>

#include "families/pcie/transfer_plan.h"

namespace gpubench::pcie {
namespace {

TEST(PciePlan, TimerByMemory) {
  // Page-locked transfers of every size are held behind the spin kernel; pageable copies are
  // synchronous with the host.
  EXPECT_EQ(transfer_timer(false), TransferTimer::spin_held);
  EXPECT_EQ(transfer_timer(true), TransferTimer::host_clock);
}

TEST(PciePlan, ChunksCoverTheBatchWithinTheQueueLimit) {
  for (int ops : {1, 3}) {
    for (int batch : {1, 2, 41, 42, 43, 126, 127, 128, 129, 1000, 4096}) {
      const auto chunks = spin_chunks(batch, ops);
      EXPECT_EQ(std::accumulate(chunks.begin(), chunks.end(), 0), batch) << batch << " x" << ops;
      for (int n : chunks) {
        EXPECT_GE(n, 1);
        // Every queued operation of a chunk, the trailing opposite transfer included.
        const int queued = n + (ops == 3 ? counter_transfers(n) : 0);
        EXPECT_LE(queued, kMaxHeldOps) << batch << " x" << ops;
      }
    }
  }
  EXPECT_EQ(spin_chunks(300, 1), (std::vector<int>{127, 127, 46}));
  EXPECT_EQ(spin_chunks(100, 3), (std::vector<int>{42, 42, 16}));
  EXPECT_TRUE(spin_chunks(0, 1).empty());
}

TEST(PciePlan, OppositeDirectionOutlastsTheMeasuredOne) {
  EXPECT_EQ(counter_transfers(1), 3);
  EXPECT_EQ(counter_transfers(42), 85);
  for (int n : {1, 7, 4096}) EXPECT_GT(counter_transfers(n), 2 * n);
}

}  // namespace
}  // namespace gpubench::pcie
