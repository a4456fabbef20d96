#include "families/intensity/verify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

#include "families/intensity/reference.h"
#include "harness/host/parallel.h"
#include "harness/random.h"
#include "kernels/half_bits.h"

namespace gpubench {

namespace {

namespace ik = kernels::intensity;
using ik::Coefficients;

float grid_f32(std::uint32_t j) { return Coefficients::kLo + static_cast<float>(j) / kIntensityGridF32; }

// Index of x in the FP32 grid, or -1 when x is not a grid value.
int grid_index_f32(float x) {
  const float t = (x - Coefficients::kLo) * kIntensityGridF32;  // exact for grid values
  if (!(t >= 0.0f && t < static_cast<float>(kIntensityGridF32))) return -1;
  const int j = static_cast<int>(t);
  return grid_f32(static_cast<std::uint32_t>(j)) == x ? j : -1;
}

std::uint16_t grid_f16(std::uint32_t j) {
  return kernels::float_to_half_bits(Coefficients::kLo + static_cast<float>(j) / kIntensityGridF16);
}

// Lowest index in [0, n) where bad(i) holds, searched in parallel chunks; n when none.
template <class Bad>
std::size_t first_bad(std::size_t n, const Bad& bad) {
  std::vector<std::size_t> firsts(host_threads(), n);
  parallel_for(n, [&](std::size_t b, std::size_t e, unsigned t) {
    for (std::size_t i = b; i < e; ++i) {
      if (bad(i)) {
        firsts[t] = i;
        return;
      }
    }
  });
  return *std::min_element(firsts.begin(), firsts.end());
}

std::string hex32(std::uint32_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace

void fill_intensity_f32(float* in, std::size_t n, std::uint64_t seed) {
  parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) {
      in[i] = grid_f32(static_cast<std::uint32_t>(splitmix64(seed ^ (i * 0x2545f4914f6cdd1dull)) % kIntensityGridF32));
    }
  });
}

void fill_intensity_f16x2(std::uint32_t* in, std::size_t n, std::uint64_t seed) {
  parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) {
      const std::uint64_t r = splitmix64(seed ^ (i * 0x2545f4914f6cdd1dull));
      const std::uint32_t lo = grid_f16(static_cast<std::uint32_t>(r % kIntensityGridF16));
      const std::uint32_t hi = grid_f16(static_cast<std::uint32_t>((r >> 32) % kIntensityGridF16));
      in[i] = lo | (hi << 16);
    }
  });
}

Verification check_intensity_f32(const float* in, const float* out, std::size_t n, long long steps, int every, float a,
                                 float b, double rel_tol) {
  if (every < 1) return Verification::fail("every must be >= 1");
  std::vector<float> table(kIntensityGridF32);
  parallel_for(
      table.size(),
      [&](std::size_t lo, std::size_t hi, unsigned) {
        for (std::size_t j = lo; j < hi; ++j)
          table[j] = ik::fma_chain_f32(grid_f32(static_cast<std::uint32_t>(j)), a, b, steps);
      },
      1);
  auto expected = [&](std::size_t i, int j) {
    return i % static_cast<std::size_t>(every) == 0 ? table[static_cast<std::size_t>(j)] : in[i];
  };
  const std::size_t bad = first_bad(n, [&](std::size_t i) {
    const int j = grid_index_f32(in[i]);
    if (j < 0) return true;
    const double want = expected(i, j), got = out[i];
    return !(std::fabs(got - want) <= rel_tol * std::fabs(want));  // NaN (poison) fails
  });
  if (bad == n) return Verification::pass();
  std::ostringstream m;
  const int j = grid_index_f32(in[bad]);
  if (j < 0) {
    m << "input " << bad << " was modified: " << in[bad] << " is not a generated value";
  } else {
    m << "element " << bad << " after " << (bad % static_cast<std::size_t>(every) == 0 ? steps : 0)
      << " FMA steps from " << in[bad] << ": expected " << expected(bad, j) << ", got " << out[bad] << " ("
      << hex32(bits_of(out[bad])) << ")";
  }
  return Verification::fail(m.str());
}

Verification check_intensity_f16x2(const std::uint32_t* in, const std::uint32_t* out, std::size_t n, long long steps,
                                   std::uint32_t a, std::uint32_t b, int ulps) {
  // One table per lane (a and b could differ between lanes), indexed by the input's bit pattern.
  std::vector<std::uint16_t> table[2] = {std::vector<std::uint16_t>(65536), std::vector<std::uint16_t>(65536)};
  std::vector<bool> on_grid(65536, false);
  for (int j = 0; j < kIntensityGridF16; ++j) on_grid[grid_f16(static_cast<std::uint32_t>(j))] = true;
  for (int lane = 0; lane < 2; ++lane) {
    const auto la = static_cast<std::uint16_t>(a >> (16 * lane)), lb = static_cast<std::uint16_t>(b >> (16 * lane));
    parallel_for(
        kIntensityGridF16,
        [&](std::size_t lo, std::size_t hi, unsigned) {
          for (std::size_t j = lo; j < hi; ++j) {
            std::uint16_t x = grid_f16(static_cast<std::uint32_t>(j));
            const std::uint16_t x0 = x;
            for (long long s = 0; s < steps; ++s) x = ik::fma_step_f16(x, la, lb);
            table[lane][x0] = x;
          }
        },
        1);
  }
  // Within `ulps` of the expected half (same sign; the chains stay positive and finite).
  auto close = [&](std::uint16_t want, std::uint16_t got) {
    if ((got & 0x7C00u) == 0x7C00u) return false;  // inf / NaN (the poison's halves are NaN)
    const int d = static_cast<int>(want) - static_cast<int>(got);
    return (want >> 15) == (got >> 15) && d <= ulps && -d <= ulps;
  };
  int bad_lane = 0;
  const std::size_t bad = first_bad(n, [&](std::size_t i) {
    for (int lane = 0; lane < 2; ++lane) {
      const auto x = static_cast<std::uint16_t>(in[i] >> (16 * lane)),
                 y = static_cast<std::uint16_t>(out[i] >> (16 * lane));
      if (!on_grid[x] || !close(table[lane][x], y)) return true;
    }
    return false;
  });
  if (bad == n) return Verification::pass();
  for (int lane = 0; lane < 2; ++lane) {
    const auto x = static_cast<std::uint16_t>(in[bad] >> (16 * lane)),
               y = static_cast<std::uint16_t>(out[bad] >> (16 * lane));
    if (!on_grid[x] || !close(table[lane][x], y)) {
      bad_lane = lane;
      break;
    }
  }
  const auto x = static_cast<std::uint16_t>(in[bad] >> (16 * bad_lane));
  std::ostringstream m;
  if (!on_grid[x]) {
    m << "input word " << bad << " was modified: " << hex32(in[bad]) << " is not a generated value";
  } else {
    const auto got = static_cast<std::uint16_t>(out[bad] >> (16 * bad_lane));
    m << "word " << bad << " lane " << bad_lane << " after " << steps << " FMA steps from "
      << kernels::half_bits_to_float(x) << ": expected " << kernels::half_bits_to_float(table[bad_lane][x]) << ", got "
      << kernels::half_bits_to_float(got) << " (" << hex32(out[bad]) << ")";
  }
  return Verification::fail(m.str());
}

}  // namespace gpubench
