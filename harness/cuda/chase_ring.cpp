#include "harness/cuda/chase_ring.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace gpubench {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [0, bound) without modulo bias: reject the lowest 2^64 mod bound values, so the
// accepted range is a whole number of periods of `bound`.
std::uint64_t uniform_below(std::uint64_t& state, std::uint64_t bound) {
  const std::uint64_t reject_below = (0 - bound) % bound;
  for (;;) {
    const std::uint64_t x = splitmix64(state);
    if (x >= reject_below) return x % bound;
  }
}

}  // namespace

ChaseRing make_chase_ring(std::size_t n, std::uint64_t seed) {
  if (n == 0 || n > 0xffffffffull) throw std::invalid_argument("chase ring size out of range: " + std::to_string(n));
  ChaseRing r;
  r.next.resize(n);
  for (std::size_t i = 0; i < n; ++i) r.next[i] = static_cast<std::uint32_t>(i);
  // Sattolo: like Fisher-Yates, but j < i strictly, which yields one n-cycle.
  std::uint64_t state = seed;
  for (std::size_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::size_t>(uniform_below(state, i));
    std::swap(r.next[i], r.next[j]);
  }
  // Walk from 0: returning to 0 first after exactly n steps means all n entries were visited.
  r.order.resize(n);
  std::uint32_t p = 0;
  for (std::size_t pos = 0; pos < n; ++pos) {
    if (pos > 0 && p == 0) throw std::logic_error("chase ring is not a single cycle");
    r.order[pos] = p;
    p = r.next[p];
  }
  if (p != 0) throw std::logic_error("chase ring is not a single cycle");
  return r;
}

}  // namespace gpubench
