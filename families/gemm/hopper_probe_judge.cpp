// The Hopper probe's inputs and judges (families/gemm/hopper_probe.h): what each probe kernel's
// output must hold if the hardware reads the building block as the emulation does. The models are
// the emulation's own functions (kernels/wgmma.cuh: swizzle_address, WgmmaLayout), so a mismatch
// on a GPU says the emulation - and the GEMM written against it - is wrong, and where.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "families/gemm/hopper_probe.h"
#include "families/gemm/low_precision.h"
#include "families/gemm/reference.h"
#include "kernels/half_bits.h"
#include "kernels/wgmma.cuh"

namespace gpubench::kernels::probe {

namespace {

namespace hopper = ::gpubench::kernels::hopper;

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

/// Row p(r) of the one-hot designs: a permutation of 0..63 (5 is odd, so coprime with 64).
int one_hot_k(int row) { return (5 * row + 3) % kTile; }

/// The shared-memory element index (16-bit units from the box start) at which element (row, col)
/// of a box of 128-byte rows lands under `mode`.
std::uint32_t landed_index(int row, int col, hopper::Swizzle mode) {
  const auto logical = static_cast<std::uint32_t>(row * 128 + col * 2);
  return hopper::swizzle_address(logical, mode) / 2u;
}

/// How many elements of the box (rows first_row.. of index_tensor) are where `mode` puts them.
long matches_under(const std::uint16_t* landed, int inner, int box_outer, int first_row, hopper::Swizzle mode) {
  long n = 0;
  for (int r = 0; r < box_outer; ++r) {
    for (int c = 0; c < kTile; ++c) {
      const auto want = static_cast<std::uint16_t>((first_row + r) * inner + c);
      if (landed[landed_index(r, c, mode)] == want) ++n;
    }
  }
  return n;
}

const char* mode_name(hopper::Swizzle mode) {
  switch (mode) {
    case hopper::Swizzle::k128B: return "128B";
    case hopper::Swizzle::k64B: return "64B";
    case hopper::Swizzle::k32B: return "32B";
    case hopper::Swizzle::kNone: break;
  }
  return "no";
}

/// D = A * B in double for one (row, column), with the magnitude sum the tolerance scales with.
void product(const MmaInputs& in, int row, int col, double* value, double* magnitude) {
  double v = 0.0, m = 0.0;
  for (int k = 0; k < kTile; ++k) {
    const double p = static_cast<double>(in.a[static_cast<std::size_t>(row) * kTile + k]) *
                     static_cast<double>(in.b[static_cast<std::size_t>(k) * kMmaN + col]);
    v += p;
    m += std::fabs(p);
  }
  *value = v;
  *magnitude = m;
}

}  // namespace

std::string describe(const Descriptors& d) {
  return "A lbo " + std::to_string(d.a_lbo) + " sbo " + std::to_string(d.a_sbo) + " step " +
         std::to_string(d.a_k_step) + ", B lbo " + std::to_string(d.b_lbo) + " sbo " + std::to_string(d.b_sbo) +
         " step " + std::to_string(d.b_k_step);
}

std::vector<Descriptors> descriptor_variants(const Descriptors& base) {
  Descriptors swap_a = base, swap_b = base;
  std::swap(swap_a.a_lbo, swap_a.a_sbo);
  std::swap(swap_b.b_lbo, swap_b.b_sbo);
  Descriptors swap_both = swap_a;
  swap_both.b_lbo = swap_b.b_lbo;
  swap_both.b_sbo = swap_b.b_sbo;
  return {base, swap_a, swap_b, swap_both};
}

std::vector<std::uint16_t> index_tensor(int inner, int outer) {
  std::vector<std::uint16_t> t(static_cast<std::size_t>(inner) * static_cast<std::size_t>(outer));
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<std::uint16_t>(i);
  return t;
}

Verdict judge_status(int status, const std::string& block) {
  Verdict v;
  if (status == 0) return v;
  v.ok = false;
  v.summary =
      block + (status == 1    ? ": a TMA load never completed its mbarrier (expected bytes not delivered in 200 ms)"
               : status == 2  ? ": the cluster's arrivals never completed the mbarrier in 200 ms"
               : status == -1 ? ": the kernel never reported (it did not run, or faulted first)"
                              : ": unknown status " + std::to_string(status));
  return v;
}

Verdict judge_swizzled_box(const std::uint16_t* landed, int inner, int box_outer, int first_row) {
  Verdict v;
  const long total = static_cast<long>(box_outer) * kTile;
  const long good = matches_under(landed, inner, box_outer, first_row, hopper::Swizzle::k128B);
  if (good == total) return v;
  v.ok = false;
  v.summary =
      std::to_string(total - good) + " of " + std::to_string(total) + " elements not where the 128B swizzle puts them";
  for (const hopper::Swizzle other : {hopper::Swizzle::kNone, hopper::Swizzle::k32B, hopper::Swizzle::k64B}) {
    if (matches_under(landed, inner, box_outer, first_row, other) == total) {
      v.summary += std::string("; they are laid out with ") + mode_name(other) + " swizzle";
      break;
    }
  }
  int shown = 0;
  for (int r = 0; r < box_outer && shown < 4; ++r) {
    for (int c = 0; c < kTile && shown < 4; ++c) {
      const std::uint32_t at = landed_index(r, c, hopper::Swizzle::k128B);
      const auto want = static_cast<std::uint16_t>((first_row + r) * inner + c);
      if (landed[at] == want) continue;
      const int got = landed[at];
      v.details.push_back("box row " + std::to_string(r) + " column " + std::to_string(c) + ": slot " +
                          std::to_string(at) + " holds tensor element (" + std::to_string(got / inner) + ", " +
                          std::to_string(got % inner) + ")");
      ++shown;
    }
  }
  return v;
}

Verdict judge_tma_store(const float* tensor, const StoreCase& sc) {
  // The slot the box's element (r, c) is read from under `mode`: its byte in a 128-byte row, swizzled.
  const auto slot = [](int r, int c, hopper::Swizzle mode) {
    return static_cast<float>(hopper::swizzle_address(static_cast<std::uint32_t>(r * 128 + c * 4), mode) / 4u);
  };
  const auto at = [&](int r, int c) { return tensor[static_cast<std::size_t>(r) * sc.stride + c]; };
  // Inside the tensor and the box: written from the box's (r - y, c - x).
  const auto stored = [&](int r, int c) {
    return r < sc.rows && c < sc.cols && r >= sc.y && c >= sc.x && r < sc.y + kStoreBoxRows && c < sc.x + kStoreBoxCols;
  };
  const auto wrong_under = [&](hopper::Swizzle mode) {
    long n = 0;
    for (int r = 0; r < kStoreProbeRows; ++r)
      for (int c = 0; c < sc.stride; ++c) n += stored(r, c) && at(r, c) != slot(r - sc.y, c - sc.x, mode) ? 1 : 0;
    return n;
  };
  Verdict v;
  long outside = 0, written = 0;
  for (int r = 0; r < kStoreProbeRows; ++r) {
    for (int c = 0; c < sc.stride; ++c) {
      written += stored(r, c) ? 1 : 0;
      if (!stored(r, c) && !std::isnan(at(r, c))) ++outside;
    }
  }
  const long wrong = wrong_under(hopper::Swizzle::k128B);
  if (wrong == 0 && outside == 0) return v;
  v.ok = false;
  const std::string box = "the box at (" + std::to_string(sc.x) + ", " + std::to_string(sc.y) + ") of the " +
                          std::to_string(sc.rows) + " x " + std::to_string(sc.cols) + " tensor";
  if (wrong > 0) {
    v.summary = box + ": " + std::to_string(wrong) + " of " + std::to_string(written) +
                " elements not from the slot the 128B swizzle reads them from";
    for (const hopper::Swizzle other : {hopper::Swizzle::kNone, hopper::Swizzle::k32B, hopper::Swizzle::k64B}) {
      if (wrong_under(other) == 0) {
        v.summary += std::string("; they are read with ") + mode_name(other) + " swizzle";
        break;
      }
    }
  }
  if (outside > 0) {
    v.summary += (v.summary.empty() ? box + ": " : std::string("; ")) + std::to_string(outside) +
                 " elements written outside the tensor or the box";
  }
  int shown = 0;
  for (int r = 0; r < kStoreProbeRows && shown < 4; ++r) {
    for (int c = 0; c < sc.stride && shown < 4; ++c) {
      const bool in = stored(r, c);
      if (in ? at(r, c) == slot(r - sc.y, c - sc.x, hopper::Swizzle::k128B) : std::isnan(at(r, c))) continue;
      v.details.push_back(
          "element (" + std::to_string(r) + ", " + std::to_string(c) + ") holds " + number(at(r, c)) +
          (in ? ", the 128B swizzle's slot is " + number(slot(r - sc.y, c - sc.x, hopper::Swizzle::k128B))
              : ", outside the tensor or the box"));
      ++shown;
    }
  }
  return v;
}

Verdict judge_multicast(const std::uint16_t* landed) {
  Verdict v;
  for (int block = 0; block < 2; ++block) {
    for (int slot = 0; slot < 2; ++slot) {
      const std::uint16_t* box = landed + static_cast<std::ptrdiff_t>(block * 2 + slot) * kBoxElements;
      const Verdict s = judge_swizzled_box(box, kTile, kTile, slot * kTile);
      if (s.ok) continue;
      v.ok = false;
      const std::string where = "block " + std::to_string(block) + ", the box of block " + std::to_string(slot);
      if (v.summary.empty()) v.summary = where + ": " + s.summary;
      v.details.push_back(where + ": " + s.summary);
    }
  }
  return v;
}

MmaInputs random_mma_inputs(std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(-127, 127);
  auto draw = [&] {
    int x = 0;
    while (x == 0) x = dist(gen);
    return static_cast<float>(x) / 64.0f;
  };
  MmaInputs in;
  in.a.resize(static_cast<std::size_t>(kTile) * kTile);
  in.b.resize(static_cast<std::size_t>(kTile) * kMmaN);
  for (float& x : in.a) x = draw();
  for (float& x : in.b) x = draw();
  return in;
}

MmaInputs design_mma_inputs(Design d) {
  MmaInputs in;
  in.a.assign(static_cast<std::size_t>(kTile) * kTile, 0.0f);
  in.b.assign(static_cast<std::size_t>(kTile) * kMmaN, 1.0f);
  for (int r = 0; r < kTile; ++r) {
    in.a[static_cast<std::size_t>(r) * kTile + one_hot_k(r)] = d == Design::by_row ? static_cast<float>(r + 1) : 1.0f;
  }
  for (int k = 0; k < kTile; ++k) {
    for (int n = 0; n < kMmaN; ++n) {
      float& x = in.b[static_cast<std::size_t>(k) * kMmaN + n];
      if (d == Design::by_column) x = static_cast<float>(n);
      if (d == Design::by_k) x = static_cast<float>(k);
    }
  }
  return in;
}

std::vector<std::uint16_t> to_bits(const std::vector<float>& x, Half16 type) {
  std::vector<std::uint16_t> bits(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    // Exact either way: every probe input has 8 significant bits at most.
    bits[i] = type == Half16::fp16 ? float_to_half_bits(x[i]) : float_to_bf16_bits(x[i]);
  }
  return bits;
}

Verdict judge_mma(const float* fragments, const MmaInputs& in) {
  Verdict v;
  long wrong = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kFragment; ++i) {
      const int row = hopper::WgmmaLayout::d_row(t, i), col = hopper::WgmmaLayout::d_col(t, i);
      double want = 0.0, magnitude = 0.0;
      product(in, row, col, &want, &magnitude);
      const double got = fragments[t * kFragment + i];
      if (std::fabs(got - want) <= gemm_tolerance(kTile, magnitude)) continue;  // NaN fails
      if (++wrong <= 4) {
        v.details.push_back("thread " + std::to_string(t) + " element " + std::to_string(i) + " (D row " +
                            std::to_string(row) + ", column " + std::to_string(col) + "): " + number(got) +
                            ", expected " + number(want));
      }
    }
  }
  if (wrong == 0) return v;
  v.ok = false;
  v.summary = std::to_string(wrong) + " of " + std::to_string(kFragmentFloats) + " accumulator elements wrong";
  return v;
}

