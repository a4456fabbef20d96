// The CUDA memory workloads run end to end against a host stand-in for the CUDA runtime and
// the launchers (fake_cuda_runtime.cpp): every CUDA row of the memory table is prepared,
// poisoned, warmed up, timed and verified the way the runner does it, and the error paths
// (not capturable, does not fit, wrong output, sticky error) behave as documented. What this
// cannot check is the GPU itself: kernel speed, real capture rules, real event timing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/cuda/cuda_backend.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/device_buffer.h"
#include "harness/cuda/timing.h"
#include "harness/family.h"
#include "harness/model/device.h"
#include "tests/cuda/fake_backend.h"
#include "tests/cuda/fake_cuda_runtime.h"
#include "tests/google_benchmark_run.h"

GPUBENCH_FAMILY(global_memory)

namespace gpubench {
namespace {

// A row timed by plain launches (no graph: a library call that cannot be captured, or a row set
// to stream launches) gets the same untimed first execution as a graphed one, before any event:
// lazy module loading never falls inside its first timed run.
TEST(FakeBatchTimer, PlainLaunchesGetAnUntimedFirstRunBeforeAnyEvent) {
  fake_cuda::state() = fake_cuda::State{};
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    BatchTimer timer(stream);
    timer.use_stream_launches();
    std::vector<std::string> log;
    fake_cuda::state().on_enqueue = [&log](const char* what) { log.emplace_back(what); };
    const EnqueueFn enqueue = [&log](CUstream_st*, int) {
      log.emplace_back("operation");
      return 0;
    };
    EXPECT_GT(timer.time(3, enqueue, nullptr), 0.0);
    ASSERT_FALSE(log.empty());
    EXPECT_EQ(log.front(), "operation");
    EXPECT_EQ(std::count(log.begin(), log.end(), "operation"), 4);  // the untimed one and 3 timed
    EXPECT_FALSE(timer.used_graph());
    (void)timer.time(3, enqueue, nullptr);
    EXPECT_EQ(std::count(log.begin(), log.end(), "operation"), 7);  // once only
    fake_cuda::state().on_enqueue = nullptr;
  }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  fake_cuda::state() = fake_cuda::State{};
}

using fake_backend::find_case;
using fake_backend::kL2Bytes;
using fake_backend::run_like_the_runner;

std::vector<BenchCase> quick_cases() {
  SweepOptions o;
  o.quick = true;
  o.backend_kind = "cuda";
  o.l2_bytes = kL2Bytes;
  o.memory_bytes = std::uint64_t{80} << 30;
  o.sm_count = fake_backend::fake_device().sm_count;  // the fake device's
  return families::global_memory::cases(o);
}

class FakeCuda : public ::testing::Test {
 protected:
  void SetUp() override { fake_cuda::state() = fake_cuda::State{}; }
  void TearDown() override {
    backend_.reset();
    // Everything the workloads and the device allocated was released.
    EXPECT_TRUE(fake_cuda::state().sizes.empty());
    EXPECT_EQ(fake_cuda::state().live_streams, 0);
    EXPECT_EQ(fake_cuda::state().live_graphs, 0);
  }
  fake_backend::FakeBackend& backend() {
    if (!backend_) backend_ = std::make_unique<fake_backend::FakeBackend>(families::global_memory::add_cuda_workloads);
    return *backend_;
  }
  std::unique_ptr<fake_backend::FakeBackend> backend_;
  std::vector<BenchCase> cases_ = quick_cases();
};

// Work that never finishes (a hung kernel): the wait gives up at its limit, the device is lost
// for the rest of the run (the next row is skipped), and the hung row's buffers are left
// allocated (freeing them would wait for the device) - instead of a run that hangs for good.
TEST(FakeHang, WorkThatNeverFinishesLosesTheDeviceWithoutWaitingForIt) {
  fake_cuda::state() = fake_cuda::State{};
  set_device_wait_limit_seconds(0.2);
  {
    fake_backend::FakeBackend backend(families::global_memory::add_cuda_workloads);
    const std::vector<BenchCase> cases = quick_cases();
    const BenchCase first = fake_backend::find_case(cases, "bandwidth/copy/kernel/bytes:64KiB");
    const BenchCase second = fake_backend::find_case(cases, "bandwidth/read/kernel/bytes:64KiB");
    fake_cuda::state().hang_at_first_query = true;  // the row's first wait: its preparation's input fill
    RunOutcome outcome;
    const auto t0 = std::chrono::steady_clock::now();
    const test_run::Reported reported = test_run::run_rows(backend, {first, second}, outcome, 2);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
    EXPECT_TRUE(outcome.device_hung);
    EXPECT_NE(outcome.device_lost.find("did not finish within 0.2 s: a kernel or copy hung"), std::string::npos)
        << outcome.device_lost;
    ASSERT_FALSE(reported.by_name.at(second.name()).empty());
    for (const auto& run : reported.by_name.at(second.name()))
      EXPECT_EQ(run.error_message.rfind("skipped: device lost earlier: ", 0), 0u) << run.error_message;
    EXPECT_FALSE(fake_cuda::state().sizes.empty()) << "the hung row's buffers were freed (a wait on the device)";
    EXPECT_EQ(fake_cuda::state().unbounded_waits_on_hung_work, 0);
    fake_cuda::state().work_never_finishes = fake_cuda::state().hang_at_first_query = false;
  }
  set_device_wait_limit_seconds(0);
  forget_device_hang();
  fake_cuda::state() = fake_cuda::State{};  // the fake forgets the hung row's buffers
}

// A copy into pageable memory returns only once done, after the work queued before it: every
// verification read waits for that work first, within the limit, so a hung kernel before it is
// DeviceHung rather than a copy that never returns.
TEST(FakeHang, AReadBackWaitsForTheWorkBeforeItWithinTheLimit) {
  fake_cuda::state() = fake_cuda::State{};
  set_device_wait_limit_seconds(0.05);
  {
    DeviceBuffer device(4096);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    std::vector<unsigned char> host(4096);
    fake_cuda::state().work_never_finishes = true;
    EXPECT_THROW(copy_to_host(host.data(), device.get(), host.size(), stream), DeviceHung);
    EXPECT_THROW((void)fetch_to_host(device.get(), host.size(), stream), DeviceHung);
    EXPECT_EQ(fake_cuda::state().unbounded_waits_on_hung_work, 0);
    fake_cuda::state().work_never_finishes = false;
    (void)cudaStreamDestroy(stream);
  }
  set_device_wait_limit_seconds(0);
  forget_device_hang();
  fake_cuda::state() = fake_cuda::State{};  // the fake forgets the buffer left allocated
}

TEST_F(FakeCuda, DescriptionFromTheRuntimeAttributes) {
  std::string bus;
  const DeviceDescription d = describe_cuda_device(0, &bus);
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.cc_major, 9);
  EXPECT_EQ(d.cc_minor, 0);
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.sm_clock_kHz, 1980000);
  EXPECT_EQ(d.mem_clock_kHz, 2619000);
  EXPECT_EQ(d.bus_width_bits, 5120);
  EXPECT_EQ(d.l2_bytes, 52428800u);
  EXPECT_EQ(d.memory_bytes, 85045182464ull);
  EXPECT_FALSE(d.geforce);
  EXPECT_EQ(bus, "0000:3B:00.0");
  // 2 x 2619 MHz x 5120 bit / 8 = 3352 GB/s, the formula harness/model/REFERENCE_FIGURES.md
  // quotes for the H100 SXM.
  EXPECT_NEAR(dram_peak_GBps(d.mem_clock_kHz, d.bus_width_bits), 3352.3, 0.1);
  EXPECT_THROW(describe_cuda_device(1, &bus), std::runtime_error);
}

