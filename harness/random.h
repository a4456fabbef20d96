// Seeded randomness every backend and family shares, written once: the splitmix64 mixer,
// unbiased draws, random permutations (gather indices) and the pointer-chase ring (next[]
// forming ONE cycle through all n entries, kernels/chase_ring.h's formula) with where a chase
// ends. The host builds the ring the CUDA backend fills on the device from the same seed. Pure C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpubench {

/// splitmix64's output function of `x`: a well-mixed 64-bit value, seekable (value i of a stream
/// is splitmix64(seed ^ f(i))), so parallel chunks of a fill are reproducible.
std::uint64_t splitmix64(std::uint64_t x);
/// The next value of the splitmix64 sequence whose state is `state` (advanced).
std::uint64_t splitmix64_next(std::uint64_t& state);
/// Uniform in [0, bound) (bound >= 1) from the sequence `state`, without modulo bias.
std::uint64_t uniform_below(std::uint64_t& state, std::uint64_t bound);

/// idx[0..n) = a uniformly random permutation of 0..n-1 (Fisher-Yates), seeded.
void make_permutation(std::uint32_t* idx, std::size_t n, std::uint64_t seed);

/// next[0..n) of the seeded pointer-chase ring (kernels/chase_ring.h: a keyed pseudorandom
/// order of the entries, one cycle through all of them), filled in parallel; n in [1, 2^32).
/// Following next[] from any entry visits all n entries before returning. The CUDA backend fills
/// the same ring on the device (kernels::launch_chase_ring_fill).
std::vector<std::uint32_t> make_chase_ring(std::size_t n, std::uint64_t seed);

/// The entry that `steps` steps p = next[p] from `start` reach on the ring of (n, seed) (what
/// the chase kernel writes to its sink), from the formula: no walk, whatever the ring's size.
std::uint32_t chase_reference(std::size_t n, std::uint64_t seed, std::uint32_t start, std::uint64_t steps);

/// A seeded entry in [0, n) for launch `k` of a batch: launches start at scattered points.
std::uint32_t chase_start(std::size_t n, std::uint64_t seed, int k);

}  // namespace gpubench
