// Input generation, output poisoning and output checks shared by every backend, so a kernel
// is judged by the same rule on a GPU and on the host. Every check reports the first wrong
// index with the expected and actual values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/backend.h"
#include "kernels/seeded_words.h"

namespace gpubench {

/// A quiet-NaN bit pattern: never a valid output of any kernel here, and it survives copies.
constexpr std::uint32_t kPoisonU32 = 0x7fc0dead;
static_assert(kPoisonU32 == kernels::kSeededNeverWord, "the seeded inputs must never equal the poison");

/// Seeded pseudo-random 32-bit words (never all zero), filled in parallel on the host: the words
/// of kernels::seeded_word (and seeded_tail_byte after the last whole word).
void fill_random_u32(void* p, std::size_t bytes, std::uint64_t seed);

/// Inputs named by their seed (kernels/seeded_words.h): the device fills them
/// (kernels::launch_seeded_fill) and the checks below recompute them, so no host copy is kept.
struct SeededWords {
  std::uint64_t seed = 0;  ///< the words of fill_random_u32(p, bytes, seed)
};
struct SeededFloats {
  std::uint64_t seed = 0;  ///< kernels::seeded_float(seed, i): multiples of 2^-23 in [-1, 1)
};
/// The seeded inputs on the host (what the device fill writes; for tests and host references).
void fill_seeded(void* p, std::size_t bytes, SeededWords in);
void fill_seeded(float* p, std::size_t n, SeededFloats in);
/// Seeded uniform floats in [lo, hi), filled in parallel on the host.
void fill_random_float(float* p, std::size_t n, std::uint64_t seed, float lo, float hi);
/// Fills `bytes` with kPoisonU32 words (the byte tail with its leading bytes).
void poison_fill(void* p, std::size_t bytes);

/// out[0..bytes) == in[0..bytes), bytewise.
Verification check_copy(const void* in, const void* out, std::size_t bytes);
Verification check_copy(SeededWords in, const void* out, std::size_t bytes);
/// out[0..n) == the seeded floats, bitwise.
Verification check_copy(SeededFloats in, const float* out, std::size_t n);
/// out[i] == seed + i (mod 2^32).
Verification check_write_pattern(const std::uint32_t* out, std::size_t n, std::uint32_t seed);
/// out[i] == in[i] where i % stride == 0, and out[i] still holds the poison elsewhere.
Verification check_strided(const float* in, const float* out, std::size_t n, int stride);
Verification check_strided(SeededFloats in, const float* out, std::size_t n, int stride);
/// out[i] == in[idx[i]], compared bitwise, and every idx[i] < n.
Verification check_gather(const float* in, const std::uint32_t* idx, const float* out, std::size_t n);
Verification check_gather(SeededFloats in, const std::uint32_t* idx, const float* out, std::size_t n);
/// got == `times` x the wrapping uint32 sum of in[0..n) (mod 2^32): a kernel that read the words
/// `times` times (passes over copies of them).
Verification check_sum_u32(const std::uint32_t* in, std::size_t n, std::uint32_t got, std::uint32_t times = 1);
Verification check_sum_u32(SeededWords in, std::size_t n, std::uint32_t got, std::uint32_t times = 1);
/// |actual - expected| <= abs_tol + rel_tol * |expected| for every element; `what` names the array.
Verification check_close(const double* expected, const float* actual, std::size_t n, double abs_tol, double rel_tol,
                         const std::string& what);
/// next[] is one cycle through all n entries, and sink == the index reached after
/// `steps` steps from `start`.
Verification check_chase(const std::uint32_t* next, std::size_t n, std::uint32_t start, std::size_t steps,
                         std::uint32_t sink);
/// A chase over the seeded ring of (n, seed) (kernels/chase_ring.h) read the ring's entries: each
/// of the min(steps, n) entries a chase from `start` reads holds the ring's successor (so the
/// latency measured is that ring's, whatever else the array holds), and sink is where the ring's
/// chase ends. Costs min(steps, n) formula evaluations, not a walk of the whole ring.
Verification check_chase_path(const std::uint32_t* next, std::size_t n, std::uint64_t seed, std::uint32_t start,
                              std::uint64_t steps, std::uint32_t sink);

/// (Seeded permutations and the chase ring: harness/random.h.)

}  // namespace gpubench
