// Capacity and leaks on the CUDA backend, over the fake runtime: the backend's reading is
// cudaMemGetInfo (free and total in the context), memory_used_bytes is exactly what a workload
// allocated (in prepare and in its timed runs), and a workload that leaves a cudaMalloc
// allocation behind fails the leak check that ends gpubench's run (run_app's steps: read at the
// start, run under Google Benchmark, release the workloads, read at the end).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/context.h"
#include "harness/cuda/device_buffer.h"
#include "harness/memory_check.h"
#include "harness/runner.h"
#include "tests/cuda/fake_backend.h"
#include "tests/cuda/fake_cuda_runtime.h"
#include "tests/google_benchmark_run.h"

namespace gpubench {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kGiB = kMiB << 10;
constexpr std::size_t kPrepareBytes = 40 * kMiB;    // the working set, allocated in prepare()
constexpr std::size_t kWorkspaceBytes = 24 * kMiB;  // a workspace the first run allocates and keeps
constexpr std::size_t kLeakBytes = 96 * kMiB;       // above the 66 MiB tolerance of a 2 GiB device

// Allocations that a leaky workload left behind; the test frees them at its end.
std::vector<void*>& left_behind() {
  static std::vector<void*> v;
  return v;
}

// A workload holding device buffers: its working set from prepare(), a workspace from its
// first run(); a leaky one also cudaMallocs kLeakBytes in prepare() and never frees them.
class HoldingWorkload final : public Workload {
 public:
  HoldingWorkload(const BenchCase& c, Backend& b) : leaks_(c.variant == "leaks") { cuda_device_of(b).activate(); }
  void prepare() override {
    working_set_ = DeviceBuffer(kPrepareBytes);
    if (leaks_) {
      void* p = nullptr;
      ASSERT_EQ(cudaMalloc(&p, kLeakBytes), cudaSuccess);
      left_behind().push_back(p);
    }
  }
  void poison() override {}
  double run(int batch) override {
    if (workspace_.bytes() == 0) workspace_ = DeviceBuffer(kWorkspaceBytes);
    return batch * 1e-5;
  }
  Verification verify() override { return Verification::pass(); }

 private:
  bool leaks_;
  DeviceBuffer working_set_, workspace_;
};

std::unique_ptr<Workload> make_holding(const BenchCase& c, Backend& b) {
  return std::make_unique<HoldingWorkload>(c, b);
}

void add_holding_workloads(WorkloadTable& t) {
  t.add("memory/capacity/holds", &make_holding);
  t.add("memory/capacity/leaks", &make_holding);
}

BenchCase capacity_case(const std::string& variant) {
  BenchCase c;
  c.family = "memory";
  c.kernel = "capacity";
  c.variant = variant;
  c.params = "bytes:40MiB";
  c.work = write_work(static_cast<double>(kPrepareBytes));
  return c;
}

// gpubench's run on a fake 2 GiB device, as run_app does it: the start reading (which the
// context records), the rows under Google Benchmark, every workload released, the end reading
// and the leak check.
struct RunResult {
  std::map<std::string, std::string> context;
  std::map<std::string, test_run::Runs> runs;  // by variant
  std::optional<MemoryReading> start, end;
  MemoryCheck check;
  RunOutcome outcome;
};

class CudaMemoryCheck : public testing::Test {
 protected:
  void SetUp() override {
    saved_total_ = fake_cuda::state().total_bytes;
    saved_free_ = fake_cuda::state().free_bytes;
    fake_cuda::state().total_bytes = 2 * kGiB;
    fake_cuda::state().free_bytes = 2 * kGiB - 300 * kMiB;  // the context and other processes
  }
  void TearDown() override {
    for (void* p : left_behind()) EXPECT_EQ(cudaFree(p), cudaSuccess);
    left_behind().clear();
    fake_cuda::state().total_bytes = saved_total_;
    fake_cuda::state().free_bytes = saved_free_;
  }

