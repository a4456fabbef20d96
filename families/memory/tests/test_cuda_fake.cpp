// The memory family's CUDA workloads (families/memory/cuda_*.cpp) end to end on the fake CUDA
// runtime with the real launchers (kernels under the SIMT emulation): every row of the real
// table, shrunk, runs and verifies as the runner does it and leaves nothing behind (device,
// managed, pooled, pinned or registered memory); the allocator rows really go through the pool
// the way their names say; managed rows reset and prefetch as documented, skip with a reason
// where the device cannot do them, and never take more than a quarter of free memory; the
// overlap and precision rows report what they claim.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "families/pcie/tests/fake_runtime.h"
#include "harness/cuda/timing.h"
#include "harness/family.h"
#include "tests/cuda/fake_backend.h"
#include "tests/cuda/fake_cuda_runtime.h"

GPUBENCH_FAMILY(memory)

namespace gpubench {
namespace {

std::vector<BenchCase> quick_rows() {
  return families::memory::cases(sweep_options(fake_backend::fake_device(), "cuda", true));
}

// A row shrunk to a small size of the kind it needs (whole pages, whole chunks, odd element counts).
BenchCase shrunk(BenchCase c) {
  if (c.kernel == "overlap")
    c.args["bytes"] = 32.0 * 4096;
  else if (c.kernel == "axpy")
    c.args["bytes"] = 8.0 * 1001;  // 1001 FP64, 2002 FP32, 4004 FP16/BF16 elements
  else if (c.kernel == "managed")
    c.args["bytes"] = 16.0 * 4096;
  else if (c.args.count("bytes") != 0)
    c.args["bytes"] = 65536.0 + 4096;
  return c;
}

// The first row of each key in the quick table.
std::vector<BenchCase> one_row_per_key() {
  std::vector<BenchCase> rows;
  std::set<std::string> seen;
  for (const BenchCase& c : quick_rows())
    if (seen.insert(c.key()).second) rows.push_back(shrunk(c));
  return rows;
}

BenchCase row(const std::string& key) {
  for (const BenchCase& c : one_row_per_key())
    if (c.key() == key) return c;
  throw std::logic_error("no row " + key);
}

class FakeMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_cuda::state() = fake_cuda::State{};
    fake_pcie::state() = fake_pcie::State{};
    fake_pcie::state().device_view_is_host = true;  // the zero-copy row's kernel reads it under the emulation
    free_at_start_ = fake_cuda::state().free_bytes;
  }
  void TearDown() override {
    backend_.reset();
    const fake_cuda::State& st = fake_cuda::state();
    EXPECT_TRUE(st.sizes.empty()) << "device memory leaked";
    EXPECT_TRUE(st.managed.empty()) << "managed memory leaked";
    EXPECT_TRUE(st.registered.empty()) << "a host range stayed registered";
    EXPECT_TRUE(fake_pcie::state().host_allocs.empty()) << "pinned host memory leaked";
    EXPECT_EQ(st.pool_reserved, 0u) << "the pool kept memory after the workload ended";
    EXPECT_EQ(st.free_bytes, free_at_start_) << "free device memory did not come back";
  }
  fake_backend::FakeBackend& backend() {
    if (!backend_) backend_ = std::make_unique<fake_backend::FakeBackend>(families::memory::add_cuda_workloads);
    return *backend_;
  }
  std::unique_ptr<fake_backend::FakeBackend> backend_;
  std::size_t free_at_start_ = 0;
};

TEST_F(FakeMemory, TheCudaTableListsEveryQuestionOfTheIssue) {
  std::set<std::string> kernels;
  for (const BenchCase& c : quick_rows()) kernels.insert(c.kernel);
  EXPECT_EQ(kernels, (std::set<std::string>{"alloc", "alloc_loop", "fragmentation", "managed", "overlap", "axpy"}));
  EXPECT_EQ(one_row_per_key().size(),
            23u);  // 6 allocators, 3 loops, 2 fragmentation, 7 routes, 1 overlap, 4 precisions
}

