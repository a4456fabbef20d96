// The shared output checks must catch what they exist to catch.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "harness/random.h"
#include "harness/verify.h"

namespace gpubench {
namespace {

TEST(Verify, RandomFillIsSeededAndNeverZero) {
  std::vector<std::uint32_t> a(10001), b(10001), c(10001);
  fill_random_u32(a.data(), a.size() * 4, 7);
  fill_random_u32(b.data(), b.size() * 4, 7);
  fill_random_u32(c.data(), c.size() * 4, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (auto v : a) ASSERT_NE(v, 0u);
}

TEST(Verify, CopyFindsTheFirstWrongByte) {
  std::vector<unsigned char> in(1000), out;
  fill_random_u32(in.data(), in.size(), 1);
  out = in;
  EXPECT_TRUE(check_copy(in.data(), out.data(), in.size()).ok);
  out[777] ^= 1;
  out[900] ^= 1;
  const Verification v = check_copy(in.data(), out.data(), in.size());
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("byte 777"), std::string::npos) << v.message;
}

TEST(Verify, StridedRequiresUntouchedPoison) {
  const std::size_t n = 1001;
  std::vector<float> in(n), out(n);
  fill_random_float(in.data(), n, 3, -1, 1);
  poison_fill(out.data(), n * 4);
  for (std::size_t i = 0; i < n; i += 4) out[i] = in[i];
  EXPECT_TRUE(check_strided(in.data(), out.data(), n, 4).ok);
  out[5] = 1.0f;  // an element the kernel must not touch
  const Verification v = check_strided(in.data(), out.data(), n, 4);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("element 5"), std::string::npos) << v.message;
}

TEST(Verify, GatherAndPermutation) {
  const std::size_t n = 4099;
  std::vector<std::uint32_t> idx(n);
  make_permutation(idx.data(), n, 11);
  std::vector<bool> seen(n);
  for (auto i : idx) seen.at(i) = true;
  for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(seen[i]);
  std::vector<float> in(n), out(n);
  fill_random_float(in.data(), n, 3, 0, 1);
  for (std::size_t i = 0; i < n; ++i) out[i] = in[idx[i]];
  EXPECT_TRUE(check_gather(in.data(), idx.data(), out.data(), n).ok);
  std::swap(out[10], out[11]);
  EXPECT_FALSE(check_gather(in.data(), idx.data(), out.data(), n).ok);
}

TEST(Verify, SingleCycleAndChase) {
  const std::size_t n = 1000;
  std::vector<std::uint32_t> next = make_chase_ring(n, 5);
  std::uint32_t p = 0;
  for (int i = 0; i < 1234; ++i) p = next[p];
  EXPECT_TRUE(check_chase(next.data(), n, 0, 1234, p).ok);
  EXPECT_FALSE(check_chase(next.data(), n, 0, 1235, p).ok);
  std::swap(next[0], next[1]);  // now two cycles (or a self loop): not one ring
  EXPECT_FALSE(check_chase(next.data(), n, 0, 1234, p).ok);
}

// The device ring's check: the entries a chase reads must be the ring's, so a ring whose chase
// happens to end where the ring's would (every chase of a multiple of n steps ends at its start)
// still fails; entries the chase never reads do not matter to what it measured.
TEST(Verify, ChasePathOfTheSeededRing) {
  const std::size_t n = 4096;
  const std::uint64_t seed = 11, steps = 65536;  // a multiple of n: the end is the start
  std::vector<std::uint32_t> next = make_chase_ring(n, seed);
  const std::uint32_t start = 123;
  EXPECT_TRUE(check_chase_path(next.data(), n, seed, start, steps, start).ok);
  EXPECT_FALSE(check_chase_path(next.data(), n, seed, start, steps, next[start]).ok);
  EXPECT_EQ(check_chase_path(next.data(), n, seed, start, 5, next[start]).message,
            "after 5 steps from entry 123 expected entry " + std::to_string(chase_reference(n, seed, start, 5)) +
                ", got " + std::to_string(next[start]));
  // Every entry its own successor: the chase ends at its start, as the ring's does; the path fails.
  std::vector<std::uint32_t> loops(n);
  for (std::uint32_t e = 0; e < n; ++e) loops[e] = e;
  const Verification v = check_chase_path(loops.data(), n, seed, start, steps, start);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.message.rfind("the ring: next[123] = 123, expected " + std::to_string(next[start]), 0), 0u) << v.message;
  // A short chase reads only its first entries: a wrong entry beyond them is not its business.
  std::uint32_t p = start;
  for (int i = 0; i < 10; ++i) p = next[p];
  std::vector<std::uint32_t> off_path = next;
  off_path[p] ^= 1u;
  EXPECT_TRUE(check_chase_path(off_path.data(), n, seed, start, 10, chase_reference(n, seed, start, 10)).ok);
  EXPECT_FALSE(check_chase_path(off_path.data(), n, seed, start, 11, chase_reference(n, seed, start, 11)).ok);
  EXPECT_FALSE(check_chase_path(next.data(), n, seed, static_cast<std::uint32_t>(n), 1, 0).ok);
}

