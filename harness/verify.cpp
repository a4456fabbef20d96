#include "harness/verify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

#include "harness/host/parallel.h"
#include "harness/random.h"
#include "kernels/chase_ring.h"
#include "kernels/seeded_words.h"

namespace gpubench {

namespace {

template <class T>
std::string hex(T v) {
  std::ostringstream s;
  s << "0x" << std::hex << static_cast<std::uint64_t>(v);
  return s.str();
}

std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

std::uint32_t seeded_bits_of(SeededFloats in, std::size_t k) { return float_bits(kernels::seeded_float(in.seed, k)); }

Verification copy_failure(std::size_t i, std::size_t bytes, unsigned char want, unsigned char got) {
  return Verification::fail("byte " + std::to_string(i) + " of " + std::to_string(bytes) + ": expected " + hex(want) +
                            ", got " + hex(got));
}

// Lowest index in [0, n) where bad(i) holds, searched in parallel chunks; n when none.
template <class Bad>
std::size_t first_bad(std::size_t n, const Bad& bad) {
  std::vector<std::size_t> firsts(host_threads(), n);
  parallel_for(n, [&](std::size_t b, std::size_t e, unsigned t) {
    for (std::size_t i = b; i < e; ++i)
      if (bad(i)) {
        firsts[t] = i;
        return;
      }
  });
  std::size_t first = n;
  for (auto f : firsts) first = std::min(first, f);
  return first;
}

}  // namespace

void fill_random_u32(void* p, std::size_t bytes, std::uint64_t seed) {
  auto* words = static_cast<std::uint32_t*>(p);
  const std::size_t n = bytes / 4;
  parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) words[i] = kernels::seeded_word(seed, i);
  });
  auto* tail = static_cast<unsigned char*>(p) + n * 4;
  for (std::size_t i = 0; i < bytes % 4; ++i) tail[i] = kernels::seeded_tail_byte(seed, n, i);
}

void fill_seeded(void* p, std::size_t bytes, SeededWords in) { fill_random_u32(p, bytes, in.seed); }

void fill_seeded(float* p, std::size_t n, SeededFloats in) {
  parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) p[i] = kernels::seeded_float(in.seed, i);
  });
}

void fill_random_float(float* p, std::size_t n, std::uint64_t seed, float lo, float hi) {
  const double span = static_cast<double>(hi) - lo;
  parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) {
      const double u = static_cast<double>(splitmix64(seed ^ (i * 0x2545f4914f6cdd1dull)) >> 11) * 0x1.0p-53;
      p[i] = static_cast<float>(lo + span * u);
    }
  });
}

void poison_fill(void* p, std::size_t bytes) {
  auto* words = static_cast<std::uint32_t*>(p);
  const std::size_t n = bytes / 4;
  parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) words[i] = kPoisonU32;
  });
  std::memcpy(static_cast<unsigned char*>(p) + n * 4, &kPoisonU32, bytes % 4);
}

Verification check_copy(const void* in, const void* out, std::size_t bytes) {
  const auto* a = static_cast<const unsigned char*>(in);
  const auto* b = static_cast<const unsigned char*>(out);
  const std::size_t i = first_bad(bytes, [&](std::size_t k) { return a[k] != b[k]; });
  if (i == bytes) return Verification::pass();
  return copy_failure(i, bytes, a[i], b[i]);
}

