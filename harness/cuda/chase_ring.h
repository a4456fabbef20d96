// The pointer-chase ring: next[] forming ONE cycle through all n entries, by Sattolo's
// algorithm, and the host reference of the chase. Pure C++: unit tested on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpubench {

/// next[0..n) as a uniformly random cyclic permutation (Sattolo's algorithm: Fisher-Yates with
/// the swap partner drawn strictly below i), seeded; n in [1, 2^32). Following next[] from any
/// entry visits all n entries before returning.
std::vector<std::uint32_t> make_chase_ring(std::size_t n, std::uint64_t seed);

/// The entry reached after `steps` steps p = next[p] from `start` (what the chase kernel
/// writes to its sink). Walks steps mod n steps, which is the same on a single cycle.
std::uint32_t chase_reference(const std::vector<std::uint32_t>& next, std::uint32_t start, std::uint64_t steps);

/// A seeded entry in [0, n) for launch `k` of a batch: launches start at scattered points.
std::uint32_t chase_start(std::size_t n, std::uint64_t seed, int k);

}  // namespace gpubench