TEST(Verify, SumAndWritePattern) {
  std::vector<std::uint32_t> v(1000);
  fill_random_u32(v.data(), v.size() * 4, 9);
  std::uint32_t s = 0;
  for (auto x : v) s += x;
  EXPECT_TRUE(check_sum_u32(v.data(), v.size(), s).ok);
  EXPECT_FALSE(check_sum_u32(v.data(), v.size(), s + 1).ok);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint32_t>(42 + i);
  EXPECT_TRUE(check_write_pattern(v.data(), v.size(), 42).ok);
  v[999] = kPoisonU32;
  EXPECT_FALSE(check_write_pattern(v.data(), v.size(), 42).ok);
}

// The seeded inputs (kernels/seeded_words.h): the checks recompute them from the seed, agree
// with the host fill of the same seed, and name the first wrong byte or element.
TEST(Verify, SeededChecksRecomputeTheInputs) {
  const std::size_t bytes = 4 * 2503 + 3;  // a byte tail
  std::vector<unsigned char> w(bytes);
  fill_seeded(w.data(), bytes, SeededWords{21});
  std::vector<unsigned char> host(bytes);
  fill_random_u32(host.data(), bytes, 21);
  EXPECT_EQ(w, host);  // one formula: the host fill of the same seed
  EXPECT_TRUE(check_copy(SeededWords{21}, w.data(), bytes).ok);
  EXPECT_FALSE(check_copy(SeededWords{22}, w.data(), bytes).ok);
  for (std::size_t at : {std::size_t{0}, std::size_t{4 * 1000 + 2}, bytes - 1}) {
    std::vector<unsigned char> bad = w;
    bad[at] ^= 0x10;
    const Verification v = check_copy(SeededWords{21}, bad.data(), bytes);
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.message.rfind("byte " + std::to_string(at) + " of " + std::to_string(bytes) + ": ", 0), 0u)
        << v.message;
  }

  // Never the poison: an unwritten element is caught wherever it is. Word 0 of this seed is
  // the poison before the swap (found by search), and tail bytes never match a poison byte.
  constexpr std::uint64_t kPoisonAtWord0 = 0x19f4fcb3ull;
  EXPECT_EQ(static_cast<std::uint32_t>(kernels::seeded_bits(kPoisonAtWord0, 0)) | 1u, kPoisonU32);
  EXPECT_NE(kernels::seeded_word(kPoisonAtWord0, 0), kPoisonU32);
  unsigned char poison[4];
  std::memcpy(poison, &kPoisonU32, 4);
  for (std::uint64_t s = 0; s < 4096; ++s)
    for (std::uint64_t t = 0; t < 3; ++t) ASSERT_NE(kernels::seeded_tail_byte(s, 17, t), poison[t]) << s;

  const std::size_t n = 3001;
  std::vector<float> f(n);
  fill_seeded(f.data(), n, SeededFloats{5});
  EXPECT_TRUE(check_copy(SeededFloats{5}, f.data(), n).ok);
  f[1234] = -f[1234];
  const Verification v = check_copy(SeededFloats{5}, f.data(), n);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.message.rfind("element 1234 of 3001: ", 0), 0u) << v.message;
  f[1234] = -f[1234];

  std::vector<float> out(n);
  poison_fill(out.data(), n * 4);
  for (std::size_t i = 0; i < n; i += 3) out[i] = f[i];
  EXPECT_TRUE(check_strided(SeededFloats{5}, out.data(), n, 3).ok);
  out[4] = f[4];  // an element the kernel must not touch
  EXPECT_NE(check_strided(SeededFloats{5}, out.data(), n, 3).message.find("element 4 (not to be touched)"),
            std::string::npos);

  std::vector<std::uint32_t> idx(n);
  make_permutation(idx.data(), n, 2);
  for (std::size_t i = 0; i < n; ++i) out[i] = f[idx[i]];
  EXPECT_TRUE(check_gather(SeededFloats{5}, idx.data(), out.data(), n).ok);
  std::swap(out[10], out[11]);
  EXPECT_FALSE(check_gather(SeededFloats{5}, idx.data(), out.data(), n).ok);
  std::swap(out[10], out[11]);
  idx[77] = static_cast<std::uint32_t>(n);  // an index the permutation must never hold
  EXPECT_EQ(check_gather(SeededFloats{5}, idx.data(), out.data(), n).message,
            "element 77: index 3001 is out of range (n = 3001)");

  std::vector<std::uint32_t> words(n);
  fill_seeded(words.data(), n * 4, SeededWords{9});
  std::uint32_t sum = 0;
  for (auto x : words) sum += x;
  EXPECT_TRUE(check_sum_u32(SeededWords{9}, n, sum * 3, 3).ok);
  EXPECT_FALSE(check_sum_u32(SeededWords{9}, n, sum * 3 + 1, 3).ok);
}

TEST(Verify, CloseRejectsNaNAndOutOfTolerance) {
  const double expected[3] = {1.0, 2.0, 3.0};
  float actual[3] = {1.0f, 2.001f, 3.0f};
  EXPECT_TRUE(check_close(expected, actual, 3, 0, 1e-3, "C").ok);
  EXPECT_FALSE(check_close(expected, actual, 3, 0, 1e-4, "C").ok);
  std::uint32_t poison = kPoisonU32;
  std::memcpy(&actual[2], &poison, 4);
  const Verification v = check_close(expected, actual, 3, 1, 1, "C");
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("C[2]"), std::string::npos);
}

}  // namespace
}  // namespace gpubench
