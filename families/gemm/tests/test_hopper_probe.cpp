// The Hopper probe's judges (families/gemm/hopper_probe_judge.cpp), fed outputs made here the
// way the hardware would make them if it read a building block as the emulation does - and the
// ways it might not: another swizzle mode, a box in the wrong slot, an element off, another
// accumulator layout, descriptors that only a variant gets right.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "families/gemm/hopper_probe.h"
#include "kernels/half_bits.h"
#include "kernels/wgmma.cuh"

namespace {

namespace probe = gpubench::kernels::probe;
namespace hopper = gpubench::kernels::hopper;
using gpubench::kernels::Half16;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A box of `rows` x 64 elements of index_tensor(inner, ...) from first_row, laid out by `mode`.
std::vector<std::uint16_t> landed_box(int inner, int rows, int first_row, hopper::Swizzle mode) {
  std::vector<std::uint16_t> smem(static_cast<std::size_t>(rows) * 64, 0xFFFF);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < 64; ++c) {
      const std::uint32_t at = hopper::swizzle_address(static_cast<std::uint32_t>(r * 128 + c * 2), mode) / 2;
      smem[at] = static_cast<std::uint16_t>((first_row + r) * inner + c);
    }
  }
  return smem;
}

TEST(HopperProbe, IndexTensorHoldsEachElementsIndex) {
  const std::vector<std::uint16_t> t = probe::index_tensor(256, 64);
  ASSERT_EQ(t.size(), 256u * 64u);
  EXPECT_EQ(t[0], 0);
  EXPECT_EQ(t[3 * 256 + 5], 3 * 256 + 5);
  EXPECT_EQ(t.back(), 256 * 64 - 1);
}

TEST(HopperProbe, SwizzledBoxPassesOnlyIn128BLayout) {
  const std::vector<std::uint16_t> right = landed_box(64, 128, 0, hopper::Swizzle::k128B);
  EXPECT_TRUE(probe::judge_swizzled_box(right.data(), 64, 128, 0).ok);
  for (const auto& [mode, name] :
       {std::pair{hopper::Swizzle::kNone, "no swizzle"}, std::pair{hopper::Swizzle::k64B, "64B swizzle"},
        std::pair{hopper::Swizzle::k32B, "32B swizzle"}}) {
    const probe::Verdict v = probe::judge_swizzled_box(landed_box(64, 128, 0, mode).data(), 64, 128, 0);
    EXPECT_FALSE(v.ok) << name;
    EXPECT_TRUE(has(v.summary, std::string("laid out with ") + name)) << v.summary;
    EXPECT_FALSE(v.details.empty());
  }
}

TEST(HopperProbe, SwizzledBoxNamesAMisplacedElement) {
  std::vector<std::uint16_t> box = landed_box(256, 64, 0, hopper::Swizzle::k128B);
  // Element (2, 9) of the tensor lands where the 128B swizzle puts it: slot 2 * 64 + (9 ^ 16)...
  const std::uint32_t at = hopper::swizzle_address(2 * 128 + 9 * 2, hopper::Swizzle::k128B) / 2;
  box[at] = 7;  // ... but holds element (0, 7) instead.
  const probe::Verdict v = probe::judge_swizzled_box(box.data(), 256, 64, 0);
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(has(v.summary, "1 of 4096 elements")) << v.summary;
  EXPECT_FALSE(has(v.summary, "laid out with")) << v.summary;
  ASSERT_EQ(v.details.size(), 1u);
  EXPECT_TRUE(has(v.details[0], "box row 2 column 9")) << v.details[0];
  EXPECT_TRUE(has(v.details[0], "tensor element (0, 7)")) << v.details[0];
}

