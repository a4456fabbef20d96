// The pointer-chase ring as a formula of (n, seed), written once for both sides: the device fills
// next[] with it (launch_chase_ring_fill, families/global_memory), the host builds the same ring
// for its own chase and computes where a chase must end without walking it.
//
// The ring visits entries in the order ring_entry(0), ring_entry(1), ..., ring_entry(n - 1) and
// back: ring_entry is a keyed pseudorandom permutation of [0, n), so the ring is ONE cycle through
// every entry by construction, and consecutive entries land far apart (nothing to prefetch). The
// permutation is a 4-round balanced Feistel network over the smallest 2h-bit domain holding n
// (fewer than 4n values), walked until it lands inside [0, n) ("cycle walking", which keeps it a
// permutation of [0, n)); the inverse network gives an entry's position, so
//   next[e] = ring_entry((ring_position(e) + 1) mod n)
// is one independent formula per entry (a parallel fill), and a chase of s steps from e ends at
// ring_entry((ring_position(e) + s) mod n).
//
// Why not Sattolo's shuffle: it is sequential, and a 256 MiB ring cost an H100 run 1.5 s of host
// shuffling and upload per run (H100 run 6); this one is filled on the device in milliseconds.
//
// Plain C++ usable in device code (kernels/seeded_words.h's GPUBENCH_HOST_DEVICE).
#pragma once

#include <cstdint>

#include "kernels/seeded_words.h"

namespace gpubench::kernels {

/// The ring of n entries (1 <= n < 2^32) of one seed: the Feistel half width and round keys.
struct ChaseRing {
  std::uint64_t n = 1;
  int half_bits = 1;  ///< h: the network permutes [0, 2^(2h)), the smallest such domain >= n
  std::uint32_t keys[4] = {};
};

GPUBENCH_HOST_DEVICE inline ChaseRing make_chase_ring_of(std::uint64_t n, std::uint64_t seed) {
  ChaseRing r;
  r.n = n;
  while ((std::uint64_t{1} << (2 * r.half_bits)) < n) ++r.half_bits;
  for (int i = 0; i < 4; ++i) r.keys[i] = static_cast<std::uint32_t>(splitmix64_mix(seed + 0x51ed27ull * (i + 1)));
  return r;
}

/// One round's mixing of a half (murmur3's 32-bit finaliser of the half and the round key).
GPUBENCH_HOST_DEVICE inline std::uint32_t chase_ring_round(std::uint32_t half, std::uint32_t key) {
  std::uint32_t x = half ^ key;
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  return x ^ (x >> 16);
}

/// The network once over [0, 2^(2h)): (L, R) -> (R, L ^ F(R)) four times.
GPUBENCH_HOST_DEVICE inline std::uint64_t chase_ring_forward(const ChaseRing& r, std::uint64_t x) {
  const std::uint32_t mask = static_cast<std::uint32_t>((std::uint64_t{1} << r.half_bits) - 1);
  auto left = static_cast<std::uint32_t>(x >> r.half_bits), right = static_cast<std::uint32_t>(x) & mask;
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t next_right = left ^ (chase_ring_round(right, r.keys[i]) & mask);
    left = right;
    right = next_right;
  }
  return (static_cast<std::uint64_t>(left) << r.half_bits) | right;
}

/// The inverse network: (L, R) -> (R ^ F(L), L), keys in reverse.
GPUBENCH_HOST_DEVICE inline std::uint64_t chase_ring_backward(const ChaseRing& r, std::uint64_t x) {
  const std::uint32_t mask = static_cast<std::uint32_t>((std::uint64_t{1} << r.half_bits) - 1);
  auto left = static_cast<std::uint32_t>(x >> r.half_bits), right = static_cast<std::uint32_t>(x) & mask;
  for (int i = 3; i >= 0; --i) {
    const std::uint32_t previous_left = right ^ (chase_ring_round(left, r.keys[i]) & mask);
    right = left;
    left = previous_left;
  }
  return (static_cast<std::uint64_t>(left) << r.half_bits) | right;
}

/// The entry at ring position p (p < n). The walk ends: the network's cycle through p returns to
/// p < n. It takes 2^(2h) / n < 4 networks on average.
GPUBENCH_HOST_DEVICE inline std::uint32_t ring_entry(const ChaseRing& r, std::uint64_t p) {
  std::uint64_t x = p;
  do {
    x = chase_ring_forward(r, x);
  } while (x >= r.n);
  return static_cast<std::uint32_t>(x);
}

/// The ring position of entry e (e < n): ring_entry's inverse.
GPUBENCH_HOST_DEVICE inline std::uint64_t ring_position(const ChaseRing& r, std::uint32_t e) {
  std::uint64_t x = e;
  do {
    x = chase_ring_backward(r, x);
  } while (x >= r.n);
  return x;
}

/// next[e]: the entry after e on the ring.
GPUBENCH_HOST_DEVICE inline std::uint32_t ring_next(const ChaseRing& r, std::uint32_t e) {
  const std::uint64_t p = ring_position(r, e) + 1;
  return ring_entry(r, p == r.n ? 0 : p);
}

/// Where a chase of `steps` steps from entry e ends.
GPUBENCH_HOST_DEVICE inline std::uint32_t ring_after(const ChaseRing& r, std::uint32_t e, std::uint64_t steps) {
  return ring_entry(r, (ring_position(r, e) + steps % r.n) % r.n);
}

}  // namespace gpubench::kernels
