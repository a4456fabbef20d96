// The memory family's host workloads (families/memory/host_*.cpp) at small sizes, on the rows of
// the real quick host table: each prepares, runs and verifies; poison() makes verify() fail; the
// counters each row promises are there and hang together; a size that cannot be allocated is a
// skipped case; pages_2m skips with its reason where transparent huge pages are [never]; and the
// vector fp16/bf16 loops equal the reference bit for bit on every input pattern.
// (Every workload's verify() is also proven to fail on one wrong element in
// tests/unit/test_host_verification.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "families/memory/memory.h"
#include "families/memory/reference.h"
#include "harness/family.h"
#include "harness/host/corruptible_output.h"
#include "harness/host/host_backend.h"

GPUBENCH_FAMILY(memory)

namespace gpubench::memory {
// Defined in host_pages.cpp and host_axpy.cpp for these tests (no header of the family exports
// them: the table is the workloads' only way in for everything else).
std::string transparent_hugepage_mode(const std::string& enabled_path);
std::unique_ptr<Workload> make_first_touch_workload(const BenchCase& c, const std::string& thp_enabled_path);
void axpy_range_for_test(kernels::AxpyType type, double a, const void* x, const void* y, void* out, std::size_t begin,
                         std::size_t end);
}  // namespace gpubench::memory