std::vector<std::string> diagnose_mma(const float* by_column, const float* by_k, const float* by_row, int max_lines) {
  std::vector<std::string> lines;
  long wrong = 0, layout_only = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kFragment; ++i) {
      const int row = hopper::WgmmaLayout::d_row(t, i), col = hopper::WgmmaLayout::d_col(t, i);
      const float c = by_column[t * kFragment + i], k = by_k[t * kFragment + i], r = by_row[t * kFragment + i];
      const bool ok =
          c == static_cast<float>(col) && k == static_cast<float>(one_hot_k(row)) && r == static_cast<float>(row + 1);
      if (ok) continue;
      ++wrong;
      // A consistent (row, column) that is merely elsewhere: the operands were read right and the
      // accumulator layout differs. Row r' is consistent when the k read is p(r').
      const int got_row = static_cast<int>(r) - 1;
      const bool consistent = got_row >= 0 && got_row < kTile && k == static_cast<float>(one_hot_k(got_row)) &&
                              c >= 0.0f && c < static_cast<float>(kMmaN) && c == std::floor(c);
      if (consistent) ++layout_only;
      if (static_cast<int>(lines.size()) < max_lines) {
        lines.push_back("thread " + std::to_string(t) + " element " + std::to_string(i) + ": layout says row " +
                        std::to_string(row) + " column " + std::to_string(col) + " (k " +
                        std::to_string(one_hot_k(row)) + "); the value names row " + number(r - 1.0f) + " column " +
                        number(c) + " k " + number(k) +
                        (consistent ? " (a whole element, elsewhere)" : " (not one element: operands misread)"));
      }
    }
  }
  if (wrong > 0) {
    lines.insert(lines.begin(), std::to_string(wrong) + " of " + std::to_string(kFragmentFloats) +
                                    " elements differ under the designs; " + std::to_string(layout_only) +
                                    " of them are whole elements of D at another place" +
                                    (layout_only == wrong ? ": the accumulator layout differs from WgmmaLayout" : ""));
  }
  return lines;
}