// The store probe's allocation (kStoreProbeRows x c.stride floats) after a TMA store of the box
// whose slot j holds j, read by `mode`, at (c.x, c.y) and clipped to the tensor (or, `clip` false,
// not clipped); the rest still NaN.
std::vector<float> stored_tensor(const probe::StoreCase& c, hopper::Swizzle mode, bool clip = true) {
  std::vector<float> t(static_cast<std::size_t>(probe::kStoreProbeRows) * c.stride, std::nanf(""));
  for (int r = 0; r < probe::kStoreBoxRows; ++r) {
    for (int e = 0; e < probe::kStoreBoxCols; ++e) {
      const int row = c.y + r, col = c.x + e;
      if (row >= probe::kStoreProbeRows || col >= c.stride || (clip && (row >= c.rows || col >= c.cols))) continue;
      t[static_cast<std::size_t>(row) * c.stride + col] =
          static_cast<float>(hopper::swizzle_address(static_cast<std::uint32_t>(r * 128 + e * 4), mode) / 4);
    }
  }
  return t;
}

TEST(HopperProbe, StoredBoxPassesOnlyIn128BLayoutWithinTheTensorAtItsOrigin) {
  for (const probe::StoreCase& c : probe::kStoreCases) {
    SCOPED_TRACE(testing::Message() << c.rows << " x " << c.cols << " at (" << c.x << ", " << c.y << ")");
    EXPECT_TRUE(probe::judge_tma_store(stored_tensor(c, hopper::Swizzle::k128B).data(), c).ok);
    for (const auto& [mode, name] :
         {std::pair{hopper::Swizzle::kNone, "no swizzle"}, std::pair{hopper::Swizzle::k64B, "64B swizzle"},
          std::pair{hopper::Swizzle::k32B, "32B swizzle"}}) {
      const probe::Verdict v = probe::judge_tma_store(stored_tensor(c, mode).data(), c);
      EXPECT_FALSE(v.ok) << name;
      EXPECT_TRUE(has(v.summary, std::string("read with ") + name)) << v.summary;
      EXPECT_FALSE(v.details.empty());
    }
  }
  // The whole box written where the tensor clips it: a failure.
  const probe::StoreCase clipped = probe::kStoreCases[1];  // 12 x 24 at (0, 0)
  const probe::Verdict v =
      probe::judge_tma_store(stored_tensor(clipped, hopper::Swizzle::k128B, false).data(), clipped);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.summary, "the box at (0, 0) of the 12 x 24 tensor: " + std::to_string(16 * 32 - 12 * 24) +
                           " elements written outside the tensor or the box");
  ASSERT_FALSE(v.details.empty());
  EXPECT_TRUE(has(v.details[0], "element (0, 24) holds")) << v.details[0];
  // x and y swapped: the box at (16, 32) of a 24 x 48 tensor lands nowhere it should.
  const probe::StoreCase offset = probe::kStoreCases[2];
  ASSERT_EQ(offset.x, 32);
  ASSERT_EQ(offset.y, 16);
  probe::StoreCase swapped = offset;
  swapped.x = offset.y;
  swapped.y = offset.x;
  swapped.rows = probe::kStoreProbeRows;
  const probe::Verdict w = probe::judge_tma_store(stored_tensor(swapped, hopper::Swizzle::k128B).data(), offset);
  EXPECT_FALSE(w.ok);
  EXPECT_TRUE(has(w.summary, "the box at (32, 16) of the 24 x 48 tensor: ")) << w.summary;
  // One element from the wrong slot.
  std::vector<float> off = stored_tensor(probe::kStoreCases[0], hopper::Swizzle::k128B);
  off[3 * 40 + 5] = 1.0f;
  const probe::Verdict one = probe::judge_tma_store(off.data(), probe::kStoreCases[0]);
  EXPECT_FALSE(one.ok);
  EXPECT_TRUE(has(one.summary, "1 of 512 elements not from the slot")) << one.summary;
  ASSERT_EQ(one.details.size(), 1u);
  EXPECT_TRUE(has(one.details[0], "element (3, 5) holds 1, the 128B swizzle's slot is")) << one.details[0];
}