Verification check_copy(SeededWords in, const void* out, std::size_t bytes) {
  const auto* b = static_cast<const unsigned char*>(out);
  const std::size_t words = bytes / 4;
  // Word by word (the words are the formula's unit), then the byte that differs first.
  const std::size_t w = first_bad(words, [&](std::size_t k) {
    std::uint32_t got;
    std::memcpy(&got, b + 4 * k, 4);
    return got != kernels::seeded_word(in.seed, k);
  });
  if (w < words) {
    const std::uint32_t want = kernels::seeded_word(in.seed, w);
    unsigned char want_bytes[4];
    std::memcpy(want_bytes, &want, 4);
    for (std::size_t j = 0; j < 4; ++j)
      if (b[4 * w + j] != want_bytes[j]) return copy_failure(4 * w + j, bytes, want_bytes[j], b[4 * w + j]);
  }
  for (std::size_t t = 0; t < bytes % 4; ++t) {
    const unsigned char want = kernels::seeded_tail_byte(in.seed, words, t);
    if (b[4 * words + t] != want) return copy_failure(4 * words + t, bytes, want, b[4 * words + t]);
  }
  return Verification::pass();
}

Verification check_copy(SeededFloats in, const float* out, std::size_t n) {
  const std::size_t i = first_bad(n, [&](std::size_t k) { return float_bits(out[k]) != seeded_bits_of(in, k); });
  if (i == n) return Verification::pass();
  return Verification::fail("element " + std::to_string(i) + " of " + std::to_string(n) + ": expected " +
                            hex(seeded_bits_of(in, i)) + ", got " + hex(float_bits(out[i])));
}

Verification check_write_pattern(const std::uint32_t* out, std::size_t n, std::uint32_t seed) {
  const std::size_t i = first_bad(n, [&](std::size_t k) { return out[k] != static_cast<std::uint32_t>(seed + k); });
  if (i == n) return Verification::pass();
  return Verification::fail("element " + std::to_string(i) + ": expected " + hex(static_cast<std::uint32_t>(seed + i)) +
                            ", got " + hex(out[i]));
}

namespace {

// The checks below take the input as an accessor: element k's bits (a host array or a formula).
template <class InBits>
Verification strided_against(const InBits& in, const float* out, std::size_t n, int stride) {
  const std::size_t s = static_cast<std::size_t>(stride);
  const std::size_t i = first_bad(n, [&](std::size_t k) {
    const std::uint32_t want = (k % s == 0) ? in(k) : kPoisonU32;
    return float_bits(out[k]) != want;
  });
  if (i == n) return Verification::pass();
  const bool touched = i % s == 0;
  return Verification::fail("element " + std::to_string(i) + (touched ? " (copied)" : " (not to be touched)") +
                            ": expected " + hex(touched ? in(i) : kPoisonU32) + ", got " + hex(float_bits(out[i])));
}

// The indices are checked too: one out of [0, n) is named as such (and never read through).
template <class InBits>
Verification gather_against(const InBits& in, const std::uint32_t* idx, const float* out, std::size_t n) {
  const std::size_t i = first_bad(n, [&](std::size_t k) { return idx[k] >= n || float_bits(out[k]) != in(idx[k]); });
  if (i == n) return Verification::pass();
  if (idx[i] >= n)
    return Verification::fail("element " + std::to_string(i) + ": index " + std::to_string(idx[i]) +
                              " is out of range (n = " + std::to_string(n) + ")");
  return Verification::fail("element " + std::to_string(i) + " (index " + std::to_string(idx[i]) + "): expected " +
                            hex(in(idx[i])) + ", got " + hex(float_bits(out[i])));
}

template <class InWord>
Verification sum_against(const InWord& in, std::size_t n, std::uint32_t got, std::uint32_t times) {
  std::vector<std::uint32_t> partial(host_threads(), 0);
  parallel_for(n, [&](std::size_t b, std::size_t e, unsigned t) {
    std::uint32_t s = 0;
    for (std::size_t i = b; i < e; ++i) s += in(i);
    partial[t] = s;
  });
  std::uint32_t want = 0;
  for (auto s : partial) want += s;
  want *= times;  // wrapping, like the kernel
  if (want == got) return Verification::pass();
  return Verification::fail("sum of " + std::to_string(n) + " words" +
                            (times == 1 ? std::string() : " read " + std::to_string(times) + " times") + ": expected " +
                            hex(want) + ", got " + hex(got));
}

}  // namespace