Verdict probe_mma(const Descriptors& gemm, const std::vector<Descriptors>& variants, const MmaRunner& run) {
  const MmaInputs random = random_mma_inputs(23);
  std::vector<float> fragments;
  Verdict v = run(random, gemm, &fragments);
  if (!v.ok) return v;
  v = judge_mma(fragments.data(), random);
  if (v.ok) return v;
  std::vector<float> by_column, by_k, by_row;
  if (run(design_mma_inputs(Design::by_column), gemm, &by_column).ok &&
      run(design_mma_inputs(Design::by_k), gemm, &by_k).ok &&
      run(design_mma_inputs(Design::by_row), gemm, &by_row).ok) {
    for (std::string& line : diagnose_mma(by_column.data(), by_k.data(), by_row.data())) {
      v.details.push_back(std::move(line));
    }
  }
  std::string right;
  for (const Descriptors& d : variants) {
    Verdict r = run(random, d, &fragments);
    if (r.ok) r = judge_mma(fragments.data(), random);
    v.details.push_back("descriptors " + describe(d) + ": " + (r.ok ? std::string("right") : r.summary));
    if (r.ok && right.empty()) right = describe(d);
  }
  v.summary += " with the GEMM's descriptors (" + describe(gemm) + "); " +
               (right.empty() ? std::string("no variant tried is right") : "right with " + right);
  return v;
}

