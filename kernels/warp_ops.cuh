// Tensor-core and asynchronous-copy primitives of the FP16 GEMM, one small wrapper each:
//   mma_m16n8k16      mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 (D = A*B + D, in place)
//   ldmatrix_x4       ldmatrix.sync.aligned.m8n8.x4.shared.b16
//   ldmatrix_x4_trans ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
//   cp_async_16       cp.async.cg.shared.global 16 bytes, zero-filling past `src_bytes`
//   cp_async_commit   cp.async.commit_group
//   cp_async_wait<N>  cp.async.wait_group N
// Under nvcc each is one inline-PTX instruction. Under the host SIMT shim (kernels/simt/simt.h)
// each is emulated warp-collectively on top of simt::warp_exchange, from the fragment layouts the
// PTX ISA documents (sections "Matrix Fragments for mma.m16n8k16 with floating point type" and
// "Warp-level matrix load instruction: ldmatrix"), so a whole mma.sync kernel runs on the CPU.
// The emulation is deliberately strict: it checks alignment, and cp.async poisons its destination
// when issued and writes the data only at the wait that covers it, so a kernel that reads a stage
// before waiting for it, or overwrites a stage other warps still read, fails its emulation test.
#pragma once

#include <cstdint>

#if !defined(__CUDACC__)
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/half_bits.h"
#include "kernels/simt/async_groups.h"
#include "kernels/simt/simt.h"
#endif

namespace gpubench::kernels::warp {

/// Fragment layouts of mma.m16n8k16 (f16 inputs, f32 accumulators), from the PTX ISA. Lane l has
/// group g = l / 4 and thread-in-group t = l % 4. These functions are the single statement of the
/// layouts used by the emulation and by the tests that check the kernels' addressing.
struct MmaLayout {
  /// Row of A element a_i (i in 0..7, two per .f16x2 register, low half first) held by `lane`.
  static constexpr int a_row(int lane, int i) { return (lane >> 2) + (((i >> 1) & 1) ? 8 : 0); }
  /// Column (k) of A element a_i.
  static constexpr int a_col(int lane, int i) { return (lane & 3) * 2 + (i & 1) + (i >= 4 ? 8 : 0); }
  /// Row (k) of B element b_i (i in 0..3).
  static constexpr int b_row(int lane, int i) { return (lane & 3) * 2 + (i & 1) + (i >= 2 ? 8 : 0); }
  /// Column (n) of B element b_i.
  static constexpr int b_col(int lane, int /*i*/) { return lane >> 2; }
  /// Row of accumulator element c_i (i in 0..3).
  static constexpr int c_row(int lane, int i) { return (lane >> 2) + (i >= 2 ? 8 : 0); }
  /// Column of accumulator element c_i.
  static constexpr int c_col(int lane, int i) { return (lane & 3) * 2 + (i & 1); }
};

#if defined(__CUDACC__)

/// acc (16x8 f32) += A (16x16 f16, row) * B (16x8 f16, col), one warp, fragments as in MmaLayout.
__device__ __forceinline__ void mma_m16n8k16(float (&acc)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// Four 8x8 b16 matrices from shared memory: lane 8*i + r gives the 16-byte row r of matrix i;
/// r[i] of lane l receives row l/4, columns 2*(l%4) and 2*(l%4)+1 of matrix i.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* smem_row) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

/// As ldmatrix_x4 but each matrix transposed: r[i] of lane l receives rows 2*(l%4) and
/// 2*(l%4)+1 of column l/4 of matrix i (the B-fragment layout from a row-major K x N tile).
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* smem_row) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

/// Asynchronous 16-byte global -> shared copy that bypasses L1 (.cg); bytes past `src_bytes`
/// (0 or 16 here) are zero-filled, which is how out-of-range tile rows become zeros.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, unsigned src_bytes) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(addr), "l"(gmem_src), "r"(src_bytes) : "memory");
}

/// Closes the group of this thread's cp.async operations issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

/// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

#else  // host SIMT emulation

namespace detail {

[[noreturn]] inline void emulation_abort(const char* what) {
  std::fprintf(stderr, "warp_ops emulation: %s\n", what);
  std::abort();
}

inline void require_aligned16(const void* p, const char* what) {
  if ((reinterpret_cast<std::uintptr_t>(p) & 15u) != 0) emulation_abort(what);
}

struct PendingCopy {
  void* dst;
  const void* src;
  unsigned src_bytes;
};

/// One thread's cp.async groups (kernels/simt/async_groups.h).
inline gpubench::simt::AsyncGroups<PendingCopy>& cp_async_groups() {
  return gpubench::simt::async_groups_of<PendingCopy>(gpubench::simt::detail::resident_thread_slot());
}

/// half_bits_to_float through a table: the emulated mma converts 384 halves per lane per call.
inline float half_to_float_table(std::uint16_t h) {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (std::uint32_t i = 0; i < 65536; ++i) t[i] = half_bits_to_float(static_cast<std::uint16_t>(i));
    return t;
  }();
  return table[h];
}

inline void complete(const PendingCopy& c) {
  unsigned char bytes[16] = {};
  if (c.src_bytes > 0) std::memcpy(bytes, c.src, c.src_bytes);
  std::memcpy(c.dst, bytes, 16);
}

}  // namespace detail

