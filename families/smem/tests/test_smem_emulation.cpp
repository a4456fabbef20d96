// The shared-memory kernel body (families/smem/smem.cuh) run under the host SIMT emulation at
// odd configurations (one and three blocks, row counts below, at and off the unroll, passes
// below and past one rotation of the pattern) against families/smem/reference.h, with random
// input and a poisoned output that must be overwritten exactly in the first blocks x 256
// words. Also: the reference against a brute-force walk of the pattern, the properties of the
// access pattern itself (every pass reads every vector once, the vectors a thread reads change
// with the pass, every quarter-warp load covers one 128-byte line: no bank conflict), and that
// a skipped pass would be caught.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "families/smem/reference.h"
#include "families/smem/smem.cuh"
#include "families/smem/smem.h"
#include "kernels/simt/simt.h"

namespace {

using gpubench::simt::Dim3;
namespace k = gpubench::kernels;

constexpr std::uint32_t kPoison = 0x7FC00BADu;
constexpr unsigned kThreads = static_cast<unsigned>(k::kSmemBlockThreads);

/// Random words, never zero (a zero word would hide a vector that was skipped).
std::vector<std::uint32_t> random_words(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint32_t> v(n);
  for (auto& w : v) {
    do {
      w = static_cast<std::uint32_t>(rng());
    } while (w == 0);
  }
  return v;
}

/// Input for `blocks` blocks of `bytes_per_block` (std::vector's storage is 16-byte aligned).
std::vector<std::uint32_t> input_for(int blocks, std::size_t bytes_per_block, unsigned seed) {
  return random_words(static_cast<std::size_t>(blocks) * bytes_per_block / 4, seed);
}

/// Runs the kernel as launch_smem_read would; out gets `extra` poisoned words past the result.
std::vector<std::uint32_t> run_kernel(const std::vector<std::uint32_t>& in, int blocks, std::size_t bytes_per_block,
                                      int passes, std::size_t extra = 16) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(blocks) * kThreads + extra, kPoison);
  gpubench::simt::launch_with_smem(Dim3{static_cast<unsigned>(blocks)}, Dim3{kThreads}, bytes_per_block,
                                   k::smem_read_kernel<k::kSmemUnroll>, static_cast<const std::uint32_t*>(in.data()),
                                   out.data(), k::smem_rows(bytes_per_block), passes);
  return out;
}

std::string where(int blocks, std::size_t bytes_per_block, int passes) {
  return std::to_string(blocks) + " blocks, " + std::to_string(bytes_per_block) + " bytes per block, " +
         std::to_string(passes) + " passes";
}

/// Brute force: every (pass, row) of every thread, straight from smem_element.
std::vector<std::uint32_t> brute_force(const std::vector<std::uint32_t>& in, int blocks, std::size_t bytes_per_block,
                                       int passes) {
  const unsigned rows = k::smem_rows(bytes_per_block);
  std::vector<std::uint32_t> out(static_cast<std::size_t>(blocks) * kThreads, 0);
  for (int b = 0; b < blocks; ++b) {
    const std::uint32_t* block_in = in.data() + static_cast<std::size_t>(b) * bytes_per_block / 4;
    for (unsigned t = 0; t < kThreads; ++t) {
      std::uint32_t s = 0;
      for (int p = 0; p < passes; ++p) {
        for (unsigned r = 0; r < rows; ++r) {
          const std::uint32_t* v = block_in + 4 * static_cast<std::size_t>(k::smem_element(t, p, r));
          s += k::smem_fold(v[0], v[1], v[2], v[3]);
        }
      }
      out[static_cast<std::size_t>(b) * kThreads + t] = s;
    }
  }
  return out;
}

// Rows 1..3 (below the unroll: remainder loop only), 4 (one unrolled iteration), 5 and 7 (both
// loops), 8 (the workload's 32 KiB); passes 1, 5, 8 (one rotation) and 11 (past it).
TEST(SmemEmulation, MatchesReferenceAtOddConfigurations) {
  for (int blocks : {1, 3}) {
    for (unsigned rows : {1u, 2u, 3u, 4u, 5u, 7u, 8u}) {
      const std::size_t bytes = rows * k::kSmemRowBytes;
      for (int passes : {1, 5, 8, 11}) {
        SCOPED_TRACE(where(blocks, bytes, passes));
        const auto in = input_for(blocks, bytes, rows * 131u + static_cast<unsigned>(blocks * 7 + passes));
        const auto out = run_kernel(in, blocks, bytes, passes);
        const auto expected = k::smem_reference(in, blocks, bytes, passes);
        ASSERT_EQ(expected.size(), static_cast<std::size_t>(blocks) * kThreads);
        for (std::size_t i = 0; i < out.size(); ++i) {
          ASSERT_EQ(out[i], i < expected.size() ? expected[i] : kPoison) << "out word " << i;
        }
      }
    }
  }
}