TEST(HopperProbe, MulticastNeedsBothBoxesInBothBlocks) {
  std::vector<std::uint16_t> out;
  for (int block = 0; block < 2; ++block) {
    for (int slot = 0; slot < 2; ++slot) {
      const std::vector<std::uint16_t> box = landed_box(64, 64, 64 * slot, hopper::Swizzle::k128B);
      out.insert(out.end(), box.begin(), box.end());
    }
  }
  EXPECT_TRUE(probe::judge_multicast(out.data()).ok);
  // Block 1 never received block 0's box: its slot 0 still holds the 0xFFFF fill.
  std::fill(out.begin() + 2 * probe::kBoxElements, out.begin() + 3 * probe::kBoxElements, 0xFFFF);
  const probe::Verdict v = probe::judge_multicast(out.data());
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(has(v.summary, "block 1, the box of block 0")) << v.summary;
  EXPECT_EQ(v.details.size(), 1u);
}

TEST(HopperProbe, StatusNamesWhatNeverCompleted) {
  EXPECT_TRUE(probe::judge_status(0, "block 0").ok);
  EXPECT_TRUE(has(probe::judge_status(1, "block 0").summary, "TMA load never completed"));
  EXPECT_TRUE(has(probe::judge_status(2, "block 1").summary, "block 1: the cluster's arrivals never completed"));
  EXPECT_TRUE(has(probe::judge_status(-1, "the block").summary, "never reported"));
  EXPECT_FALSE(probe::judge_status(5, "x").ok);
}

// D = A * B placed as the hardware would under `row_of` / `col_of` (thread t, element i).
template <class Row, class Col>
std::vector<float> fragments_of(const probe::MmaInputs& in, Row row_of, Col col_of) {
  std::vector<float> f(probe::kFragmentFloats);
  for (int t = 0; t < probe::kThreads; ++t) {
    for (int i = 0; i < probe::kFragment; ++i) {
      const int row = row_of(t, i), col = col_of(t, i);
      double d = 0.0;
      for (int k = 0; k < 64; ++k) d += static_cast<double>(in.a[row * 64 + k]) * in.b[k * 256 + col];
      f[static_cast<std::size_t>(t) * probe::kFragment + i] = static_cast<float>(d);
    }
  }
  return f;
}

std::vector<float> right_fragments(const probe::MmaInputs& in) {
  return fragments_of(in, hopper::WgmmaLayout::d_row, hopper::WgmmaLayout::d_col);
}

// The accumulator layout with the two 8-row halves of each warp's 16 rows swapped.
int swapped_row(int t, int i) { return hopper::WgmmaLayout::d_row(t, i) ^ 8; }

TEST(HopperProbe, MmaJudgePassesTheProductAtTheLayoutOnly) {
  const probe::MmaInputs in = probe::random_mma_inputs(5);
  std::vector<float> f = right_fragments(in);
  EXPECT_TRUE(probe::judge_mma(f.data(), in).ok);
  f[77] += 0.5f;  // inputs are multiples of 1/64: 0.5 is far outside the tolerance
  probe::Verdict v = probe::judge_mma(f.data(), in);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.summary, "1 of 16384 accumulator elements wrong");
  ASSERT_EQ(v.details.size(), 1u);
  EXPECT_TRUE(has(v.details[0], "thread 0 element 77")) << v.details[0];
  f[77] = std::nanf("");
  EXPECT_FALSE(probe::judge_mma(f.data(), in).ok);
  v = probe::judge_mma(fragments_of(in, swapped_row, hopper::WgmmaLayout::d_col).data(), in);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.summary, "16384 of 16384 accumulator elements wrong");
  EXPECT_EQ(v.details.size(), 4u);
}