TEST_F(FakeMemory, EveryRowRunsAndVerifiesLikeTheRunnerAndPoisonReachesItsOutput) {
  for (const BenchCase& c : one_row_per_key()) {
    SCOPED_TRACE(c.name());
    ASSERT_TRUE(backend().supports(c)) << backend().unavailable_reason(c);
    {
      auto w = backend().create(c);
      const Verification v = fake_backend::run_like_the_runner(*w, 3);
      EXPECT_TRUE(v.ok) << v.message;
    }
    // Only the device's shared L2 flush buffer (allocated by the first flushed row) may stay.
    EXPECT_LE(free_at_start_ - fake_cuda::state().free_bytes, 4 * fake_backend::kL2Bytes)
        << "device memory left by " << c.name();
    EXPECT_EQ(fake_cuda::state().pool_reserved, 0u) << "pooled memory left by " << c.name();
  }
}

// Work that never finishes (a hung kernel, copy or migration) after a row was prepared: every
// wait of its run and verification gives up at the limit (DeviceHung) rather than blocking for
// ever (a synchronize, a free, a copy into pageable memory behind the hung work), and the hung
// row, destroyed afterwards, frees nothing (cudaFree would wait): its memory stays allocated.
TEST_F(FakeMemory, AHungRowNeverWaitsWithoutALimit) {
  set_device_wait_limit_seconds(0.05);
  for (const BenchCase& c : one_row_per_key()) {
    SCOPED_TRACE(c.name());
    // A fresh device per row: a hung row's blocks stay allocated, as the runner leaves them.
    SetUp();
    fake_backend::FakeBackend device(families::memory::add_cuda_workloads);
    auto w = device.create(c);
    w->prepare();
    w->poison();
    fake_cuda::state().work_never_finishes = true;
    bool hung = false;
    try {
      (void)w->run(2);
      (void)w->verify();
    } catch (const DeviceHung&) {
      hung = true;
    }
    // Pool and host-memory pairs queue no device work: they may finish.
    if (c.kernel != "alloc") {
      EXPECT_TRUE(hung) << "the row waited for nothing on the device";
    }
    if (hung) {
      const std::size_t allocated = fake_cuda::state().sizes.size() + fake_cuda::state().managed.size();
      w.reset();  // still hung: what its destructors do is counted too
      EXPECT_EQ(fake_cuda::state().sizes.size() + fake_cuda::state().managed.size(), allocated)
          << "a hung row's memory was freed";
    }
    EXPECT_EQ(fake_cuda::state().unbounded_waits_on_hung_work, 0);
    fake_cuda::state().work_never_finishes = false;
    w.reset();
    forget_device_hang();
  }
  set_device_wait_limit_seconds(0);
  forget_device_hang();
  SetUp();  // the fake forgets the hung rows' blocks
}

TEST_F(FakeMemory, AllocationRowsReportTheirPercentiles) {
  auto w = backend().create(row("memory/alloc/cuda_malloc"));
  w->prepare();
  EXPECT_GT(w->run(50), 0.0);
  const auto k = w->extra_counters(1e-6);
  ASSERT_EQ(k.count("p50_us"), 1u);
  ASSERT_EQ(k.count("p99_us"), 1u);
  EXPECT_GT(k.at("p50_us"), 0.0);
  EXPECT_GE(k.at("p99_us"), k.at("p50_us"));
}

TEST_F(FakeMemory, APoolMissGivesItsMemoryBackEveryTimeAndAPoolHitReusesIt) {
  {
    auto w = backend().create(row("memory/alloc/async_pool_miss"));
    w->prepare();
    w->run(10);
    EXPECT_EQ(fake_cuda::state().pool_hits, 0);
    EXPECT_EQ(fake_cuda::state().pool_misses, 11);  // ten timed pairs and the probe
  }
  fake_cuda::state().pool_hits = fake_cuda::state().pool_misses = 0;
  {
    auto w = backend().create(row("memory/alloc/async_pool_hit"));
    w->prepare();
    w->run(10);
    EXPECT_EQ(fake_cuda::state().pool_misses, 1);  // the first allocation only
    EXPECT_EQ(fake_cuda::state().pool_hits, 10);
    EXPECT_GT(fake_cuda::state().pool_reserved, 0u) << "the pool should hold the block between pairs";
  }
  EXPECT_EQ(fake_cuda::state().pool_release_threshold, 0u) << "the pool's threshold was not put back";
}

