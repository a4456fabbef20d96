// The pointer-chase ring: next[] forming ONE cycle through all n entries (Sattolo's
// algorithm), plus each entry's position along the cycle, so that launches of a batch can
// start at evenly spaced points (disjoint stretches of the ring: a later launch does not find
// the lines an earlier one loaded still cached) and each launch's end point is known without
// walking. Pure C++: unit tested on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpubench {

/// A single-cycle successor table and the order in which the chase visits its entries.
struct ChaseRing {
  std::vector<std::uint32_t> next;   ///< next[i]: the entry after i
  std::vector<std::uint32_t> order;  ///< order[p]: the entry at position p, order[0] == 0
  /// The entry reached after `steps` steps from the entry at position `pos`.
  std::uint32_t after(std::uint64_t pos, std::uint64_t steps) const {
    return order[static_cast<std::size_t>((pos % order.size() + steps % order.size()) % order.size())];
  }
};

/// Sattolo's algorithm (a uniformly random cyclic permutation), seeded; n >= 1. The order is
/// recovered by walking the cycle from entry 0, which also checks that it is one cycle
/// (throws std::logic_error otherwise).
ChaseRing make_chase_ring(std::size_t n, std::uint64_t seed);

}  // namespace gpubench