TEST_F(FakeCuda, EveryCudaMemoryRowRunsAndVerifies) {
  std::set<std::string> kernels;
  int flushed = 0, hot = 0;
  for (const BenchCase& c : cases_) {
    if (!backend().supports(c)) continue;
    SCOPED_TRACE(c.name());
    auto w = backend().create(c);
    const Verification v = run_like_the_runner(*w, 3);
    EXPECT_TRUE(v.ok) << v.message;
    kernels.insert(c.kernel + "/" + c.variant);
    const auto counters = w->extra_counters(1e-3);
    const bool dram_library = c.variant != "kernel" && c.work.working_set_bytes >= fake_backend::kL2Bytes / 2.0;
    if (c.needs_flush) {
      ++flushed;
    } else if (dram_library) {
      EXPECT_EQ(counters.at("cuda_graph"), 0.0);  // issued to the stream as a user would
    } else {
      ++hot;
      EXPECT_EQ(counters.at("cuda_graph"), 1.0);  // captured and replayed
    }
    if (c.kernel == "chase") {
      EXPECT_DOUBLE_EQ(counters.at("latency_cycles"), 300.0);  // the fake's 300 cycles per load
      EXPECT_DOUBLE_EQ(counters.at("latency_ns"), 200.0);      // at the 1500 MHz maximum clock
    }
  }
  EXPECT_EQ(kernels.size(), 11u);  // block_set_read among them
  EXPECT_GT(flushed, 0);
  EXPECT_GT(hot, 0);
}