// The largest block on an H100 (224 KiB, 56 rows) with five passes.
TEST(SmemEmulation, MatchesReferenceAtTheH100Maximum) {
  const std::size_t bytes = k::smem_max_bytes_per_block(227 * 1024);
  ASSERT_EQ(bytes, 224u * 1024u);
  const auto in = input_for(2, bytes, 99);
  const auto out = run_kernel(in, 2, bytes, 5);
  const auto expected = k::smem_reference(in, 2, bytes, 5);
  for (std::size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(out[i], expected[i]) << "out word " << i;
}

// Each block reads its own slice: block 1 must not see block 0's data (shared memory keeps its
// contents from block to block under the emulation, so a skipped fill would read block 0's).
TEST(SmemEmulation, EveryBlockReadsItsOwnSlice) {
  const std::size_t bytes = 3 * k::kSmemRowBytes;
  auto in = input_for(3, bytes, 5);
  const auto before = run_kernel(in, 3, bytes, 2);
  in[bytes / 4 + 17] += 1;  // one word of block 1
  const auto after = run_kernel(in, 3, bytes, 2);
  for (unsigned t = 0; t < kThreads; ++t) {
    EXPECT_EQ(after[t], before[t]) << "block 0 thread " << t;
    EXPECT_EQ(after[2 * kThreads + t], before[2 * kThreads + t]) << "block 2 thread " << t;
  }
  // Word 17 is in vector 4 = column 4 of row 0: read by the thread whose column it is, 2 passes.
  int changed = 0;
  for (unsigned t = 0; t < kThreads; ++t) changed += after[kThreads + t] != before[kThreads + t] ? 1 : 0;
  EXPECT_EQ(changed, 2) << "threads of block 1 that read the changed vector (once per pass)";
}

// A skipped (or extra) pass is caught: the result of 5 passes differs, in every thread, from the
// reference for 4 and for 6 passes.
TEST(SmemEmulation, EveryPassCounts) {
  const std::size_t bytes = 5 * k::kSmemRowBytes;
  const auto in = input_for(3, bytes, 17);
  const auto out = run_kernel(in, 3, bytes, 5);
  EXPECT_EQ(std::vector<std::uint32_t>(out.begin(), out.begin() + 3 * kThreads), k::smem_reference(in, 3, bytes, 5));
  for (int wrong : {4, 6}) {
    const auto other = k::smem_reference(in, 3, bytes, wrong);
    for (std::size_t i = 0; i < other.size(); ++i) ASSERT_NE(out[i], other[i]) << wrong << " passes, word " << i;
  }
}

// The reference's per-rotation shortcut equals a walk of every (pass, row).
TEST(SmemReference, MatchesBruteForce) {
  for (int passes : {1, 2, 7, 8, 9, 17, 100}) {
    for (unsigned rows : {1u, 3u, 6u}) {
      const std::size_t bytes = rows * k::kSmemRowBytes;
      SCOPED_TRACE(where(2, bytes, passes));
      const auto in = input_for(2, bytes, rows + static_cast<unsigned>(passes));
      EXPECT_EQ(k::smem_reference(in, 2, bytes, passes), brute_force(in, 2, bytes, passes));
    }
  }
}

TEST(SmemReference, RejectsWhatTheLauncherRejects) {
  const auto in = input_for(2, k::kSmemRowBytes, 1);
  EXPECT_THROW(k::smem_reference(in, 0, k::kSmemRowBytes, 1), std::invalid_argument);
  EXPECT_THROW(k::smem_reference(in, 1, k::kSmemRowBytes, 0), std::invalid_argument);
  EXPECT_THROW(k::smem_reference(in, 1, k::kSmemRowBytes + 16, 1), std::invalid_argument);
  EXPECT_THROW(k::smem_reference(in, 1, 0, 1), std::invalid_argument);
  EXPECT_THROW(k::smem_reference(in, 3, k::kSmemRowBytes, 1), std::invalid_argument);  // input too short
  EXPECT_NO_THROW(k::smem_reference(in, 2, k::kSmemRowBytes, 1));
}

TEST(SmemArgs, RowMultiplesOnly) {
  EXPECT_EQ(k::kSmemRowBytes, 4096u);
  EXPECT_TRUE(k::smem_args_ok(4096, 1));
  EXPECT_TRUE(k::smem_args_ok(32 * 1024, 1024));
  EXPECT_FALSE(k::smem_args_ok(0, 1));
  EXPECT_FALSE(k::smem_args_ok(4096 + 16, 1));
  EXPECT_FALSE(k::smem_args_ok(2048, 1));
  EXPECT_FALSE(k::smem_args_ok(4096, 0));
  EXPECT_EQ(k::smem_max_bytes_per_block(227 * 1024), 224u * 1024u);  // H100
  EXPECT_EQ(k::smem_max_bytes_per_block(163 * 1024), 160u * 1024u);  // A100
  EXPECT_EQ(k::smem_max_bytes_per_block(99 * 1024), 96u * 1024u);    // sm_120
  EXPECT_EQ(k::smem_bytes_read(528, 32 * 1024, 1024), 528.0 * 1024 * 32 * 1024);
}

// Every pass reads every vector of the array exactly once (the bytes model: one array per pass).
TEST(SmemPattern, EveryPassReadsEveryVectorOnce) {
  for (unsigned rows : {1u, 5u, 56u}) {
    const unsigned vectors = rows * kThreads;
    for (int p = 0; p < 2 * k::kSmemRotations + 1; ++p) {
      std::vector<int> hits(vectors, 0);
      for (unsigned t = 0; t < kThreads; ++t) {
        for (unsigned r = 0; r < rows; ++r) {
          const unsigned e = k::smem_element(t, p, r);
          ASSERT_LT(e, vectors) << "thread " << t << ", pass " << p << ", row " << r;
          ++hits[e];
        }
      }
      for (unsigned e = 0; e < vectors; ++e) ASSERT_EQ(hits[e], 1) << "vector " << e << ", pass " << p;
    }
  }
}

// What a thread reads changes from each pass to the next (nothing the compiler could hoist out
// of the pass loop), and repeats only after kSmemRotations passes.
TEST(SmemPattern, ThreadsReadOtherVectorsEveryPass) {
  for (unsigned t = 0; t < kThreads; ++t) {
    std::set<unsigned> columns;
    for (int p = 0; p < k::kSmemRotations; ++p) {
      EXPECT_NE(k::smem_column(t, p), k::smem_column(t, p + 1)) << "thread " << t << ", pass " << p;
      columns.insert(k::smem_column(t, p));
    }
    EXPECT_EQ(columns.size(), static_cast<std::size_t>(k::kSmemRotations)) << "thread " << t;
    EXPECT_EQ(k::smem_column(t, k::kSmemRotations), k::smem_column(t, 0));
  }
}

// Bank-conflict freedom of every load instruction: for each pass, row and warp, the warp reads
// 32 consecutive 16-byte vectors starting at a multiple of 32, so each quarter-warp (8 lanes,
// one 128-byte wavefront of a 16-byte load) covers 8 distinct consecutive slots of one aligned
// 128-byte line: every one of the 32 banks exactly once.
TEST(SmemPattern, EveryQuarterWarpCoversOne128ByteLine) {
  const unsigned rows = 7;
  for (int p = 0; p < 2 * k::kSmemRotations + 3; ++p) {
    for (unsigned r = 0; r < rows; ++r) {
      for (unsigned warp = 0; warp < kThreads / 32; ++warp) {
        const unsigned first = k::smem_element(warp * 32, p, r);
        EXPECT_EQ(first % 32, 0u) << "warp " << warp << ", pass " << p << ", row " << r;
        for (unsigned quarter = 0; quarter < 4; ++quarter) {
          std::set<unsigned> banks;
          const unsigned base = k::smem_element(warp * 32 + quarter * 8, p, r);
          const std::size_t line = base * k::kSmemVectorBytes / 128;
          for (unsigned lane = 0; lane < 8; ++lane) {
            const unsigned e = k::smem_element(warp * 32 + quarter * 8 + lane, p, r);
            SCOPED_TRACE("warp " + std::to_string(warp) + ", quarter " + std::to_string(quarter) + ", lane " +
                         std::to_string(lane) + ", pass " + std::to_string(p) + ", row " + std::to_string(r));
            EXPECT_EQ(e, base + lane) << "not consecutive";
            EXPECT_EQ(e * k::kSmemVectorBytes / 128, line) << "outside the quarter-warp's 128-byte line";
            for (unsigned word = 0; word < 4; ++word) banks.insert((e * 4 + word) % 32);
          }
          EXPECT_EQ(banks.size(), 32u) << "banks hit by quarter " << quarter << " of warp " << warp;
        }
      }
    }
  }
}

}  // namespace