TEST(HopperProbe, DesignsAreExactAndSayWhatEachElementIs) {
  for (const probe::Design d : {probe::Design::by_column, probe::Design::by_k, probe::Design::by_row}) {
    const probe::MmaInputs in = probe::design_mma_inputs(d);
    for (const Half16 type : {Half16::fp16, Half16::bf16}) {
      const std::vector<std::uint16_t> a = probe::to_bits(in.a, type), b = probe::to_bits(in.b, type);
      for (std::size_t i = 0; i < b.size(); ++i) {
        const float back =
            type == Half16::fp16 ? gpubench::kernels::half_bits_to_float(b[i]) : hopper::bf16_bits_to_float(b[i]);
        ASSERT_EQ(back, in.b[i]) << "B element " << i << " is not exact";
      }
      for (std::size_t i = 0; i < a.size(); ++i) {
        const float back =
            type == Half16::fp16 ? gpubench::kernels::half_bits_to_float(a[i]) : hopper::bf16_bits_to_float(a[i]);
        ASSERT_EQ(back, in.a[i]) << "A element " << i << " is not exact";
      }
    }
  }
  // With the emulation's layout the designs' fragments carry no diagnosis.
  const std::vector<float> c = right_fragments(probe::design_mma_inputs(probe::Design::by_column));
  const std::vector<float> k = right_fragments(probe::design_mma_inputs(probe::Design::by_k));
  const std::vector<float> r = right_fragments(probe::design_mma_inputs(probe::Design::by_row));
  EXPECT_EQ(c[5], static_cast<float>(hopper::WgmmaLayout::d_col(0, 5)));
  EXPECT_EQ(r[2], static_cast<float>(hopper::WgmmaLayout::d_row(0, 2) + 1));
  EXPECT_TRUE(probe::diagnose_mma(c.data(), k.data(), r.data()).empty());
}

TEST(HopperProbe, DiagnosisTellsALayoutFromMisreadOperands) {
  auto designs = [](auto row_of, auto col_of) {
    return std::vector<std::vector<float>>{
        fragments_of(probe::design_mma_inputs(probe::Design::by_column), row_of, col_of),
        fragments_of(probe::design_mma_inputs(probe::Design::by_k), row_of, col_of),
        fragments_of(probe::design_mma_inputs(probe::Design::by_row), row_of, col_of)};
  };
  // Another accumulator layout: every element whole, elsewhere.
  const auto moved = designs(swapped_row, hopper::WgmmaLayout::d_col);
  std::vector<std::string> lines = probe::diagnose_mma(moved[0].data(), moved[1].data(), moved[2].data(), 3);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "16384 of 16384 elements differ under the designs; 16384 of them are whole elements of D at another "
            "place: the accumulator layout differs from WgmmaLayout");
  EXPECT_TRUE(
      has(lines[1], "thread 0 element 0: layout says row 0 column 0 (k 3); the value names row 8 column 0 k 43"))
      << lines[1];
  // An operand read from the wrong place: sums of several products, or values no element has.
  auto misread = designs(hopper::WgmmaLayout::d_row, hopper::WgmmaLayout::d_col);
  for (float& x : misread[1]) x += 0.5f;  // k values that are no row's p(r)
  lines = probe::diagnose_mma(misread[0].data(), misread[1].data(), misread[2].data(), 2);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(has(lines[0], "16384 of 16384 elements differ under the designs; 0 of them are whole elements"))
      << lines[0];
  EXPECT_TRUE(has(lines[1], "(not one element: operands misread)")) << lines[1];
}

TEST(HopperProbe, VariantsSwapEachOperandsOffsets) {
  const probe::Descriptors base{16, 1024, 32, 8192, 1024, 2048};
  const std::vector<probe::Descriptors> v = probe::descriptor_variants(base);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(probe::describe(v[0]), "A lbo 16 sbo 1024 step 32, B lbo 8192 sbo 1024 step 2048");
  EXPECT_EQ(probe::describe(v[1]), "A lbo 1024 sbo 16 step 32, B lbo 8192 sbo 1024 step 2048");
  EXPECT_EQ(probe::describe(v[2]), "A lbo 16 sbo 1024 step 32, B lbo 1024 sbo 8192 step 2048");
  EXPECT_EQ(probe::describe(v[3]), "A lbo 1024 sbo 16 step 32, B lbo 1024 sbo 8192 step 2048");
}

