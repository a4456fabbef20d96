#include "harness/random.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/host/parallel.h"
#include "kernels/chase_ring.h"
#include "kernels/seeded_words.h"

namespace gpubench {

std::uint64_t splitmix64(std::uint64_t x) { return kernels::splitmix64_mix(x); }

std::uint64_t splitmix64_next(std::uint64_t& state) {
  const std::uint64_t x = splitmix64(state);
  state += 0x9e3779b97f4a7c15ull;
  return x;
}

// Reject the lowest 2^64 mod bound values, so the accepted range is a whole number of periods
// of `bound`.
std::uint64_t uniform_below(std::uint64_t& state, std::uint64_t bound) {
  const std::uint64_t reject_below = (0 - bound) % bound;
  for (;;) {
    const std::uint64_t x = splitmix64_next(state);
    if (x >= reject_below) return x % bound;
  }
}

void make_permutation(std::uint32_t* idx, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<std::uint32_t>(i);
  std::uint64_t state = seed;
  for (std::size_t i = n; i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniform_below(state, i));
    std::swap(idx[i - 1], idx[j]);
  }
}

namespace {
void check_ring_size(std::size_t n) {
  if (n == 0 || n > 0xffffffffull) throw std::invalid_argument("chase ring size out of range: " + std::to_string(n));
}
}  // namespace

std::vector<std::uint32_t> make_chase_ring(std::size_t n, std::uint64_t seed) {
  check_ring_size(n);
  std::vector<std::uint32_t> next(n);
  const kernels::ChaseRing ring = kernels::make_chase_ring_of(n, seed);
  parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) next[i] = kernels::ring_next(ring, static_cast<std::uint32_t>(i));
  });
  return next;
}

std::uint32_t chase_reference(std::size_t n, std::uint64_t seed, std::uint32_t start, std::uint64_t steps) {
  check_ring_size(n);
  if (start >= n) throw std::invalid_argument("chase start " + std::to_string(start) + " outside the ring");
  return kernels::ring_after(kernels::make_chase_ring_of(n, seed), start, steps);
}

std::uint32_t chase_start(std::size_t n, std::uint64_t seed, int k) {
  std::uint64_t state = seed ^ (0xd1b54a32d192ed03ull * static_cast<std::uint64_t>(k + 1));
  return static_cast<std::uint32_t>(uniform_below(state, n));
}

}  // namespace gpubench
