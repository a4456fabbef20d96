#include "harness/random.h"

#include <stdexcept>
#include <string>
#include <utility>

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

std::vector<std::uint32_t> make_chase_ring(std::size_t n, std::uint64_t seed) {
  if (n == 0 || n > 0xffffffffull) throw std::invalid_argument("chase ring size out of range: " + std::to_string(n));
  std::vector<std::uint32_t> next(n);
  for (std::size_t i = 0; i < n; ++i) next[i] = static_cast<std::uint32_t>(i);
  // The swaps are independent of the data, so the CPU overlaps their cache misses: about
  // a second for 2^26 entries, where a dependent walk of the ring would take several.
  std::uint64_t state = seed;
  for (std::size_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::size_t>(uniform_below(state, i));
    std::swap(next[i], next[j]);
  }
  return next;
}

std::uint32_t chase_reference(const std::vector<std::uint32_t>& next, std::uint32_t start, std::uint64_t steps) {
  std::uint32_t p = start;
  for (std::uint64_t s = steps % next.size(); s > 0; --s) p = next[p];
  return p;
}

std::uint32_t chase_start(std::size_t n, std::uint64_t seed, int k) {
  std::uint64_t state = seed ^ (0xd1b54a32d192ed03ull * static_cast<std::uint64_t>(k + 1));
  return static_cast<std::uint32_t>(uniform_below(state, n));
}

}  // namespace gpubench