namespace gpubench {
namespace {

constexpr double KiB = 1024, MiB = 1024 * KiB;
constexpr const char* kThpPath = "/sys/kernel/mm/transparent_hugepage/enabled";

std::unique_ptr<Backend> host() { return make_host_backend(host_workloads()); }

// The first row of `key` (family/kernel/variant) in the quick host sweep, with `bytes` bytes.
BenchCase quick_row(const std::string& key, double bytes) {
  SweepOptions o;
  o.quick = true;
  o.backend_kind = "host";
  for (BenchCase c : families::memory::cases(o))
    if (c.key() == key) {
      c.args["bytes"] = bytes;
      return c;
    }
  ADD_FAILURE() << "no host row " << key;
  return {};
}

// A workload of the real host table, prepared.
std::unique_ptr<Workload> prepared(Backend& b, const BenchCase& c) {
  auto w = b.create(c);
  w->prepare();
  return w;
}

// The runner's order: poison, a warm-up, poison again, then the run whose output is verified.
double run_like_the_runner(Workload& w, int batch) {
  w.poison();
  (void)w.run(1);
  w.poison();
  return w.run(batch);
}

// A file holding `text`, removed with the object.
struct TempFile {
  explicit TempFile(const std::string& text) {
    path = ::testing::TempDir() + "thp_enabled_" + std::to_string(reinterpret_cast<std::uintptr_t>(this));
    std::ofstream(path) << text << "\n";
  }
  ~TempFile() { std::remove(path.c_str()); }
  std::string path;
};

// ---- alloc ------------------------------------------------------------------------------------

TEST(MemoryHostAlloc, EveryAllocatorVerifiesAndOrdersItsPercentiles) {
  auto b = host();
  for (const char* variant : {"malloc", "mmap", "pool"})
    for (double bytes : {4 * KiB, MiB + 13}) {
      SCOPED_TRACE(std::string(variant) + " " + std::to_string(bytes));
      auto w = prepared(*b, quick_row(std::string("memory/alloc/") + variant, bytes));
      w->poison();
      EXPECT_FALSE(w->verify().ok) << "no pair has run since the poison";
      const double seconds = run_like_the_runner(*w, 64);
      const Verification v = w->verify();
      EXPECT_TRUE(v.ok) << v.message;
      EXPECT_EQ(dynamic_cast<CorruptibleOutput&>(*w).output_elements(), 64u);  // one record per pair
      const auto k = w->extra_counters(seconds / 64);
      ASSERT_EQ(k.count("p50_us"), 1u);
      ASSERT_EQ(k.count("p99_us"), 1u);
      EXPECT_GT(k.at("p50_us"), 0);
      EXPECT_LE(k.at("p50_us"), k.at("p99_us"));
      EXPECT_LE(k.at("p99_us"), seconds * 1e6);  // no pair longer than the pairs together
    }
}

// The reuse baseline against two system calls per pair: an ordering of medians over 256 pairs
// each (a pop and a push against mmap + munmap, two orders of magnitude apart), not a speed target.
TEST(MemoryHostAlloc, ThePoolsMedianPairIsShorterThanMmaps) {
  auto b = host();
  std::map<std::string, double> p50_us;
  for (const char* variant : {"pool", "mmap"}) {
    auto w = prepared(*b, quick_row(std::string("memory/alloc/") + variant, MiB));
    const double seconds = run_like_the_runner(*w, 256);
    ASSERT_TRUE(w->verify().ok);
    p50_us[variant] = w->extra_counters(seconds / 256).at("p50_us");
  }
  EXPECT_LT(p50_us["pool"], p50_us["mmap"]);
}

TEST(MemoryHostAllocLoop, BothVariantsCopyTheSourceIntoTheRunsDestination) {
  auto b = host();
  for (const char* variant : {"malloc_each", "allocated_once"}) {
    SCOPED_TRACE(variant);
    auto w = prepared(*b, quick_row(std::string("memory/alloc_loop/") + variant, MiB + 5));
    EXPECT_FALSE(w->verify().ok) << "nothing copied yet";
    (void)run_like_the_runner(*w, 4);
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << v.message;
    w->poison();  // the destination the run left, poisoned: what verify() checks must be it
    const Verification poisoned = w->verify();
    EXPECT_FALSE(poisoned.ok);
    EXPECT_EQ(poisoned.message.rfind("byte 0", 0), 0u) << poisoned.message;
    const auto k = w->extra_counters(2.5e-6);
    EXPECT_DOUBLE_EQ(k.at("us_per_iteration"), 2.5);
    EXPECT_GE(k.at("page_faults_per_iteration"), 0);
  }
}

// ---- first_touch ------------------------------------------------------------------------------

TEST(MemoryHostFirstTouch, PagesAreCountedInTheKindOfEachVariantAndTheWordsVerify) {
  auto b = host();
  const std::string thp_mode = memory::transparent_hugepage_mode(kThpPath);
  const bool huge_pages = !thp_mode.empty() && thp_mode != "never";
  // 2 MiB + 5 bytes: 513 pages of 4 KiB (the last one partly), 2 of 2 MiB.
  const std::map<std::string, double> pages = {{"pages_4k", 513}, {"pages_2m", 2}, {"populate", 513}};
  for (const auto& [variant, expected_pages] : pages) {
    SCOPED_TRACE(variant);
    const BenchCase c = quick_row("memory/first_touch/" + variant, 2 * MiB + 5);
    if (variant == "pages_2m" && !huge_pages) {
      EXPECT_THROW(prepared(*b, c), SkipCase);
      continue;
    }
    auto w = prepared(*b, c);
    EXPECT_FALSE(w->verify().ok) << "nothing written yet";
    (void)run_like_the_runner(*w, 3);
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << v.message;
    EXPECT_EQ(dynamic_cast<CorruptibleOutput&>(*w).output_elements(), 513u);  // one word per 4 KiB
    const auto k = w->extra_counters(1e-3);
    EXPECT_DOUBLE_EQ(k.at("pages"), expected_pages);
    EXPECT_DOUBLE_EQ(k.at("us_per_page"), 1000 / expected_pages);
    // MADV_NOHUGEPAGE: every 4 KiB page written faults once.
    if (variant == "pages_4k") {
      EXPECT_GE(k.at("page_faults_per_op"), 513);
    }
    w->poison();
    const Verification poisoned = w->verify();
    EXPECT_FALSE(poisoned.ok);
    EXPECT_EQ(poisoned.message.rfind("page 0 ", 0), 0u) << poisoned.message;
  }
}

TEST(MemoryHostFirstTouch, TheTransparentHugePageModeIsTheBracketedWord) {
  EXPECT_EQ(memory::transparent_hugepage_mode(TempFile("always [madvise] never").path), "madvise");
  EXPECT_EQ(memory::transparent_hugepage_mode(TempFile("[always] madvise never").path), "always");
  EXPECT_EQ(memory::transparent_hugepage_mode(TempFile("always madvise [never]").path), "never");
  EXPECT_EQ(memory::transparent_hugepage_mode(TempFile("always madvise never").path), "");
  EXPECT_EQ(memory::transparent_hugepage_mode(::testing::TempDir() + "no_such_thp_file"), "");
}

TEST(MemoryHostFirstTouch, HugePagesSkipWithTheReasonWhereTransparentHugePagesAreNever) {
  const TempFile never("always madvise [never]");
  const BenchCase huge = quick_row("memory/first_touch/pages_2m", 2 * MiB);
  try {
    memory::make_first_touch_workload(huge, never.path)->prepare();
    ADD_FAILURE() << "pages_2m prepared with THP [never]";
  } catch (const SkipCase& e) {
    const std::string why = e.what();
    EXPECT_NE(why.find("[never]"), std::string::npos) << why;
    EXPECT_NE(why.find(never.path), std::string::npos) << why;
  }
  EXPECT_THROW(memory::make_first_touch_workload(huge, never.path + ".missing")->prepare(), SkipCase);
  // The other variants never ask.
  EXPECT_NO_THROW(
      memory::make_first_touch_workload(quick_row("memory/first_touch/pages_4k", 2 * MiB), never.path)->prepare());
  // [madvise] is enough: the workload asks for huge pages by madvise.
  const TempFile madvise("always [madvise] never");
  auto w = memory::make_first_touch_workload(huge, madvise.path);
  w->prepare();
  (void)run_like_the_runner(*w, 2);
  EXPECT_TRUE(w->verify().ok);
}

// ---- overlap ----------------------------------------------------------------------------------

TEST(MemoryHostOverlap, EveryThreadCountVerifiesAndReportsItsSerializedStages) {
  auto b = host();
  for (double threads : {1.0, 2.0, 3.0, 8.0}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    BenchCase c = quick_row("memory/overlap/host_threads", 4 * (16384 + 4096 + 3));  // 32 uneven chunks
    c.args["threads"] = threads;
    auto w = prepared(*b, c);
    const double seconds = run_like_the_runner(*w, 2);
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << v.message;
    const double per_op = seconds / 2;
    const auto k = w->extra_counters(per_op);
    EXPECT_GE(k.at("rounds"), 1);
    EXPECT_GT(k.at("copy_in_serial_us"), 0);
    EXPECT_GT(k.at("compute_serial_us"), 0);
    EXPECT_GT(k.at("copy_out_serial_us"), 0);
    EXPECT_GT(k.at("overlap_efficiency"), 0);
    const double serialized_us = k.at("copy_in_serial_us") + k.at("compute_serial_us") + k.at("copy_out_serial_us");
    EXPECT_NEAR(k.at("overlap_efficiency"), serialized_us / (per_op * 1e6), 1e-9 * serialized_us / (per_op * 1e6));
    w->poison();
    const Verification poisoned = w->verify();
    EXPECT_FALSE(poisoned.ok);
    EXPECT_EQ(poisoned.message.rfind("element 0 ", 0), 0u) << poisoned.message;
  }
}

// ---- axpy -------------------------------------------------------------------------------------

TEST(MemoryHostAxpy, EveryPrecisionEqualsTheReferenceAtAnOddSize) {
  auto b = host();
  const double bytes = 8 * (4096 + 7) + 2;  // a scalar tail after the vectors in every precision
  for (const char* variant : {"fp64", "fp32", "fp16", "bf16"}) {
    SCOPED_TRACE(variant);
    const BenchCase c = quick_row(std::string("memory/axpy/") + variant, bytes);
    auto w = prepared(*b, c);
    EXPECT_FALSE(w->verify().ok) << "nothing computed yet";
    (void)run_like_the_runner(*w, 3);
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << v.message;
    const double n = std::floor(bytes / c.arg("elem_bytes"));
    EXPECT_EQ(dynamic_cast<CorruptibleOutput&>(*w).output_elements(), static_cast<std::size_t>(n));
    const auto k = w->extra_counters(1e-3);
    EXPECT_DOUBLE_EQ(k.at("Gelem_per_s"), n / 1e-3 / 1e9);
  }
}

// The vector loops against axpy_element for every 16-bit x, with y over zeros, subnormals, the
// smallest normal, +-1, the largest finite value, infinities and the negated half of x (where the
// sum cancels to a subnormal or zero). A NaN result only has to be a NaN (its payload is not the
// reference's business, and the rows never produce one).
void expect_every_pattern_equals_the_reference(kernels::AxpyType type, const std::vector<std::uint16_t>& ys) {
  constexpr std::size_t kPatterns = 1u << 16;
  std::vector<std::uint16_t> x(kPatterns), y(kPatterns), out(kPatterns), want(kPatterns);
  for (std::size_t i = 0; i < kPatterns; ++i) x[i] = static_cast<std::uint16_t>(i);
  const auto to_float = [&](std::uint16_t h) {
    return type == kernels::AxpyType::fp16 ? kernels::half_bits_to_float(h) : memory::bf16_bits_to_float(h);
  };
  const auto from_float = [&](float f) {
    return type == kernels::AxpyType::fp16 ? kernels::float_to_half_bits(f) : memory::float_to_bf16_bits(f);
  };
  std::vector<std::uint16_t> cases = ys;
  cases.push_back(0);  // a marker: y = -x / 2, rounded to the type
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const bool negated_half = k + 1 == cases.size();
    for (std::size_t i = 0; i < kPatterns; ++i)
      y[i] = negated_half ? from_float(-0.5f * to_float(x[i])) : static_cast<std::uint16_t>(cases[k]);
    memory::axpy_range_for_test(type, memory::kAxpyScalar, x.data(), y.data(), out.data(), 0, kPatterns);
    int wrong = 0;
    for (std::size_t i = 0; i < kPatterns && wrong < 5; ++i) {
      memory::axpy_element(type, memory::kAxpyScalar, x.data(), y.data(), want.data(), i);
      const bool nan = std::isnan(to_float(want[i]));
      if (nan ? std::isnan(to_float(out[i])) : out[i] == want[i]) continue;
      ++wrong;
      ADD_FAILURE() << "x 0x" << std::hex << x[i] << ", y 0x" << y[i] << ": expected 0x" << want[i] << ", got 0x"
                    << out[i];
    }
  }
}

TEST(MemoryHostAxpy, TheFp16LoopEqualsTheReferenceOnEveryInputPattern) {
  expect_every_pattern_equals_the_reference(
      kernels::AxpyType::fp16,
      {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x3555, 0xb801});
}

TEST(MemoryHostAxpy, TheBf16LoopEqualsTheReferenceOnEveryInputPattern) {
  expect_every_pattern_equals_the_reference(
      kernels::AxpyType::bf16,
      {0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x3f80, 0xbf80, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x3eab, 0xbf01});
}

// ---- what cannot be allocated -----------------------------------------------------------------

// 1 PiB: beyond the 47-bit user address space, so no allocator can return it whatever the
// overcommit policy; every row must skip, never crash or exhaust memory.
TEST(MemoryHost, ARowThatCannotBeAllocatedIsSkipped) {
  auto b = host();
  const double petabyte = 1024 * 1024 * 1024 * MiB;
  for (const char* key :
       {"memory/alloc/malloc", "memory/alloc/mmap", "memory/alloc/pool", "memory/alloc_loop/malloc_each",
        "memory/alloc_loop/allocated_once", "memory/first_touch/pages_4k", "memory/first_touch/pages_2m",
        "memory/first_touch/populate", "memory/overlap/host_threads", "memory/axpy/fp64", "memory/axpy/bf16"}) {
    SCOPED_TRACE(key);
    auto w = b->create(quick_row(key, petabyte));
    EXPECT_THROW(
        {
          w->prepare();
          (void)run_like_the_runner(*w, 1);
        },
        SkipCase);
  }
}

}  // namespace
}  // namespace gpubench