TEST_F(FakeCuda, HotRunsCaptureOnceAndReplayTheGraph) {
  auto w = backend().create(find_case(cases_, "bandwidth/copy/thrust/bytes:4KiB"));
  w->prepare();
  w->poison();
  const auto& s = fake_cuda::state();
  const int filled = s.kernel_launches;  // prepare's input fill
  (void)w->run(5);
  const int captures = s.captures, launches = s.kernel_launches;
  EXPECT_EQ(launches - filled, 1 + 5);  // one plain warm-up execution, then five captured
  for (int i = 0; i < 3; ++i) (void)w->run(5);
  EXPECT_EQ(s.captures, captures);  // the instantiated graph is reused for the same batch
  EXPECT_EQ(s.graph_launches, 4);   // one graph launch per run
  EXPECT_EQ(s.kernel_launches, launches);
  (void)w->run(7);
  EXPECT_EQ(s.captures, captures + 1);  // a new batch size: captured again
  (void)w->run(5);
  EXPECT_EQ(s.captures, captures + 1);  // the last two batch sizes stay instantiated
  (void)w->run(9);
  (void)w->run(5);
  EXPECT_EQ(s.captures, captures + 3);  // 9 evicted 5
  EXPECT_EQ(s.live_graphs, 2);
  EXPECT_TRUE(w->verify().ok);
}

// A cache-resident row of a hand-written streaming kernel: one launch makes several passes,
// calibrated on the first run; `batch` operations are ceil(batch / passes) launches in a graph.
TEST_F(FakeCuda, StreamingKernelsMakeSeveralPassesPerLaunch) {
  const BenchCase& c = find_case(cases_, "bandwidth/copy/kernel/bytes:4KiB");
  ASSERT_FALSE(c.needs_flush);
  ASSERT_EQ(c.slots, 1);
  auto w = backend().create(c);
  w->prepare();
  w->poison();
  (void)w->run(1);  // calibrates
  // Every later launch lasts the minimum (100 us) whatever the host's speed, so the count stays
  // as calibrated: a launch that ran short of it would grow the count for the next run (another
  // test), and on a busy host the calibrating launch can be the slow one (this test failed so).
  fake_cuda::state().launch_cost_seconds = 100e-6;
  (void)w->run(1);  // takes up a growth that run(1)'s own cost-free launch may have asked for
  const int passes = static_cast<int>(w->extra_counters(1e-3).at("passes_per_launch"));
  ASSERT_GE(passes, 1);
  const auto& s = fake_cuda::state();
  const int launches = s.kernel_launches;
  (void)w->run(3 * passes);
  EXPECT_EQ(s.kernel_launches - launches, 3);  // three launches captured into one graph
  (void)w->run(3 * passes);
  EXPECT_EQ(s.kernel_launches - launches, 3);  // replayed, not launched again
  EXPECT_GE(s.graph_launches, 2);
  (void)w->run(3 * passes + 1);
  EXPECT_EQ(s.kernel_launches - launches, 3 + 4);  // a partial launch's worth rounds up
  EXPECT_TRUE(w->verify().ok);
}

// DRAM-sized streaming rows rotate among copies of their buffers (4 x L2 together) instead of
// flushing: no flush read is launched, and every slot is verified.
TEST_F(FakeCuda, DramStreamingRowsRotateAmongSlotsWithoutAFlush) {
  const BenchCase& c = find_case(cases_, "bandwidth/write/kernel/bytes:1MiB");
  ASSERT_FALSE(c.needs_flush);
  ASSERT_EQ(c.slots, 4);  // 4 x 1 MiB of L2 over a 1 MiB working set
  auto w = backend().create(c);
  const Verification ok = run_like_the_runner(*w, 8);
  EXPECT_TRUE(ok.ok) << ok.message;
  const auto counters = w->extra_counters(1e-3);
  EXPECT_EQ(counters.at("slots"), 4.0);
  EXPECT_EQ(static_cast<int>(counters.at("passes_per_launch")) % 4, 0);  // every launch covers every slot
  const int launches = fake_cuda::state().kernel_launches;
  (void)w->run(static_cast<int>(counters.at("passes_per_launch")));
  EXPECT_LE(fake_cuda::state().kernel_launches - launches, 1);  // no flush read beside the write
  // A write that goes wrong in the last slot only is caught there.
  fake_cuda::state().break_write = true;
  auto broken = backend().create(c);
  const Verification bad = run_like_the_runner(*broken, 8);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.message.rfind("slot 3: element 3: ", 0), 0u) << bad.message;
}

