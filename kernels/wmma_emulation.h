// The subset of nvcuda::wmma the WMMA baseline uses (families/gemm/hgemm.cuh), for the host
// SIMT emulation. Under nvcc this header is not included: <mma.h> is the real thing.
//
// The hardware's fragment layout is unspecified (the PTX ISA leaves wmma fragments opaque), and
// a kernel written against the API never depends on it: it only loads, multiplies, accumulates
// and stores whole fragments. So the emulation picks its own, documented layout - lane l of the
// warp holds elements 8l .. 8l+7 of the 16 x 16 tile in row-major order - and implements the
// operations exactly: loads and stores per lane at the addresses the API defines, mma_sync as a
// warp collective (simt::warp_exchange) with products of the exact FP16 inputs accumulated in
// FP32. A kernel that passes the wrong pointer, leading dimension or tile to any call computes
// the wrong product here as it would on a GPU.
#pragma once

#if !defined(__CUDACC__)

#include <array>
#include <cstdint>

#include "kernels/half_bits.h"
#include "kernels/simt/simt.h"

/// binary16 storage, as the kernel copies and loads it (no arithmetic on the host side).
struct __half {
  std::uint16_t bits;
};

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

/// A 16 x 16 tile: lane l holds elements 8l .. 8l+7 (row-major within the tile).
template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && K == 16, "the emulation has the m16n16k16 shape only");
  static constexpr int num_elements = 8;
  T x[8];
};

namespace detail {
inline unsigned element(int e) { return 8u * ::gpubench::simt::lane_id() + static_cast<unsigned>(e); }
inline float value(__half h) { return ::gpubench::kernels::half_bits_to_float(h.bits); }
inline float value(float f) { return f; }
}  // namespace detail

template <class Use, class T, class Layout>
void load_matrix_sync(fragment<Use, 16, 16, 16, T, Layout>& f, const T* p, unsigned ldm) {
  for (int e = 0; e < 8; ++e) {
    const unsigned i = detail::element(e), r = i / 16, c = i % 16;
    f.x[e] = std::is_same_v<Layout, col_major> ? p[c * ldm + r] : p[r * ldm + c];
  }
}

template <class T>
void fill_fragment(fragment<accumulator, 16, 16, 16, T>& f, T v) {
  for (T& x : f.x) x = v;
}

/// d = a * b + c for the warp's tiles (every lane of the warp calls it).
template <class LA, class LB>
void mma_sync(fragment<accumulator, 16, 16, 16, float>& d, const fragment<matrix_a, 16, 16, 16, __half, LA>& a,
              const fragment<matrix_b, 16, 16, 16, __half, LB>& b, const fragment<accumulator, 16, 16, 16, float>& c) {
  std::array<float, 8> mine_a{}, mine_b{};
  for (int e = 0; e < 8; ++e) {
    mine_a[static_cast<std::size_t>(e)] = detail::value(a.x[e]);
    mine_b[static_cast<std::size_t>(e)] = detail::value(b.x[e]);
  }
  const auto all_a = ::gpubench::simt::warp_exchange(mine_a);  // lane l: elements 8l .. 8l+7
  const auto all_b = ::gpubench::simt::warp_exchange(mine_b);
  const auto at = [](const std::array<std::array<float, 8>, 32>& all, unsigned r, unsigned col) {
    const unsigned i = r * 16 + col;
    return all[i / 8][i % 8];
  };
  for (int e = 0; e < 8; ++e) {
    const unsigned i = detail::element(e), r = i / 16, col = i % 16;
    float s = c.x[e];
    for (unsigned k = 0; k < 16; ++k) s += at(all_a, r, k) * at(all_b, k, col);  // exact products, FP32 sums
    d.x[e] = s;
  }
}

inline void store_matrix_sync(float* p, const fragment<accumulator, 16, 16, 16, float>& f, unsigned ldm,
                              layout_t layout) {
  for (int e = 0; e < 8; ++e) {
    const unsigned i = detail::element(e), r = i / 16, c = i % 16;
    (layout == mem_col_major ? p[c * ldm + r] : p[r * ldm + c]) = f.x[e];
  }
}

}  // namespace nvcuda::wmma

#endif  // !__CUDACC__
