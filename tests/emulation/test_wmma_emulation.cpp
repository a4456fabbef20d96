// The emulated nvcuda::wmma subset (kernels/wmma_emulation.h) against a naive reference: one warp
// loads a 16x16 A and B tile from strided memory (row-major and column-major), multiplies them
// onto an accumulator, and stores it row-major and column-major. Its own layout is never visible;
// what must hold is the API's meaning: D = A * B + C at the addresses given.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/half_bits.h"
#include "kernels/simt/simt.h"
#include "kernels/wmma_emulation.h"

namespace {

namespace wmma = nvcuda::wmma;
using gpubench::kernels::float_to_half_bits;
using gpubench::kernels::half_bits_to_float;

template <class LayoutA>
void one_tile(const __half* a, unsigned lda, const __half* b, unsigned ldb, float* d, unsigned ldd, float c0,
              wmma::layout_t out) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, LayoutA> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, c0);
  wmma::load_matrix_sync(fa, a, lda);
  wmma::load_matrix_sync(fb, b, ldb);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, ldd, out);
}

TEST(WmmaEmulation, OneTileIsTheProductAtTheGivenAddresses) {
  const unsigned lda = 24, ldb = 40, ldd = 20;  // padded rows, as kernels use them
  std::vector<__half> a(16 * lda), b(16 * ldb);
  for (std::size_t i = 0; i < a.size(); ++i) a[i].bits = float_to_half_bits(static_cast<float>((i * 7) % 13) - 6.0f);
  for (std::size_t i = 0; i < b.size(); ++i) b[i].bits = float_to_half_bits(static_cast<float>((i * 5) % 11) - 5.0f);
  const auto av = [&](int r, int k, bool col) { return half_bits_to_float(a[col ? k * lda + r : r * lda + k].bits); };
  for (bool col : {false, true}) {
    for (wmma::layout_t out : {wmma::mem_row_major, wmma::mem_col_major}) {
      std::vector<float> d(16 * ldd, -1.0f);
      if (col) {
        gpubench::simt::launch({1, 1, 1}, {32, 1, 1}, one_tile<wmma::col_major>, a.data(), lda, b.data(), ldb, d.data(),
                               ldd, 0.5f, out);
      } else {
        gpubench::simt::launch({1, 1, 1}, {32, 1, 1}, one_tile<wmma::row_major>, a.data(), lda, b.data(), ldb, d.data(),
                               ldd, 0.5f, out);
      }
      for (int r = 0; r < 16; ++r) {
        for (int c = 0; c < 16; ++c) {
          float want = 0.5f;
          for (int k = 0; k < 16; ++k) want += av(r, k, col) * half_bits_to_float(b[k * ldb + c].bits);
          const float got = out == wmma::mem_row_major ? d[r * ldd + c] : d[c * ldd + r];
          EXPECT_EQ(got, want) << "r " << r << " c " << c << " col_major A " << col;
        }
      }
      // Nothing written outside the 16 x 16 tile of the padded rows.
      for (int r = 0; r < 16; ++r)
        for (unsigned c = 16; c < ldd; ++c) EXPECT_EQ(d[r * ldd + c], -1.0f);
    }
  }
}

}  // namespace