TEST_F(FakeCuda, DramSizedLibraryCallsAreIssuedNotCaptured) {
  for (const char* name : {"bandwidth/copy/memcpy_ce/bytes:1MiB", "bandwidth/read/cub/bytes:16MiB"}) {
    SCOPED_TRACE(name);
    auto w = backend().create(find_case(cases_, name));
    const Verification v = run_like_the_runner(*w, 4);
    EXPECT_TRUE(v.ok) << v.message;
    EXPECT_EQ(w->extra_counters(1e-3).at("cuda_graph"), 0.0);
  }
  auto small = backend().create(find_case(cases_, "bandwidth/copy/memcpy_ce/bytes:4KiB"));
  EXPECT_TRUE(run_like_the_runner(*small, 4).ok);
  EXPECT_EQ(small->extra_counters(1e-3).at("cuda_graph"), 1.0);  // cache-resident: still a graph
}

// The library references make one call per operation, each on the next slot, and the rotation
// runs on from batch to batch: any two uses of a slot are slots - 1 other calls apart, also where
// one batch ends and the next begins (restarting at slot 0 with every batch read a slot used a few
// calls before from the L2). Verification reads the slots written since the poison.
TEST_F(FakeCuda, LibraryCallsRotateThroughTheSlotsAcrossBatches) {
  for (const char* name :
       {"bandwidth/copy/memcpy_ce/bytes:1MiB", "bandwidth/copy/thrust/bytes:1MiB", "bandwidth/read/cub/bytes:1MiB"}) {
    SCOPED_TRACE(name);
    const BenchCase& c = find_case(cases_, name);
    ASSERT_GE(c.slots, 2);
    auto w = backend().create(c);
    w->prepare();
    w->poison();
    auto& sources = fake_cuda::state().library_sources;
    sources.clear();  // the preparation's copies into the other slots
    int operations = 0;
    for (int batch : {1, 5, 3, 2 * c.slots + 1, 1, 2}) {
      (void)w->run(batch);
      operations += batch;
    }
    ASSERT_GE(sources.size(), static_cast<std::size_t>(operations));  // warm-ups may add calls
    const auto slots = static_cast<std::size_t>(c.slots);
    std::set<const void*> used;
    for (std::size_t i = 0; i + slots <= sources.size(); ++i) {
      const std::set<const void*> window(sources.begin() + static_cast<std::ptrdiff_t>(i),
                                         sources.begin() + static_cast<std::ptrdiff_t>(i + slots));
      EXPECT_EQ(window.size(), slots) << "calls " << i << " to " << i + slots - 1 << " reuse a slot";
      used.insert(window.begin(), window.end());
    }
    EXPECT_EQ(used.size(), slots);
    EXPECT_TRUE(w->verify().ok);
    // After a poison, a run whose calls left the first slot poisoned (the rotation ran on) is
    // verified in the slots it wrote, not in the first.
    const void* first = *used.begin();  // the lowest address: slot 0
    for (std::size_t tries = 0; tries <= slots; ++tries) {
      w->poison();
      sources.clear();
      (void)w->run(1);
      if (std::find(sources.begin(), sources.end(), first) == sources.end()) break;
    }
    ASSERT_FALSE(sources.empty());
    ASSERT_EQ(std::find(sources.begin(), sources.end(), first), sources.end()) << "every run wrote slot 0";
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << v.message;
  }
}

