// Host reference of the shared-memory kernel (families/smem/smem.cuh): the exact out[] of
// launch_smem_read for given input words, for the emulation tests and for the CUDA workload's
// verify step. Header-only, plain C++.
//
// Cost: O(blocks x (bytes_per_block / 16 + 256 x 8)), independent of `passes`. Thread t of a
// block reads column smem_column(t, p) of every row in pass p, and that column depends only on
// p mod kSmemRotations (8), so the result is, per rotation class q, (number of passes p with
// p mod 8 == q) x (the column's sum over rows), all wrapping mod 2^32 (exact, as on the device).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "families/smem/smem.h"

namespace gpubench::kernels {

/// The out[] of launch_smem_read(in, out, blocks, bytes_per_block, passes): blocks x
/// kSmemBlockThreads words, out[b x 256 + t] for thread t of block b. `in` holds `in_words`
/// words, at least blocks x bytes_per_block / 4. Throws std::invalid_argument for arguments the
/// launcher would reject (blocks < 1, !smem_args_ok) or an input too short.
inline std::vector<std::uint32_t> smem_reference(const std::uint32_t* in, std::size_t in_words, int blocks,
                                                 std::size_t bytes_per_block, int passes) {
  if (in == nullptr || blocks < 1 || !smem_args_ok(bytes_per_block, passes)) {
    throw std::invalid_argument(
        "smem_reference: blocks >= 1, bytes_per_block a positive multiple of 4096, passes >= 1");
  }
  const std::size_t words_per_block = bytes_per_block / 4;
  if (in_words / words_per_block < static_cast<std::size_t>(blocks)) {
    throw std::invalid_argument("smem_reference: input shorter than blocks x bytes_per_block");
  }
  const unsigned rows = smem_rows(bytes_per_block);
  const std::size_t threads = static_cast<std::size_t>(kSmemBlockThreads);
  // Passes in each rotation class q (passes p with p mod kSmemRotations == q).
  std::uint32_t class_passes[kSmemRotations];
  for (int q = 0; q < kSmemRotations; ++q) {
    class_passes[q] = static_cast<std::uint32_t>(passes / kSmemRotations + (q < passes % kSmemRotations ? 1 : 0));
  }
  std::vector<std::uint32_t> out(static_cast<std::size_t>(blocks) * threads);
  std::vector<std::uint32_t> column_sum(threads);
  for (std::size_t b = 0; b < static_cast<std::size_t>(blocks); ++b) {
    const std::uint32_t* block_in = in + b * words_per_block;
    for (unsigned c = 0; c < threads; ++c) {
      std::uint32_t s = 0;
      for (unsigned r = 0; r < rows; ++r) {
        const std::uint32_t* v = block_in + 4 * (static_cast<std::size_t>(r) * threads + c);
        s += smem_fold(v[0], v[1], v[2], v[3]);
      }
      column_sum[c] = s;
    }
    for (unsigned t = 0; t < threads; ++t) {
      std::uint32_t s = 0;
      for (int q = 0; q < kSmemRotations; ++q) s += class_passes[q] * column_sum[smem_column(t, q)];
      out[b * threads + t] = s;
    }
  }
  return out;
}

/// smem_reference over a whole input vector.
inline std::vector<std::uint32_t> smem_reference(const std::vector<std::uint32_t>& in, int blocks,
                                                 std::size_t bytes_per_block, int passes) {
  return smem_reference(in.data(), in.size(), blocks, bytes_per_block, passes);
}

}  // namespace gpubench::kernels