TEST_F(FakeMemory, HostRegistrationIsUndoneByEveryPair) {
  auto w = backend().create(row("memory/alloc/host_register"));
  w->prepare();
  w->run(5);
  EXPECT_TRUE(fake_cuda::state().registered.empty());
  EXPECT_TRUE(w->verify().ok);
}

// A copy through pageable memory passes the data check too: only the runtime's record of the
// block (cudaPointerGetAttributes) shows whether cudaMallocHost or cudaHostRegister pinned it.
TEST_F(FakeMemory, PinnedRowsFailWhenTheRuntimeSaysTheBlockIsNotPageLocked) {
  for (const char* key : {"memory/alloc/pinned_host", "memory/alloc/host_register"}) {
    SCOPED_TRACE(key);
    fake_cuda::state().pinning_has_no_effect = false;
    {
      auto w = backend().create(row(key));
      w->prepare();
      w->run(3);
      EXPECT_TRUE(w->verify().ok) << w->verify().message;
    }
    fake_cuda::state().pinning_has_no_effect = true;
    auto w = backend().create(row(key));
    w->prepare();
    w->run(3);
    const Verification v = w->verify();
    EXPECT_FALSE(v.ok);
    EXPECT_NE(v.message.find("pageable host memory, not page-locked host memory"), std::string::npos) << v.message;
  }
}

TEST_F(FakeMemory, DeviceAllocationRowsCheckTheBlockIsThisDevicesMemory) {
  for (const char* key : {"memory/alloc/cuda_malloc", "memory/alloc/async_pool_hit", "memory/alloc/preallocated"}) {
    SCOPED_TRACE(key);
    auto w = backend().create(row(key));
    w->prepare();
    w->run(2);
    EXPECT_TRUE(w->verify().ok) << w->verify().message;
  }
}

TEST_F(FakeMemory, AllocateInTheLoopRowsProbeANewBlockEachRunAndTheBaselineDoesNot) {
  for (const char* key : {"memory/alloc_loop/cuda_malloc_each", "memory/alloc_loop/async_pool_each",
                          "memory/alloc_loop/allocated_once"}) {
    SCOPED_TRACE(key);
    auto w = backend().create(row(key));
    w->prepare();
    const int copies = fake_cuda::state().d2d_copies;
    w->run(4);
    EXPECT_EQ(fake_cuda::state().d2d_copies - copies, std::string(key) == "memory/alloc_loop/allocated_once" ? 0 : 1);
    const auto k = w->extra_counters(2e-6);
    EXPECT_DOUBLE_EQ(k.at("us_per_iteration"), 2.0);
  }
}

// The pattern fills the fake's 4 GiB less the 1 GiB reserve: 47 pairs of 1 + 64 MiB (3055 MiB)
// and a 17 MiB ballast, so 4032 MiB (the reserve and the holes) is available at the probe.
TEST_F(FakeMemory, FragmentationFindsTheLargestBlockAndProbesIt) {
  auto w = backend().create(row("memory/fragmentation/cuda_malloc"));
  w->prepare();
  w->poison();
  EXPECT_FALSE(w->verify().ok);
  w->run(1);
  EXPECT_TRUE(w->verify().ok);
  const auto k = w->extra_counters(1e-3);
  EXPECT_EQ(k.at("allocations"), 94.0);
  EXPECT_EQ(k.at("freed_MiB"), 47.0 * 64);
  EXPECT_EQ(k.at("available_MiB"), 4032.0);
  // The fake, like a GPU, maps pages into one virtual range: everything available is one block.
  EXPECT_EQ(k.at("largest_block_pct_of_free"), 100.0);
}

