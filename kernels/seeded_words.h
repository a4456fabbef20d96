// The seeded input data of the device-memory rows as a formula of (seed, index), written once for
// both sides: the device fills its inputs with it (launch_seeded_fill, families/global_memory), and
// the host checks outputs against it (harness/verify.h) without keeping a host copy of the input.
// A 1 GiB input made on the host cost a run about half a second of page faults and a pageable
// upload per row, and a host copy as large as the input for as long as the row lived.
//
// Plain C++ usable in device code: nvcc sees __host__ __device__, the host compiler and the SIMT
// emulation nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define GPUBENCH_HOST_DEVICE __host__ __device__
#else
#define GPUBENCH_HOST_DEVICE
#endif

namespace gpubench::kernels {

/// splitmix64's output function: a well-mixed 64-bit value of `x`.
GPUBENCH_HOST_DEVICE inline std::uint64_t splitmix64_mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The 64 random bits behind element i of the stream `seed` (seekable: any element on its own).
GPUBENCH_HOST_DEVICE inline std::uint64_t seeded_bits(std::uint64_t seed, std::uint64_t i) {
  return splitmix64_mix(seed ^ (i * 0x2545f4914f6cdd1dull));
}

/// The word every output is poisoned with before the runs (harness/verify.h's kPoisonU32, which
/// asserts it is this one): no seeded word or tail byte may equal it, or an element a kernel
/// never wrote would pass its check wherever the expected value happened to be the poison.
constexpr std::uint32_t kSeededNeverWord = 0x7fc0dead;

/// Word i of the seeded words: never zero (zeros hide unwritten outputs and speed up some kernels)
/// and never the poison (one word in 2^31 would be; it gets another bit flipped instead).
GPUBENCH_HOST_DEVICE inline std::uint32_t seeded_word(std::uint64_t seed, std::uint64_t i) {
  const std::uint32_t w = static_cast<std::uint32_t>(seeded_bits(seed, i)) | 1u;
  return w == kSeededNeverWord ? w ^ 2u : w;
}

/// Byte t of the tail after `words` whole words (sizes that are not a multiple of 4): odd and
/// below 0x80, so never the poison's byte at its place (0xad, 0xde, 0xc0 for t = 0, 1, 2; a tail
/// has at most 3 bytes).
GPUBENCH_HOST_DEVICE inline unsigned char seeded_tail_byte(std::uint64_t seed, std::uint64_t words, std::uint64_t t) {
  return static_cast<unsigned char>((splitmix64_mix(seed + words + t) | 1u) & 0x7fu);
}

/// Float i of the seeded floats: k / 2^23 with k = (the top 24 random bits) - 2^23, in [-1, 1).
/// Both steps are exact in binary32 (|k| <= 2^23; a power-of-two scale), so host and device agree
/// bit for bit whatever either compiler contracts or rounds.
GPUBENCH_HOST_DEVICE inline float seeded_float(std::uint64_t seed, std::uint64_t i) {
  const auto k = static_cast<std::int32_t>(seeded_bits(seed, i) >> 40) - (1 << 23);
  return static_cast<float>(k) * (1.0f / 8388608.0f);
}

}  // namespace gpubench::kernels
