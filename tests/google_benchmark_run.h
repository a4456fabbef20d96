// Rows run as gpubench runs them, for the tests of the runner and of the memory check: registered
// by register_cases and run by Google Benchmark itself (RunSpecifiedBenchmarks), with a reporter
// that keeps every per-repetition run, errors included, and the cached workload released at the
// end as run_app releases it.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/runner.h"

namespace gpubench::test_run {

/// Per-repetition runs as Google Benchmark reported them.
using Runs = std::vector<benchmark::BenchmarkReporter::Run>;

/// What one run of the rows gave.
struct Reported {
  int registered = 0;                   ///< what register_cases returned
  std::map<std::string, Runs> by_name;  ///< by registered name (BenchCase::name()); absent: never reported
};

namespace detail {

/// Keeps every per-repetition run Google Benchmark reports, errors included, by registered name.
class Collect final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& reported) override {
    for (const Run& r : reported)
      if (r.run_type == Run::RT_Iteration) runs[r.run_name.function_name].push_back(r);
  }
  std::map<std::string, Runs> runs;
};

}  // namespace detail

/// Registers `rows` on `backend` (their failures and skips counted in `outcome`), runs them
/// under Google Benchmark with `repetitions` repetitions of at least `min_time` seconds each
/// (as --benchmark_min_time spells it), and releases the cached workload.
inline Reported run_rows(Backend& backend, const std::vector<BenchCase>& rows, RunOutcome& outcome, int repetitions,
                         const std::string& min_time = "0.01") {
  benchmark::ClearRegisteredBenchmarks();
  static std::vector<BenchCase> cases;  // must outlive the run
  cases = rows;
  Reported reported;
  reported.registered = register_cases(backend, cases, outcome);
  std::string reps = "--benchmark_repetitions=" + std::to_string(repetitions);
  std::string min_time_flag = "--benchmark_min_time=" + min_time;
  std::string unit_flag = "--benchmark_time_unit=us";  // as gpubench's init_google_benchmark sets it
  std::vector<char*> argv = {const_cast<char*>("test"), reps.data(), min_time_flag.data(), unit_flag.data()};
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  detail::Collect collect;
  benchmark::RunSpecifiedBenchmarks(&collect);
  release_cached_workload();
  benchmark::ClearRegisteredBenchmarks();
  reported.by_name = std::move(collect.runs);
  return reported;
}

}  // namespace gpubench::test_run