// What is free is read at each probe: memory another process takes after prepare is not counted
// as free (it would read as fragmentation), and the pool row counts what its pool holds unused.
TEST_F(FakeMemory, FragmentationReadsWhatIsFreeAtTheProbe) {
  auto w = backend().create(row("memory/fragmentation/cuda_malloc"));
  w->prepare();
  void* other = nullptr;
  ASSERT_EQ(cudaMalloc(&other, std::size_t{512} << 20), cudaSuccess);  // another process, meanwhile
  w->run(1);
  const auto k = w->extra_counters(1e-3);
  ASSERT_EQ(cudaFree(other), cudaSuccess);
  w.reset();  // its ballast freed
  EXPECT_EQ(k.at("available_MiB"), 4032.0 - 512);
  EXPECT_EQ(k.at("largest_block_pct_of_free"), 100.0);

  auto pool = backend().create(row("memory/fragmentation/async_pool"));
  const Verification v = fake_backend::run_like_the_runner(*pool, 1);
  ASSERT_TRUE(v.ok) << v.message;
  const auto p = pool->extra_counters(1e-3);
  // The freed large blocks stay in the pool (release threshold: the maximum): free to it.
  EXPECT_EQ(p.at("available_MiB"), 4032.0);
  EXPECT_GT(p.at("largest_block_MiB"), 47.0 * 64 - 62);  // what the pool holds, to the bisection's step
}

// An allocator that needs contiguous memory finds only the reserve and the hole beside it: the
// row tells it apart (the pattern no longer leaves untouched memory that any block fits into).
TEST_F(FakeMemory, FragmentationShowsAnAllocatorThatNeedsContiguousMemory) {
  fake_cuda::state().contiguous_malloc = true;
  auto w = backend().create(row("memory/fragmentation/cuda_malloc"));
  w->prepare();
  w->run(2);
  const Verification v = w->verify();
  const auto k = w->extra_counters(1e-3);
  w.reset();
  fake_cuda::state().contiguous_malloc = false;
  EXPECT_TRUE(v.ok) << v.message;
  // The last large hole (64 MiB) and the 1 GiB reserve after it, to the bisection's 62 MiB step.
  EXPECT_LE(k.at("largest_block_MiB"), 1088.0);
  EXPECT_GE(k.at("largest_block_MiB"), 1088.0 - 62.0);
  EXPECT_LT(k.at("largest_block_pct_of_free"), 30.0);
  EXPECT_TRUE(fake_cuda::state().placed.empty()) << "every block freed";
}

TEST_F(FakeMemory, DemandFaultRowsStartEachOperationOnTheHost) {
  auto w = backend().create(row("memory/managed/demand_fault"));
  w->prepare();
  const int before = fake_cuda::state().prefetches;
  w->run(5);
  EXPECT_EQ(fake_cuda::state().prefetches - before, 5) << "one prefetch to the host before each operation";
  const auto k = w->extra_counters(16 * 1e-6);
  EXPECT_DOUBLE_EQ(k.at("us_per_4KiB_page"), 1.0);  // 16 pages in 16 us
  EXPECT_EQ(k.at("pages_4KiB"), 16.0);
}

TEST_F(FakeMemory, PrefetchAndReadMostlyRowsUseTheirCalls) {
  {
    auto w = backend().create(row("memory/managed/prefetch"));
    w->prepare();
    const int before = fake_cuda::state().prefetches;
    w->run(3);
    EXPECT_EQ(fake_cuda::state().prefetches - before, 6);  // to the host (untimed), to the device (timed)
    const auto k = w->extra_counters(1e-3);
    EXPECT_EQ(k.count("prefetch_GB/s"), 1u);
  }
  {
    auto w = backend().create(row("memory/managed/read_mostly"));
    w->prepare();
    EXPECT_EQ(fake_cuda::state().read_mostly_advices, 1);
  }
  {
    auto w = backend().create(row("memory/managed/device_resident"));
    const int before = fake_cuda::state().prefetches;
    w->prepare();
    w->run(4);
    EXPECT_EQ(fake_cuda::state().prefetches - before, 1) << "prefetched once, in prepare()";
  }
}

