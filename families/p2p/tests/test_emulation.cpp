// The peer-to-peer SM copy kernel body (families/p2p/p2p.cuh) under the host SIMT shim: every
// byte copied at odd sizes and tails, with grids smaller than the data (grid-stride loop), and
// nothing written past the end; plus the grid sizing rule. (On the host both buffers are host
// memory: what is tested is the kernel's indexing, which is the same whichever GPU owns them.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "families/p2p/p2p.cuh"

namespace gpubench::kernels::p2p {
namespace {

using simt::Dim3;

/// Copies `bytes` with `blocks` blocks and checks the copy and a guard zone after it.
void copy_and_check(std::size_t bytes, int blocks) {
  const std::size_t guard = 64;
  std::vector<uint4> src((bytes + guard) / 16 + 1), dst(src.size());
  auto* s = reinterpret_cast<unsigned char*>(src.data());
  auto* d = reinterpret_cast<unsigned char*>(dst.data());
  for (std::size_t i = 0; i < src.size() * 16; ++i) s[i] = static_cast<unsigned char>(i * 151 + 3);
  std::memset(d, 0xA5, dst.size() * 16);
  simt::launch(Dim3{static_cast<unsigned>(blocks)}, Dim3{static_cast<unsigned>(kBlockThreads)}, p2p_copy_kernel,
               static_cast<const uint4*>(src.data()), dst.data(), bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    ASSERT_EQ(d[i], s[i]) << "byte " << i << " of " << bytes << " with " << blocks << " blocks";
  }
  for (std::size_t i = bytes; i < dst.size() * 16; ++i) {
    ASSERT_EQ(d[i], 0xA5) << "byte " << i << " written past the end of " << bytes;
  }
}

TEST(P2pCopyEmulated, OddSizesAndTails) {
  for (std::size_t bytes :
       {std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{17}, std::size_t{4096 + 7}, kTileBytes - 16,
        kTileBytes - 1, kTileBytes, kTileBytes + 3, 3 * kTileBytes + 16 * 33 + 5}) {
    copy_and_check(bytes, copy_blocks(bytes, 132));
  }
}

TEST(P2pCopyEmulated, GridStrideWithFewerBlocksThanTiles) {
  copy_and_check(3 * kTileBytes + 16 * 5 + 9, 1);  // one block walks four tiles, the last partial
  copy_and_check(5 * kTileBytes + 1, 2);
  copy_and_check(7 * kTileBytes + 16 * 255 + 15, 3);  // a partial last tile with a byte tail
}

TEST(P2pCopyEmulated, ZeroBytesWritesNothing) { copy_and_check(0, 1); }

TEST(P2pCopyBlocks, FillsTheSmsButNeverExceedsTheTiles) {
  EXPECT_EQ(kTileBytes, std::size_t{16384});
  EXPECT_EQ(copy_blocks(0, 132), 1);
  EXPECT_EQ(copy_blocks(1, 132), 1);
  EXPECT_EQ(copy_blocks(kTileBytes, 132), 1);
  EXPECT_EQ(copy_blocks(kTileBytes + 1, 132), 2);
  EXPECT_EQ(copy_blocks(std::size_t{256} << 20, 132), 132 * kBlocksPerSm);
  EXPECT_EQ(copy_blocks(std::size_t{16} << 20, 108), 108 * kBlocksPerSm);
  EXPECT_EQ(copy_blocks(std::size_t{1} << 30, 0), kBlocksPerSm);  // unknown SM count
}

}  // namespace
}  // namespace gpubench::kernels::p2p
