// The grid-stride geometry the families' streaming kernels share (kernels/grid.cuh): the
// launchers' grid sizing, and where each thread of a grid starts and how far it steps, under the
// SIMT emulation.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "kernels/grid.cuh"
#include "kernels/simt/simt.h"

namespace {

namespace k = gpubench::kernels;
using gpubench::simt::Dim3;
using gpubench::simt::launch;

TEST(Grid, OnePassCappedAtOneWaveAtLeastOne) {
  // 256 threads x 4 items per thread = 1024 items per block (the device-memory kernels).
  EXPECT_EQ(k::grid_blocks(0, 4, 256, 1056), 1);
  EXPECT_EQ(k::grid_blocks(1, 4, 256, 1056), 1);
  EXPECT_EQ(k::grid_blocks(1024, 4, 256, 1056), 1);
  EXPECT_EQ(k::grid_blocks(1025, 4, 256, 1056), 2);
  EXPECT_EQ(k::grid_blocks(100 * 1024, 4, 256, 1056), 100);
  EXPECT_EQ(k::grid_blocks(std::size_t{1} << 30, 4, 256, 1056), 1056);  // 132 SMs x 8 blocks
  EXPECT_EQ(k::grid_blocks(std::size_t{1} << 30, 8, 256, 0), 1);        // no occupancy: still runs
  // 256 threads x 2 vectors per thread = 512 vectors per block (the memory family's kernels).
  EXPECT_EQ(k::grid_blocks(0, 2, 256, 100), 1);
  EXPECT_EQ(k::grid_blocks(1, 2, 256, 100), 1);
  EXPECT_EQ(k::grid_blocks(512, 2, 256, 100), 1);
  EXPECT_EQ(k::grid_blocks(513, 2, 256, 100), 2);
  EXPECT_EQ(k::grid_blocks(512 * 1000, 2, 256, 264), 264);
  EXPECT_EQ(k::grid_blocks(512 * 1000, 2, 256, 0), 1);
}

// Counts, per global index, the threads that start there, and records the step each one sees.
void position_kernel(int* starts, std::size_t* steps) {
  const k::GridPosition g = k::grid_position();
  ++starts[g.thread];  // each index is one thread's: no race
  steps[g.thread] = g.threads;
}

TEST(Grid, EveryThreadStartsAtItsOwnIndexAndStepsOverTheWholeGrid) {
  const unsigned blocks = 3, threads = 64;
  const std::size_t n = std::size_t{blocks} * threads;
  std::vector<int> starts(n, 0);
  std::vector<std::size_t> steps(n, 0);
  launch(Dim3{blocks}, Dim3{threads}, position_kernel, starts.data(), steps.data());
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(starts[i], 1) << i;
    EXPECT_EQ(steps[i], n) << i;
  }
}

}  // namespace