// A probe whose copy fails (a sticky device error, here) gives its block back before the error
// goes up: a 1 GiB cudaMalloc block left behind was beyond the run's leak tolerance.
TEST_F(FakeMemory, AFailedProbeReleasesItsBlock) {
  auto w = backend().create(row("memory/alloc/cuda_malloc"));
  w->prepare();
  const std::size_t live = fake_cuda::state().sizes.size();
  const std::size_t free_before = fake_cuda::state().free_bytes;
  fake_cuda::state().sticky = cudaErrorIllegalAddress;
  EXPECT_THROW(w->run(2), std::exception);
  fake_cuda::state().sticky = cudaSuccess;
  EXPECT_EQ(fake_cuda::state().sizes.size(), live) << "the probe's block was left allocated";
  EXPECT_EQ(fake_cuda::state().free_bytes, free_before);
}

// A pooled block freed on an error path (a probe's call refused, the context intact) is seen
// complete (a synchronize) before the pool is trimmed: once the row is gone the pool keeps none
// of it (cudaMemPoolTrimTo counts a free the host has not seen complete as in use).
TEST_F(FakeMemory, AFailedProbeOfAPooledRowLeavesNothingInThePool) {
  for (const char* name : {"memory/alloc/async_pool_miss", "memory/alloc/async_pool_hit",
                           "memory/alloc_loop/async_pool_each", "memory/fragmentation/async_pool"}) {
    SCOPED_TRACE(name);
    const std::size_t free_at_start = fake_cuda::state().free_bytes;
    {
      auto w = backend().create(row(name));
      w->prepare();
      fake_cuda::state().failing_memsets = 1;
      EXPECT_THROW(w->run(2), std::exception);
      EXPECT_EQ(fake_cuda::state().failing_memsets, 0) << "no memset was refused";
      fake_cuda::state().failing_memsets = 0;
    }
    EXPECT_EQ(fake_cuda::state().pool_reserved, 0u) << "the pool kept the failed probe's block";
    EXPECT_EQ(fake_cuda::state().free_bytes, free_at_start);
  }
}

// The two-stage routes: an untimed L2 flush between the first stage and the kernel (what the
// prefetch or the copy wrote would otherwise be read from the L2 at 2-32 MiB), and each stage's
// counter from its own event times summed over every operation since the last counters, never
// the repetition's mean less the last sample's first stage.
TEST_F(FakeMemory, TwoStageRoutesFlushBetweenTheStagesAndTimeEachStageOverTheRepetition) {
  for (const char* name : {"memory/managed/prefetch", "memory/managed/explicit_copy"}) {
    SCOPED_TRACE(name);
    auto w = backend().create(row(name));
    w->prepare();
    (void)w->extra_counters(1e-3);  // what prepare() left behind, if anything
    const int before = fake_cuda::state().kernel_launches;
    w->run(3);
    w->run(2);
    const int per_op = std::string(name).find("prefetch") != std::string::npos ? 2 : 3;  // + a flush before the copy
    EXPECT_EQ(fake_cuda::state().kernel_launches - before, 5 * per_op) << "checksum, and a flush before it";
    // A mean per operation below the first stage alone: the kernel's rate still comes from its
    // own events (the subtraction dropped it).
    const auto k = w->extra_counters(1e-15);
    EXPECT_EQ(k.count("kernel_GB/s"), 1u);
    EXPECT_GT(k.at("kernel_GB/s"), 0.0);
    EXPECT_EQ(k.count(std::string(name).find("prefetch") != std::string::npos ? "prefetch_GB/s" : "copy_GB/s"), 1u);
    const auto again = w->extra_counters(1e-3);  // no operation since: no stage rates
    EXPECT_EQ(again.count("kernel_GB/s"), 0u);
  }
}

