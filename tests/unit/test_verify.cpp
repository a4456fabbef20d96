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