Verification check_strided(const float* in, const float* out, std::size_t n, int stride) {
  return strided_against([in](std::size_t k) { return float_bits(in[k]); }, out, n, stride);
}
Verification check_strided(SeededFloats in, const float* out, std::size_t n, int stride) {
  return strided_against([in](std::size_t k) { return seeded_bits_of(in, k); }, out, n, stride);
}

Verification check_gather(const float* in, const std::uint32_t* idx, const float* out, std::size_t n) {
  return gather_against([in](std::size_t k) { return float_bits(in[k]); }, idx, out, n);
}
Verification check_gather(SeededFloats in, const std::uint32_t* idx, const float* out, std::size_t n) {
  return gather_against([in](std::size_t k) { return seeded_bits_of(in, k); }, idx, out, n);
}

Verification check_sum_u32(const std::uint32_t* in, std::size_t n, std::uint32_t got, std::uint32_t times) {
  return sum_against([in](std::size_t k) { return in[k]; }, n, got, times);
}
Verification check_sum_u32(SeededWords in, std::size_t n, std::uint32_t got, std::uint32_t times) {
  return sum_against([in](std::size_t k) { return kernels::seeded_word(in.seed, k); }, n, got, times);
}

Verification check_close(const double* expected, const float* actual, std::size_t n, double abs_tol, double rel_tol,
                         const std::string& what) {
  const std::size_t i = first_bad(n, [&](std::size_t k) {
    const double a = actual[k];
    return !(std::fabs(a - expected[k]) <= abs_tol + rel_tol * std::fabs(expected[k]));  // NaN fails
  });
  if (i == n) return Verification::pass();
  std::ostringstream s;
  s.precision(9);
  s << what << "[" << i << "]: expected " << expected[i] << ", got " << actual[i] << " (tolerance " << abs_tol << " + "
    << rel_tol << " x |expected|)";
  return Verification::fail(s.str());
}

Verification check_chase(const std::uint32_t* next, std::size_t n, std::uint32_t start, std::size_t steps,
                         std::uint32_t sink) {
  std::uint32_t p = start;
  std::size_t cycle = 0;
  do {
    if (next[p] >= n) return Verification::fail("next[" + std::to_string(p) + "] out of range");
    p = next[p];
    ++cycle;
  } while (p != start && cycle <= n);
  if (cycle != n) return Verification::fail("the chain is not one cycle through all " + std::to_string(n) + " entries");
  p = start;
  for (std::size_t i = 0; i < steps % n; ++i) p = next[p];
  if (p == sink) return Verification::pass();
  return Verification::fail("after " + std::to_string(steps) + " steps: expected index " + std::to_string(p) +
                            ", got " + std::to_string(sink));
}

Verification check_chase_path(const std::uint32_t* next, std::size_t n, std::uint64_t seed, std::uint32_t start,
                              std::uint64_t steps, std::uint32_t sink) {
  if (n == 0 || start >= n) return Verification::fail("chase start " + std::to_string(start) + " outside the ring");
  const kernels::ChaseRing ring = kernels::make_chase_ring_of(n, seed);
  std::uint32_t p = start;
  const std::uint64_t reads = std::min<std::uint64_t>(steps, n);
  for (std::uint64_t i = 0; i < reads; ++i) {
    const std::uint32_t want = kernels::ring_next(ring, p);
    if (next[p] != want)
      return Verification::fail("the ring: next[" + std::to_string(p) + "] = " + std::to_string(next[p]) +
                                ", expected " + std::to_string(want) + " (read " + std::to_string(i + 1) +
                                " of the chase from entry " + std::to_string(start) + ")");
    p = want;
  }
  const std::uint32_t end = kernels::ring_after(ring, start, steps);
  if (sink == end) return Verification::pass();
  return Verification::fail("after " + std::to_string(steps) + " steps from entry " + std::to_string(start) +
                            " expected entry " + std::to_string(end) + ", got " + std::to_string(sink));
}

}  // namespace gpubench
