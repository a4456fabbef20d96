// gpubench's console reporter for Google Benchmark: a short header about the device, one line
// per benchmark (harness/console_table.h) grouped by family, progress with an ETA on stderr, and
// the rows kept for the closing summary. Google Benchmark's banner, its context dump and its
// DEBUG-build warning are not printed: the result file keeps the full context.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "harness/console_table.h"

namespace gpubench {

class ConsoleReporter : public benchmark::BenchmarkReporter {
 public:
  /// `header`: the lines printed first; `total`: benchmarks registered (progress n of N);
  /// `progress`: whether to draw progress on `progress_stream`, `progress_is_terminal`: redraw
  /// one line in place (else one line per benchmark).
  ConsoleReporter(std::vector<std::string> header, int total, bool progress, bool progress_is_terminal,
                  std::FILE* progress_stream = stderr);

  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  /// Every benchmark reported so far (complete after Finalize).
  const std::vector<BenchmarkLine>& lines() const { return lines_; }

 private:
  void take(const Run& run);
  void flush();  ///< prints the pending benchmark's line and moves progress on
  void draw_progress(const std::string& last);

  std::vector<std::string> header_;
  int total_;
  bool progress_, terminal_;
  std::FILE* progress_stream_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  BenchmarkLine pending_;
  bool has_pending_ = false;
  std::vector<double> aggregate_median_, aggregate_cv_;  ///< when only aggregates are reported
  std::vector<BenchmarkLine> lines_;
  std::string family_;
  int done_ = 0;
  std::vector<double> peak_, cublas_;  ///< pct_of_peak, pct_of_cublas of the pending repetitions
};

}  // namespace gpubench