// A stand-in for the GPU that computes D right only for the descriptors `wanted`, and counts runs.
struct FakeHardware {
  probe::Descriptors wanted;
  int runs = 0;
  int status = 0;
  probe::Verdict operator()(const probe::MmaInputs& in, const probe::Descriptors& d, std::vector<float>* f) {
    ++runs;
    *f = right_fragments(in);
    if (probe::describe(d) != probe::describe(wanted)) {
      for (float& x : *f) x = x * 0.5f + 3.0f;
    }
    return probe::judge_status(status, "the warpgroup");
  }
};

TEST(HopperProbe, ProbeFindsTheEncodingTheHardwareWants) {
  const probe::Descriptors gemm{16, 1024, 32, 8192, 1024, 2048};
  const std::vector<probe::Descriptors> variants = probe::descriptor_variants(gemm);
  FakeHardware agrees{gemm};
  probe::Verdict v = probe::probe_mma(gemm, variants, std::ref(agrees));
  EXPECT_TRUE(v.ok) << v.summary;
  EXPECT_EQ(agrees.runs, 1) << "a right answer needs no diagnosis";

  FakeHardware wants_b_swapped{variants[2]};
  v = probe::probe_mma(gemm, variants, std::ref(wants_b_swapped));
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(has(v.summary, "with the GEMM's descriptors (A lbo 16 sbo 1024 step 32, B lbo 8192 sbo 1024 step 2048)"))
      << v.summary;
  EXPECT_TRUE(has(v.summary, "right with A lbo 16 sbo 1024 step 32, B lbo 1024 sbo 8192 step 2048")) << v.summary;
  EXPECT_EQ(wants_b_swapped.runs, 1 + 3 + 4);  // the GEMM's, three designs, four variants
  int right = 0;
  for (const std::string& line : v.details) right += has(line, ": right") ? 1 : 0;
  EXPECT_EQ(right, 1);

  FakeHardware wants_none{probe::Descriptors{0, 0, 0, 0, 0, 0}};
  v = probe::probe_mma(gemm, variants, std::ref(wants_none));
  EXPECT_TRUE(has(v.summary, "no variant tried is right")) << v.summary;

  FakeHardware hangs{gemm, 0, 1};
  v = probe::probe_mma(gemm, variants, std::ref(hangs));
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(has(v.summary, "the warpgroup: a TMA load never completed")) << v.summary;
  EXPECT_EQ(hangs.runs, 1);
}

TEST(HopperProbe, GemmDiagnosisSaysWhichTilesAndWhereInThem) {
  // C of 300 x 520: 3 x 3 tiles of 128 x 256, the last row and column partial.
  const int m = 300, n = 520;
  std::vector<double> expected(static_cast<std::size_t>(m) * n, 1.0), tolerance(expected.size(), 1e-3);
  std::vector<float> c(expected.size(), 1.0f);
  EXPECT_TRUE(probe::diagnose_gemm(c.data(), expected.data(), tolerance.data(), m, n, 128, 256).empty());
  // Tile (1, 0): its second consumer's rows (64-127) in B box 2 (columns 128-191), wrong;
  // tile (2, 2) (partial: rows 256-299, columns 512-519): never written.
  for (int row = 128 + 64; row < 256; ++row) {
    for (int col = 128; col < 192; ++col) c[static_cast<std::size_t>(row) * n + col] = 2.0f;
  }
  for (int row = 256; row < m; ++row) {
    for (int col = 512; col < n; ++col) c[static_cast<std::size_t>(row) * n + col] = std::nanf("");
  }
  const std::vector<std::string> lines =
      probe::diagnose_gemm(c.data(), expected.data(), tolerance.data(), m, n, 128, 256);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "4448 of 156000 elements of C wrong, 352 of them never written (NaN)");
  EXPECT_EQ(lines[1], "2 of 9 tiles (128 x 256) hold them; (row, column): count: (1, 0): 4096 (2, 2): 352");
  EXPECT_EQ(lines[2], "inside a tile: rows 0-63 352, rows 64-127 4096; 64-column boxes: 352 0 4096 0");
}

}  // namespace