// With a kernel boundary that costs 20 us (an H100's is 2-3 us), a cache-resident row of a
// streaming kernel is not launch-bound: its passes spread the cost over a launch of 100 us or
// more; a library call per operation pays it every time. DRAM-sized rotating rows meet their
// 200 us minimum launch.
TEST_F(FakeCuda, ResidentRowsAreNotLaunchBoundAndDramRowsMeetTheMinimumLaunch) {
  fake_cuda::state().launch_cost_seconds = 20e-6;
  auto per_op = [&](const char* name, int* passes) {
    auto w = backend().create(find_case(cases_, name));
    w->prepare();
    w->poison();
    (void)w->run(1);  // calibrates
    const auto passes_now = [&] {
      const auto counters = w->extra_counters(1e-3);
      return counters.count("passes_per_launch") ? static_cast<int>(counters.at("passes_per_launch")) : 1;
    };
    const int batch = 8 * passes_now();
    // The fake's clock is the wall clock: the best of a few batches, since a test machine under
    // load only ever adds time (one preempted batch failed the bound below).
    double best = w->run(batch);
    for (int i = 0; i < 4; ++i) best = std::min(best, w->run(batch));
    EXPECT_TRUE(w->verify().ok) << name;
    // The count after those runs: a calibration slowed by a preempted launch stops at fewer
    // passes, and the short launches that follow grow it.
    *passes = passes_now();
    return best / batch;
  };
  int passes = 0, thrust_passes = 0;
  const double kernel_op = per_op("bandwidth/copy/kernel/bytes:4KiB", &passes);
  const double thrust_op = per_op("bandwidth/copy/thrust/bytes:4KiB", &thrust_passes);
  EXPECT_GE(passes, 5);  // at least 100 us per launch of 20 us cost
  // The launch cost is spread over the passes: at least 5 of them put 4 us of it on each. Half of
  // the 20 us leaves room for the emulated copy itself, and for a calibration that a loaded test
  // machine slowed (it then stops at fewer passes).
  EXPECT_LT(kernel_op, 20e-6 / 2);
  EXPECT_GE(thrust_op, 20e-6);  // one launch, one cost, per operation
  EXPECT_EQ(thrust_passes, 1);
  // a rotating DRAM-sized row: one launch of its passes lasts at least 200 us (a batch of `p`
  // operations is exactly one launch). The fake's clock is the host's: a calibration slowed by a
  // loaded machine chose too few passes, and the launch after it then grows the count.
  auto w = backend().create(find_case(cases_, "bandwidth/write/kernel/bytes:1MiB"));
  w->prepare();
  w->poison();
  (void)w->run(1);
  double launch = 0;
  for (int attempt = 0; attempt < 3 && launch < 200e-6 * 0.95; ++attempt) {
    const int p = static_cast<int>(w->extra_counters(1e-3).at("passes_per_launch"));
    launch = w->run(p);
  }
  EXPECT_GE(launch, 200e-6 * 0.95);
  EXPECT_TRUE(w->verify().ok);
}

// A calibration that ran slower than the launches after it (on a GPU: still at idle clocks)
// left every later launch short of the minimum. A short launch grows the pass count for the
// next run, which verifies as before (the last launch's passes are what verify() counts).
TEST_F(FakeCuda, ALaunchShortOfTheMinimumGrowsThePassCountForTheNextRun) {
  for (const char* name : {"bandwidth/read/kernel/bytes:4KiB", "bandwidth/copy/kernel/bytes:4KiB"}) {
    SCOPED_TRACE(name);
    fake_cuda::state().launch_cost_seconds = 150e-6;  // a slow calibration
    auto w = backend().create(find_case(cases_, name));
    w->prepare();
    w->poison();
    (void)w->run(1);                             // calibrates
    fake_cuda::state().launch_cost_seconds = 0;  // the device at full speed from here on
    const int calibrated = static_cast<int>(w->extra_counters(1e-3).at("passes_per_launch"));
    (void)w->run(calibrated);  // one launch, now far short of the minimum
    EXPECT_TRUE(w->verify().ok);
    EXPECT_EQ(w->extra_counters(1e-3).at("passes_per_launch"), calibrated) << "not the run that measured it";
    // The fake's clock is the host's: on a loaded host a preempted launch of the emulated read
    // can itself last the minimum (this test failed so, under two test jobs and a busy loop on two
    // cores), and then only the next short launch asks for more passes. A few tries.
    double passes = calibrated;
    for (int run = 0; run < 5 && passes == calibrated; ++run) {
      (void)w->run(calibrated);
      EXPECT_TRUE(w->verify().ok);
      passes = w->extra_counters(1e-3).at("passes_per_launch");
    }
    EXPECT_GT(passes, calibrated);
  }
}

