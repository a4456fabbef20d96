// Every host workload's verification is proven to fail: after the warm-up and the timed runs
// (poisoned in between, as the runner does) a wrong value is planted at the first, a middle and
// the last element of the output (harness/host/corruptible_output.h), and verify() must fail
// naming that element; the intact output passes. And poison() really destroys a good output:
// verify() fails right after it. Every workload of the host table is covered (a new one without
// the seam fails here), on the rows of the real case tables at small, odd sizes.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/family.h"
#include "harness/host/corruptible_output.h"
#include "harness/host/host_backend.h"
#include "harness/host/parallel.h"

namespace gpubench {
namespace {

// What verify() names for output element i of each host workload (by family/kernel/variant).
// Read and chase have no per-element output: read checks the total of its per-thread partial
// sums, chase the one index it ends on; their messages give the expected and the wrong value.
std::string named_element(const std::string& key, std::size_t i) {
  if (key == "bandwidth/copy/kernel" || key == "bandwidth/copy/memcpy" || key == "bandwidth/pcie_h2d/pageable_memcpy" ||
      key == "bandwidth/pcie_d2h/pageable_memcpy")
    return "byte " + std::to_string(i);
  if (key == "roofline/intensity_fp16x2/kernel" || key == "compute/peak_fp16x2_hfma2/kernel")
    return "word " + std::to_string(i);
  if (key == "bandwidth/read/kernel") return "sum of";
  if (key == "bandwidth/block_set_read/kernel") return "thread " + std::to_string(i);  // each thread's own sum
  if (key == "bandwidth/chase/kernel") return "after";
  // The memory family: the block each allocate + free pair got, the copy of an alloc loop, the
  // word read back from each 4 KiB page of a first touch.
  if (key.rfind("memory/alloc/", 0) == 0) return "op " + std::to_string(i);
  if (key.rfind("memory/alloc_loop/", 0) == 0) return "byte " + std::to_string(i);
  if (key.rfind("memory/first_touch/", 0) == 0) return "page " + std::to_string(i);
  return "element " + std::to_string(i);  // write, strided, gather, intensity, peak FP32, overlap, axpy
}

// The message starts by naming `what` ("element 12", never "element 123" for "element 12").
::testing::AssertionResult names(const std::string& message, const std::string& what) {
  if (message.rfind(what, 0) == 0 &&
      (message.size() == what.size() || !std::isdigit(static_cast<unsigned char>(message[what.size()]))))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << message << "' does not start by naming '" << what << "'";
}

// A row of the real host table, shrunk to a small odd size (a tail that is no multiple of the
// vector width or the word) so the last element is a tail element.
BenchCase small_row(BenchCase c) {
  if (c.args.count("n") != 0) {
    c.args["n"] = 4099;
    c.args["bytes"] = 4.0 * 4099;
  } else if (c.args.count("bytes") != 0) {
    const bool bytewise = named_element(c.key(), 0) == "byte 0";
    c.args["bytes"] = bytewise ? 65536.0 + 4096 + 13 : 4.0 * (16384 + 4096 + 3);
  }
  return c;
}

// One row per host workload: the first of its key in the quick host sweep (for strided, a stride
// above 1, so the output holds elements the kernel must leave poisoned).
std::vector<BenchCase> one_row_per_host_workload(const Backend& b) {
  std::map<std::string, BenchCase> rows;
  for (const BenchCase& c : all_cases(sweep_options(b.device(), "host", true))) {
    if (!b.supports(c) || rows.count(c.key()) != 0) continue;
    if (c.kernel == "strided" && c.arg("stride") < 8) continue;
    rows.emplace(c.key(), small_row(c));
  }
  std::vector<BenchCase> out;
  out.reserve(rows.size());
  for (auto& [key, c] : rows) out.push_back(c);
  return out;
}

// The runner's sequence on a workload: poison, warm-up, poison, timed runs.
void warm_up_and_time(Workload& w) {
  w.poison();
  (void)w.run(1);
  w.poison();
  for (int i = 0; i < 2; ++i) (void)w.run(3);
}

std::unique_ptr<Backend> host() { return make_host_backend(host_workloads()); }

// Prepares `w`; false only where the row skips because the machine lacks what it measures
// (huge pages where transparent huge pages are [never]); any other skip fails the test.
bool prepared_here(Workload& w, const BenchCase& c) {
  try {
    w.prepare();
    return true;
  } catch (const SkipCase& e) {
    if (c.key() != "memory/first_touch/pages_2m") throw;
    std::printf("%s skipped here: %s\n", c.name().c_str(), e.what());
    return false;
  }
}

TEST(HostVerification, EveryHostWorkloadIsCovered) {
  auto b = host();
  std::set<std::string> keys;
  for (const BenchCase& c : one_row_per_host_workload(*b)) keys.insert(c.key());
  std::set<std::string> expected = {"bandwidth/copy/kernel",
                                    "bandwidth/copy/memcpy",
                                    "bandwidth/read/kernel",
                                    "bandwidth/block_set_read/kernel",
                                    "bandwidth/write/kernel",
                                    "bandwidth/strided/kernel",
                                    "bandwidth/gather/kernel",
                                    "bandwidth/chase/kernel",
                                    "bandwidth/pcie_h2d/pageable_memcpy",
                                    "bandwidth/pcie_d2h/pageable_memcpy",
                                    "roofline/intensity_fp32/kernel",
                                    "compute/peak_fp32_fma/kernel",
                                    "memory/alloc/malloc",
                                    "memory/alloc/mmap",
                                    "memory/alloc/pool",
                                    "memory/alloc_loop/malloc_each",
                                    "memory/alloc_loop/allocated_once",
                                    "memory/first_touch/pages_4k",
                                    "memory/first_touch/pages_2m",
                                    "memory/first_touch/populate",
                                    "memory/overlap/host_threads",
                                    "memory/axpy/fp64",
                                    "memory/axpy/fp32",
                                    "memory/axpy/fp16",
                                    "memory/axpy/bf16"};
  const bool fp16 = keys.count("roofline/intensity_fp16x2/kernel") != 0;  // where the CPU has it
  if (fp16) expected.insert({"roofline/intensity_fp16x2/kernel", "compute/peak_fp16x2_hfma2/kernel"});
  EXPECT_EQ(keys, expected);
}

TEST(HostVerification, AWrongFirstMiddleOrLastElementFailsNamingIt) {
  auto b = host();
  for (const BenchCase& c : one_row_per_host_workload(*b)) {
    SCOPED_TRACE(c.name());
    auto w = b->create(c);
    auto* seam = dynamic_cast<CorruptibleOutput*>(w.get());
    ASSERT_NE(seam, nullptr) << "the workload has no test seam (harness/host/corruptible_output.h)";
    if (!prepared_here(*w, c)) continue;
    warm_up_and_time(*w);
    const Verification intact = w->verify();
    ASSERT_TRUE(intact.ok) << intact.message;
    const std::size_t n = seam->output_elements();
    ASSERT_GT(n, 0u);
    const std::set<std::size_t> where = {0, n / 2, n - 1};
    EXPECT_EQ(where.size(), std::min<std::size_t>(n, 3));  // distinct places, where there are three
    for (std::size_t i : where) {
      SCOPED_TRACE("element " + std::to_string(i) + " of " + std::to_string(n));
      warm_up_and_time(*w);
      ASSERT_TRUE(w->verify().ok);
      seam->corrupt_output_for_test(i);
      const Verification v = w->verify();
      EXPECT_FALSE(v.ok);
      EXPECT_TRUE(names(v.message, named_element(c.key(), i)));
      // One value, no index to name: the message gives the expected value and the planted one.
      std::string expected, got;
      if (c.key() == "bandwidth/read/kernel") {
        ASSERT_TRUE(RE2::FullMatch(v.message, "sum of [0-9]+ words: expected 0x([0-9a-f]+), got 0x([0-9a-f]+)",
                                   &expected, &got))
            << v.message;
        EXPECT_EQ(std::stoul(got, nullptr, 16), (std::stoul(expected, nullptr, 16) + 1) & 0xffffffffu) << v.message;
      } else if (c.key() == "bandwidth/chase/kernel") {
        ASSERT_TRUE(RE2::FullMatch(v.message, "after [0-9]+ steps from entry 0 expected entry ([0-9]+), got ([0-9]+)",
                                   &expected, &got))
            << v.message;
        EXPECT_EQ(std::stoul(got), std::stoul(expected) ^ 1u) << v.message;
      }
    }
  }
}

// A good output, then poison(): verify() must fail (at the first element, where one is named),
// so an output left unwritten by the timed runs can never pass on what an earlier run wrote.
TEST(HostVerification, PoisonDestroysAGoodOutput) {
  auto b = host();
  for (const BenchCase& c : one_row_per_host_workload(*b)) {
    SCOPED_TRACE(c.name());
    auto w = b->create(c);
    if (!prepared_here(*w, c)) continue;
    warm_up_and_time(*w);
    ASSERT_TRUE(w->verify().ok);
    w->poison();
    const Verification v = w->verify();
    EXPECT_FALSE(v.ok);
    const std::string first = named_element(c.key(), 0);
    if (first == "element 0" || first == "word 0") {
      EXPECT_TRUE(names(v.message, first));  // element 0 holds the poison
    }
  }
}

// A read of fewer words than one 64-word chunk per host thread leaves threads without a chunk:
// their partial sums must count as nothing, not as the poison (on a machine of more than 16 CPUs
// the 4 KiB row is such a read).
TEST(HostVerification, AReadSmallerThanOneChunkPerThreadVerifies) {
  auto b = host();
  for (const BenchCase& row : one_row_per_host_workload(*b)) {
    if (row.key() != "bandwidth/read/kernel") continue;
    for (double words : {1.0, 63.0, 64.0, 65.0, 64.0 * host_threads() - 1}) {
      BenchCase c = row;
      c.args["bytes"] = 4 * words;
      SCOPED_TRACE(std::to_string(words) + " words");
      auto w = b->create(c);
      w->prepare();
      warm_up_and_time(*w);
      const Verification v = w->verify();
      EXPECT_TRUE(v.ok) << v.message;
    }
    return;
  }
  FAIL() << "no bandwidth/read/kernel row on the host";
}

}  // namespace
}  // namespace gpubench