  RunResult run(const std::vector<std::string>& variants) {
    fake_backend::FakeBackend backend(&add_holding_workloads);
    RunResult r;
    r.start = backend.memory_reading();
    r.context = result_context(backend, true, r.start);
    std::vector<BenchCase> cases;
    for (const auto& v : variants) cases.push_back(capacity_case(v));
    test_run::Reported reported = test_run::run_rows(backend, cases, r.outcome, 2);
    r.end = backend.memory_reading();
    r.check = check_memory(r.start, r.end);
    for (const auto& c : cases) r.runs[c.variant] = reported.by_name[c.name()];
    return r;
  }

 private:
  std::size_t saved_total_ = 0, saved_free_ = 0;
};

TEST_F(CudaMemoryCheck, TheReadingIsCudaMemGetInfo) {
  fake_backend::FakeBackend backend(&add_holding_workloads);
  const auto r = backend.memory_reading();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->total_bytes, 2 * kGiB);
  EXPECT_EQ(r->free_bytes, 2 * kGiB - 300 * kMiB);
  EXPECT_EQ(r->used_bytes, 300 * kMiB);
  // 1 % of 2 GiB is less than the floor; the flush buffer (2 x L2) comes on top.
  EXPECT_EQ(r->leak_tolerance_bytes, 64 * kMiB + 2 * fake_backend::kL2Bytes);
  const std::string context_free = result_context(backend, false, r).at("memory_free_start_bytes");
  EXPECT_EQ(context_free, std::to_string(2 * kGiB - 300 * kMiB));
}

TEST_F(CudaMemoryCheck, FreeAndTotalInTheContextAndTheCounterIsWhatTheWorkloadAllocated) {
  const RunResult r = run({"holds"});
  EXPECT_EQ(r.context.at("memory_total_bytes"), std::to_string(2 * kGiB));
  EXPECT_EQ(r.context.at("memory_free_start_bytes"), std::to_string(2 * kGiB - 300 * kMiB));
  EXPECT_EQ(r.outcome.failed, 0);
  ASSERT_EQ(r.runs.at("holds").size(), 2u);
  for (const auto& run : r.runs.at("holds")) {
    EXPECT_FALSE(run.error_occurred) << run.error_message;
    EXPECT_EQ(run.counters.at("memory_used_bytes").value, static_cast<double>(kPrepareBytes + kWorkspaceBytes));
  }
  ASSERT_TRUE(r.end.has_value());
  EXPECT_EQ(r.end->free_bytes, r.start->free_bytes) << "everything freed";
  EXPECT_FALSE(r.check.leaked) << r.check.summary;
  EXPECT_EQ(r.check.summary.rfind("ok: device memory in use", 0), 0u) << r.check.summary;
  EXPECT_EQ(end_memory_context(r.end, r.check)[0],
            (std::pair<std::string, std::string>{"memory_free_end_bytes", std::to_string(2 * kGiB - 300 * kMiB)}));
}

TEST_F(CudaMemoryCheck, AWorkloadThatLeavesAnAllocationBehindFailsTheRun) {
  const RunResult r = run({"holds", "leaks"});
  EXPECT_EQ(r.outcome.failed, 0) << "a leak is no verification failure";
  ASSERT_EQ(r.runs.at("leaks").size(), 2u);
  for (const auto& run : r.runs.at("leaks"))
    EXPECT_EQ(run.counters.at("memory_used_bytes").value,
              static_cast<double>(kPrepareBytes + kWorkspaceBytes + kLeakBytes));
  ASSERT_TRUE(r.end.has_value());
  EXPECT_EQ(r.start->free_bytes - r.end->free_bytes, kLeakBytes);
  EXPECT_TRUE(r.check.leaked);
  EXPECT_EQ(r.check.line,
            "gpubench: memory leak: device memory in use (cudaMemGetInfo: total - free) grew from 300.0 MiB at the "
            "start of the run to 396.0 MiB at its end (+96.0 MiB), more than the tolerance of 66.0 MiB: a benchmark "
            "kept memory after its workload was released");
  EXPECT_EQ(r.check.summary.rfind("leak: ", 0), 0u) << r.check.summary;
}

}  // namespace
}  // namespace gpubench