/// Emulated mma.sync m16n8k16: gathers the warp's fragments, rebuilds A, B and C by the
/// documented layouts and returns this lane's part of A*B + C. Products of halves are exact in
/// float; the sum is taken in double and rounded once.
inline void mma_m16n8k16(float (&acc)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  struct Frag {
    std::uint32_t a[4];
    std::uint32_t b[2];
  };
  Frag mine{};
  for (int i = 0; i < 4; ++i) mine.a[i] = a[i];
  for (int i = 0; i < 2; ++i) mine.b[i] = b[i];
  const std::array<Frag, 32> all = gpubench::simt::warp_exchange(mine);
  float am[16][16];
  float bm[16][8];
  for (int l = 0; l < 32; ++l) {
    for (int i = 0; i < 8; ++i) {
      const std::uint16_t h = static_cast<std::uint16_t>(all[l].a[i / 2] >> (16 * (i & 1)));
      am[MmaLayout::a_row(l, i)][MmaLayout::a_col(l, i)] = detail::half_to_float_table(h);
    }
    for (int i = 0; i < 4; ++i) {
      const std::uint16_t h = static_cast<std::uint16_t>(all[l].b[i / 2] >> (16 * (i & 1)));
      bm[MmaLayout::b_row(l, i)][MmaLayout::b_col(l, i)] = detail::half_to_float_table(h);
    }
  }
  const int lane = static_cast<int>(gpubench::simt::lane_id());
  for (int i = 0; i < 4; ++i) {
    const int row = MmaLayout::c_row(lane, i);
    const int col = MmaLayout::c_col(lane, i);
    double sum = acc[i];
    for (int k = 0; k < 16; ++k) sum += static_cast<double>(am[row][k]) * bm[k][col];
    acc[i] = static_cast<float>(sum);
  }
}

namespace detail {
inline void ldmatrix_x4_impl(std::uint32_t (&r)[4], const void* smem_row, bool trans) {
  require_aligned16(smem_row, "ldmatrix row address not 16-byte aligned");
  const std::array<const void*, 32> rows = gpubench::simt::warp_exchange(smem_row);
  const unsigned lane = gpubench::simt::lane_id();
  for (unsigned m = 0; m < 4; ++m) {
    std::uint16_t lo = 0;
    std::uint16_t hi = 0;
    if (!trans) {
      // Row lane/4 of matrix m, elements 2*(lane%4) and +1.
      const auto* row = static_cast<const unsigned char*>(rows[8 * m + lane / 4]);
      std::memcpy(&lo, row + 2 * (2 * (lane % 4)), 2);
      std::memcpy(&hi, row + 2 * (2 * (lane % 4) + 1), 2);
    } else {
      // Column lane/4 of rows 2*(lane%4) and +1 of matrix m.
      const auto* row0 = static_cast<const unsigned char*>(rows[8 * m + 2 * (lane % 4)]);
      const auto* row1 = static_cast<const unsigned char*>(rows[8 * m + 2 * (lane % 4) + 1]);
      std::memcpy(&lo, row0 + 2 * (lane / 4), 2);
      std::memcpy(&hi, row1 + 2 * (lane / 4), 2);
    }
    r[m] = static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 16);
  }
}
}  // namespace detail

/// Emulated ldmatrix.x4 (see the nvcc version for the layout).
inline void ldmatrix_x4(std::uint32_t (&r)[4], const void* smem_row) { detail::ldmatrix_x4_impl(r, smem_row, false); }

/// Emulated ldmatrix.x4.trans.
inline void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* smem_row) {
  detail::ldmatrix_x4_impl(r, smem_row, true);
}

/// Emulated cp.async: the destination is poisoned (all ones: an FP16 NaN pattern) now and
/// written when a cp_async_wait covers its group.
inline void cp_async_16(void* smem_dst, const void* gmem_src, unsigned src_bytes) {
  detail::require_aligned16(smem_dst, "cp.async destination not 16-byte aligned");
  if (src_bytes > 16) detail::emulation_abort("cp.async src_bytes above 16");
  if (src_bytes > 0) detail::require_aligned16(gmem_src, "cp.async source not 16-byte aligned");
  std::memset(smem_dst, 0xFF, 16);
  detail::cp_async_groups().open.push_back({smem_dst, gmem_src, src_bytes});
}

/// Emulated cp.async.commit_group.
inline void cp_async_commit() { detail::cp_async_groups().commit(); }

/// Emulated cp.async.wait_group N: completes this thread's oldest committed groups until at most
/// N remain.
template <int N>
inline void cp_async_wait() {
  detail::cp_async_groups().wait(N, [](const detail::PendingCopy& c) { detail::complete(c); });
}

/// Emulation only: cp.async copies of any thread not yet completed (committed or not). Tests
/// assert 0 after a kernel, and reset() clears the state after a deliberately broken one.
inline std::size_t cp_async_outstanding() { return gpubench::simt::async_outstanding<detail::PendingCopy>(); }

/// Emulation only: forgets every outstanding cp.async.
inline void cp_async_reset() { gpubench::simt::async_reset<detail::PendingCopy>(); }

#endif

}  // namespace gpubench::kernels::warp