std::vector<std::string> diagnose_gemm(const float* c, const double* expected, const double* tolerance, int m, int n,
                                       int tile_m, int tile_n) {
  const int tiles_n = (n + tile_n - 1) / tile_n;
  std::map<std::pair<int, int>, long> by_tile;
  std::vector<long> by_half(2, 0), by_box(static_cast<std::size_t>((tile_n + 63) / 64), 0);
  long wrong = 0, unwritten = 0;
  for (int row = 0; row < m; ++row) {
    for (int col = 0; col < n; ++col) {
      const std::size_t e = static_cast<std::size_t>(row) * static_cast<std::size_t>(n) + static_cast<std::size_t>(col);
      if (std::fabs(static_cast<double>(c[e]) - expected[e]) <= tolerance[e]) continue;  // NaN is wrong
      ++wrong;
      if (std::isnan(c[e])) ++unwritten;
      ++by_tile[{row / tile_m, col / tile_n}];
      ++by_half[static_cast<std::size_t>((row % tile_m) * 2 / tile_m)];
      ++by_box[static_cast<std::size_t>((col % tile_n) / 64)];
    }
  }
  std::vector<std::string> lines;
  if (wrong == 0) return lines;
  const long total = static_cast<long>(m) * n;
  lines.push_back(std::to_string(wrong) + " of " + std::to_string(total) + " elements of C wrong, " +
                  std::to_string(unwritten) + " of them never written (NaN)");
  std::vector<std::pair<long, std::pair<int, int>>> tiles;
  tiles.reserve(by_tile.size());
  for (const auto& [tile, count] : by_tile) tiles.push_back({count, tile});
  std::stable_sort(tiles.begin(), tiles.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string list = std::to_string(tiles.size()) + " of " + std::to_string(((m + tile_m - 1) / tile_m) * tiles_n) +
                     " tiles (" + std::to_string(tile_m) + " x " + std::to_string(tile_n) +
                     ") hold them; (row, column): count:";
  for (std::size_t i = 0; i < tiles.size() && i < 12; ++i) {
    list += " (" + std::to_string(tiles[i].second.first) + ", " + std::to_string(tiles[i].second.second) +
            "): " + std::to_string(tiles[i].first);
  }
  lines.push_back(list);
  std::string inside = "inside a tile: rows 0-" + std::to_string(tile_m / 2 - 1) + " " + std::to_string(by_half[0]) +
                       ", rows " + std::to_string(tile_m / 2) + "-" + std::to_string(tile_m - 1) + " " +
                       std::to_string(by_half[1]) + "; 64-column boxes:";
  for (const long b : by_box) inside += " " + std::to_string(b);
  lines.push_back(inside);
  return lines;
}

}  // namespace gpubench::kernels::probe