TEST_F(FakeCuda, FlushedRunsFlushBeforeEveryExecution) {
  const BenchCase& c = find_case(cases_, "bandwidth/gather/kernel/bytes:1MiB");
  ASSERT_TRUE(c.needs_flush);
  auto w = backend().create(c);
  w->prepare();
  w->poison();
  const int before = fake_cuda::state().kernel_launches;
  (void)w->run(4);
  EXPECT_EQ(fake_cuda::state().kernel_launches - before, 1 + 8);  // warm-up, 4 x (flush read + gather)
  (void)w->run(4);
  EXPECT_EQ(fake_cuda::state().kernel_launches - before, 1 + 16);
  EXPECT_EQ(fake_cuda::state().graph_launches, 0);
  EXPECT_TRUE(w->verify().ok);
  EXPECT_EQ(w->extra_counters(1e-3).count("cuda_graph"), 0u);
}

TEST_F(FakeCuda, ALibraryThatSynchronizesFallsBackToStreamLaunches) {
  fake_cuda::state().thrust_synchronizes = true;
  auto w = backend().create(find_case(cases_, "bandwidth/copy/thrust/bytes:4KiB"));
  const Verification v = run_like_the_runner(*w, 4);
  EXPECT_TRUE(v.ok) << v.message;
  EXPECT_EQ(w->extra_counters(1e-3).at("cuda_graph"), 0.0);
  EXPECT_EQ(fake_cuda::state().graph_launches, 0);
}

TEST_F(FakeCuda, AWrongOutputFailsVerificationWithTheIndex) {
  fake_cuda::state().break_write = true;  // the write kernel gets element 3 wrong
  auto w = backend().create(find_case(cases_, "bandwidth/write/kernel/bytes:4KiB"));
  const Verification v = run_like_the_runner(*w, 2);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.message.rfind("element 3: expected ", 0), 0u) << v.message;
}

// The per-SM cache read: a grid of 4 blocks per SM, each block's sum checked, so one block that
// read one word short is named; a row made for another device's grid is an error, not a guess.
TEST_F(FakeCuda, BlockSetReadChecksEveryBlock) {
  const BenchCase c = find_case(cases_, "bandwidth/block_set_read/kernel/bytes:64KiB");
  const int readers = fake_backend::fake_device().sm_count * 4;
  EXPECT_EQ(c.arg("readers"), readers);
  EXPECT_EQ(c.level, "l1");
  EXPECT_EQ(c.work.useful_bytes, 65536.0 * readers);
  auto w = backend().create(c);
  const Verification v = run_like_the_runner(*w, 4);
  EXPECT_TRUE(v.ok) << v.message;
  EXPECT_GE(w->extra_counters(1e-3).at("passes_per_launch"), 1);
  fake_cuda::state().break_block_set_read = true;
  auto broken = backend().create(c);
  const Verification bad = run_like_the_runner(*broken, 4);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.message.rfind("block " + std::to_string(readers - 1) + ": sum of 16384 words", 0), 0u) << bad.message;
  fake_cuda::state().break_block_set_read = false;
  BenchCase other = c;
  other.args["readers"] = readers + 4;  // made for a device with one more SM
  auto mismatched = backend().create(other);
  EXPECT_THROW(mismatched->prepare(), std::logic_error);
}

// Inputs are made on the device and checked against the host's formula, not against a host copy
// of what was uploaded: an input fill that writes one word wrong fails every row that reads it
// (were an input still uploaded from the host, the row would pass).
TEST_F(FakeCuda, AWrongInputFillFailsEveryRowThatReadsIt) {
  const char* const rows[] = {"bandwidth/copy/kernel/bytes:64KiB",
                              "bandwidth/copy/memcpy_ce/bytes:64KiB",
                              "bandwidth/copy/thrust/bytes:64KiB",
                              "bandwidth/read/kernel/bytes:64KiB",
                              "bandwidth/read/cub/bytes:64KiB",
                              "bandwidth/block_set_read/kernel/bytes:64KiB",
                              "bandwidth/strided/kernel/bytes:16MiB,stride:1",
                              "bandwidth/gather/kernel/bytes:1MiB"};
  for (const char* name : rows) {
    SCOPED_TRACE(name);
    fake_backend::verify_with_fault(backend(), cases_, name, &fake_cuda::State::break_seeded_fill);
  }
}