// read_mostly's reset writes new values on the CPU, so a device that kept its read-only copies
// (a driver that did not drop them) reads old data and fails the checksum, instead of passing
// with the device's speed as read_mostly's.
TEST_F(FakeMemory, ReadMostlyFailsWhereTheDeviceKeepsStaleCopies) {
  auto fresh = backend().create(row("memory/managed/read_mostly"));
  const Verification ok = fake_backend::run_like_the_runner(*fresh, 3);
  EXPECT_TRUE(ok.ok) << ok.message;
  fresh.reset();
  fake_cuda::state().stale_read_mostly_copies = true;
  auto stale = backend().create(row("memory/managed/read_mostly"));
  stale->prepare();
  stale->poison();
  stale->run(2);
  const Verification v = stale->verify();
  stale.reset();
  fake_cuda::state().stale_read_mostly_copies = false;
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.message.rfind("sum of the", 0), 0u) << v.message;
}

TEST_F(FakeMemory, ManagedRowsSkipWhereTheDeviceCannotMigratePagesOrMemoryIsShort) {
  fake_cuda::state().concurrent_managed_access = false;
  {
    auto w = backend().create(row("memory/managed/demand_fault"));
    try {
      w->prepare();
      FAIL() << "expected SkipCase";
    } catch (const SkipCase& e) {
      EXPECT_NE(std::string(e.what()).find("concurrentManagedAccess"), std::string::npos) << e.what();
    }
    // Routes that need no managed memory still run.
    auto zero_copy = backend().create(row("memory/managed/zero_copy"));
    EXPECT_NO_THROW(zero_copy->prepare());
  }
  fake_cuda::state().concurrent_managed_access = true;
  BenchCase big = row("memory/managed/demand_fault");
  big.args["bytes"] = static_cast<double>((fake_cuda::state().free_bytes / 4 / 4096 + 1) * 4096);  // whole pages
  auto w = backend().create(big);
  try {
    w->prepare();
    FAIL() << "expected SkipCase";
  } catch (const SkipCase& e) {
    EXPECT_NE(std::string(e.what()).find("quarter of the free device memory"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fake_cuda::state().managed.empty()) << "nothing allocated before the skip";
}

TEST_F(FakeMemory, OverlapReportsItsStagesAndEfficiency) {
  auto w = backend().create(row("memory/overlap/cuda_streams"));
  const Verification v = fake_backend::run_like_the_runner(*w, 2);
  ASSERT_TRUE(v.ok) << v.message;
  const auto k = w->extra_counters(1e-3);
  EXPECT_GE(k.at("rounds"), 1.0);
  EXPECT_EQ(k.at("copy_engines"), 2.0);
  EXPECT_GT(k.at("serialized_us"), 0.0);
  EXPECT_DOUBLE_EQ(k.at("serialized_us"), k.at("h2d_alone_us") + k.at("kernel_alone_us") + k.at("d2h_alone_us"));
  EXPECT_DOUBLE_EQ(k.at("overlap_efficiency"), k.at("serialized_us") / 1e3);
  EXPECT_GT(k.at("kernel_slowdown"), 0.0);
  EXPECT_GT(k.at("bidir_copy_speedup"), 0.0);
}

TEST_F(FakeMemory, AWrongAxpyElementIsNamed) {
  for (const char* key : {"memory/axpy/fp64", "memory/axpy/bf16"}) {
    SCOPED_TRACE(key);
    auto w = backend().create(row(key));
    ASSERT_TRUE(fake_backend::run_like_the_runner(*w, 2).ok);
    const std::size_t elem = std::string(key) == "memory/axpy/fp64" ? 8 : 2;
    fake_backend::expect_plant_caught(*w, fake_cuda::Plant::last, elem, "element ");
    const auto k = w->extra_counters(1e-3);
    EXPECT_DOUBLE_EQ(k.at("Gelem_per_s"), 8.0 * 1001 / static_cast<double>(elem) / 1e-3 / 1e9);
  }
}

}  // namespace
}  // namespace gpubench
