// What a bandwidth run costs besides its timed samples, row by row, on the fake CUDA runtime with
// a modelled kernel boundary (2.5 us, an H100's): every quick device-memory row run as gpubench
// runs it (register_cases, Google Benchmark, 3 repetitions), with the calls Google Benchmark
// made, the kernels launched, the CUDA graphs captured and replayed, and the wall, sizing and
// verification seconds the result carries. The table is printed (a report, as scripts/run_cost.py
// gives for a real run); what is asserted are counts, never times: every row verified, and a
// bounded number of graph captures per row whatever number of calls Google Benchmark makes (each
// new batch size is a capture and an instantiation).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "harness/family.h"
#include "tests/cuda/fake_backend.h"
#include "tests/cuda/fake_cuda_runtime.h"
#include "tests/google_benchmark_run.h"

GPUBENCH_FAMILY(global_memory)

namespace gpubench {
namespace {

TEST(FakeRunCost, EveryQuickMemoryRowVerifiedOnceWithBoundedGraphCaptures) {
  fake_cuda::state() = fake_cuda::State{};
  fake_cuda::state().launch_cost_seconds = 2.5e-6;
  int rows = 0;
  {
    fake_backend::FakeBackend backend(families::global_memory::add_cuda_workloads);
    const SweepOptions o = sweep_options(backend.device(), "cuda", true);
    std::printf(
        "| row | calls | kernels | graph captures | graph launches | wall s | sizing s | verify s |\n"
        "|---|---|---|---|---|---|---|---|\n");
    for (const BenchCase& c : families::global_memory::cases(o)) {
      if (!backend.supports(c)) continue;
      SCOPED_TRACE(c.name());
      const fake_cuda::State before = fake_cuda::state();
      RunOutcome outcome;
      const auto reported = test_run::run_rows(backend, {c}, outcome, 3);
      const fake_cuda::State& after = fake_cuda::state();
      ASSERT_EQ(outcome.failed, 0);
      const auto& runs = reported.by_name.at(c.name());
      ASSERT_EQ(runs.size(), 3u);
      const auto& last = runs.back().counters;
      const int calls = static_cast<int>(last.at("calls").value);
      const int captures = after.captures - before.captures;
      EXPECT_EQ(last.at("verified").value, 1);
      EXPECT_GE(calls, 3);  // one per repetition at least, Google Benchmark's trial runs besides
      // A bound on the row, never one per call: the graph of a single operation, at most four
      // sizing rounds, at most two re-sizings in the timed loop (each needs the device 4x faster
      // than before: a busy host that went quiet) and the single operation's graph again after
      // the two batch graphs evicted it. (Quiet runs capture 0-3.)
      EXPECT_LE(captures, 1 + 4 + 2 + 1) << calls << " calls";
      std::printf("| %s | %d | %d | %d | %d | %.3f | %.3f | %.3f |\n", c.name().c_str(), calls,
                  after.kernel_launches - before.kernel_launches, captures,
                  after.graph_launches - before.graph_launches, last.at("wall_s").value, last.at("sizing_s").value,
                  last.at("verify_s").value);
      ++rows;
    }
  }
  EXPECT_GE(rows, 20);
  fake_cuda::state() = fake_cuda::State{};
}

}  // namespace
}  // namespace gpubench