// The chase ring is filled on the device and each chase's end computed from the ring's formula: a
// fill that writes another ring (every entry skipping one) fails the chase at every size.
TEST_F(FakeCuda, AWrongChaseRingFailsTheChase) {
  for (const char* name : {"bandwidth/chase/kernel/bytes:16KiB", "bandwidth/chase/kernel/bytes:1MiB"}) {
    SCOPED_TRACE(name);
    const Verification bad =
        fake_backend::verify_with_fault(backend(), cases_, name, &fake_cuda::State::break_chase_ring);
    EXPECT_NE(bad.message.find("the ring: next["), std::string::npos) << bad.message;
  }
}

// A wrong value at the first, a middle and the last element of what the device returns fails
// verification naming that element, for every row whose check is element by element.
TEST_F(FakeCuda, AWrongValueAnywhereFailsVerificationNamingIt) {
  struct Row {
    const char* name;
    std::size_t elem_bytes;  ///< the unit the check reports ("byte", "element")
    const char* unit;
  };
  for (const Row& r :
       {Row{"bandwidth/copy/kernel/bytes:64KiB", 1, "byte "}, Row{"bandwidth/copy/memcpy_ce/bytes:64KiB", 1, "byte "},
        Row{"bandwidth/write/kernel/bytes:64KiB", 4, "element "},
        Row{"bandwidth/strided/kernel/bytes:16MiB,stride:1", 4, "element "},
        Row{"bandwidth/gather/kernel/bytes:1MiB", 4, "element "}}) {
    for (fake_cuda::Plant where : {fake_cuda::Plant::first, fake_cuda::Plant::middle, fake_cuda::Plant::last}) {
      SCOPED_TRACE(std::string(r.name) + " plant " + std::to_string(static_cast<int>(where)));
      auto w = backend().create(find_case(cases_, r.name));
      w->prepare();
      w->poison();
      for (int i = 0; i < 3; ++i) w->run(2);
      fake_backend::expect_plant_caught(*w, where, r.elem_bytes, r.unit);
    }
  }
}

// The read kernel's partial sums are checked as a total: a wrong partial anywhere fails it.
TEST_F(FakeCuda, AWrongPartialSumFailsTheReadCheck) {
  for (fake_cuda::Plant where : {fake_cuda::Plant::first, fake_cuda::Plant::middle, fake_cuda::Plant::last}) {
    auto w = backend().create(find_case(cases_, "bandwidth/read/kernel/bytes:64KiB"));
    w->prepare();
    w->run(2);
    fake_cuda::state().plant = where;
    fake_cuda::state().plant_min_bytes = 4;
    fake_cuda::state().planted = false;
    const Verification v = w->verify();
    ASSERT_TRUE(fake_cuda::state().planted);
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.message.rfind("sum of ", 0), 0u) << v.message;
    fake_cuda::state().plant = fake_cuda::Plant::none;
  }
}

TEST_F(FakeCuda, PoisonReachesEveryOutputByte) {
  // A strided copy touches every 2nd element: verification checks that the others still hold
  // the poison, so it passes only if poison() covered the whole output.
  auto w = backend().create(find_case(cases_, "bandwidth/strided/kernel/bytes:16MiB,stride:2"));
  const Verification v = run_like_the_runner(*w, 1);
  EXPECT_TRUE(v.ok) << v.message;
  EXPECT_GT(fake_cuda::state().d2d_copies, 0);  // the doubling copies of poison_device
}

TEST_F(FakeCuda, ASizeThatDoesNotFitIsSkipped) {
  fake_cuda::state().free_bytes = 8u << 20;
  auto w = backend().create(find_case(cases_, "bandwidth/copy/kernel/bytes:16MiB"));
  try {
    w->prepare();
    FAIL() << "prepare() did not skip";
  } catch (const SkipCase& e) {
    EXPECT_NE(std::string(e.what()).find("MiB of device memory"), std::string::npos) << e.what();
  }
}

TEST_F(FakeCuda, AStickyErrorIsDeviceLost) {
  auto w = backend().create(find_case(cases_, "bandwidth/gather/kernel/bytes:64KiB"));
  w->prepare();
  w->poison();
  fake_cuda::state().sticky = cudaErrorIllegalAddress;
  EXPECT_THROW((void)w->run(1), DeviceLost);
  w.reset();  // cleanup after a sticky error must not throw
  fake_cuda::state().sticky = cudaSuccess;
}

}  // namespace
}  // namespace gpubench
