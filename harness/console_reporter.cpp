#include "harness/console_reporter.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <utility>

namespace gpubench {

namespace {

double counter(const benchmark::BenchmarkReporter::Run& run, const std::string& name, double fallback = -1) {
  auto it = run.counters.find(name);
  return it == run.counters.end() ? fallback : static_cast<double>(it->second);
}

double median_or(std::vector<double> v, double fallback) {
  if (v.empty()) return fallback;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string clock_text(double seconds) {
  const long s = std::lround(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

// The benchmark's name without the "/manual_time" Google Benchmark appends.
std::string plain_name(const benchmark::BenchmarkReporter::Run& run) {
  std::string n = run.run_name.str();
  const std::string suffix = "/manual_time";
  if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
    n.resize(n.size() - suffix.size());
  return n;
}

}  // namespace

ConsoleReporter::ConsoleReporter(std::vector<std::string> header, int total, bool progress, bool progress_is_terminal,
                                 std::FILE* progress_stream)
    : header_(std::move(header)),
      total_(total),
      progress_(progress),
      terminal_(progress_is_terminal),
      progress_stream_(progress_stream) {}

bool ConsoleReporter::ReportContext(const Context&) {
  std::ostream& out = GetOutputStream();
  for (const std::string& line : header_) out << line << "\n";
  out << "\n" << table_heading() << "\n";
  out.flush();
  return true;
}

void ConsoleReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) take(run);
}

void ConsoleReporter::take(const Run& run) {
  const std::string name = plain_name(run);
  if (has_pending_ && name != pending_.name) flush();
  if (!has_pending_) {
    pending_ = BenchmarkLine{};
    pending_.name = name;
    const auto fields = label_fields(run.report_label);
    pending_.metric = fields.count("metric") ? fields.at("metric") : "GBps";
    pending_.level = fields.count("level") ? fields.at("level") : "";
    aggregate_median_.clear();
    aggregate_cv_.clear();
    peak_.clear();
    cublas_.clear();
    has_pending_ = true;
  }
  if (run.error_occurred) {
    if (pending_.error.empty()) pending_.error = run.error_message;
    return;
  }
  const double headline = counter(run, headline_counter(pending_.metric), -1);
  // The working set from a repetition or the median (a stddev or cv aggregate of it is 0).
  if (const double ws = counter(run, "working_set_bytes", -1);
      ws > 0 && (run.run_type != Run::RT_Aggregate || run.aggregate_name == "median"))
    pending_.working_set_bytes = ws;
  if (run.run_type == Run::RT_Aggregate) {
    // Only aggregates reach the console with --benchmark_display_aggregates_only=true.
    if (run.aggregate_name == "median" && headline >= 0) {
      aggregate_median_.push_back(headline);
      pending_.pct_of_peak = counter(run, "pct_of_peak");
      pending_.pct_of_cublas = counter(run, "pct_of_cublas");
    }
    if (run.aggregate_name == "cv" && headline >= 0) aggregate_cv_.push_back(headline);
    if (run.aggregate_name == "max" || run.aggregate_name == "mean") {
      pending_.throttled = pending_.throttled || counter(run, "throttled", 0) > 0;
      pending_.power_capped = pending_.power_capped || counter(run, "power_capped", 0) > 0;
      pending_.outlier = pending_.outlier || counter(run, "outlier", 0) > 0;
    }
    return;
  }
  if (headline >= 0) pending_.values.push_back(headline);
  if (const double p = counter(run, "pct_of_peak"); p >= 0) peak_.push_back(p);
  if (const double c = counter(run, "pct_of_cublas"); c >= 0) cublas_.push_back(c);
  pending_.throttled = pending_.throttled || counter(run, "throttled", 0) > 0;
  pending_.power_capped = pending_.power_capped || counter(run, "power_capped", 0) > 0;
  pending_.outlier = pending_.outlier || counter(run, "outlier", 0) > 0;
}

void ConsoleReporter::flush() {
  if (!has_pending_) return;
  has_pending_ = false;
  if (pending_.values.empty() && !aggregate_median_.empty()) {
    // From aggregates: the median, and a spread that reproduces their cv.
    const double m = aggregate_median_.front();
    const double cv = aggregate_cv_.empty() ? 0 : aggregate_cv_.front();
    pending_.values = {m * (1 - cv), m, m * (1 + cv)};
  } else {
    pending_.pct_of_peak = median_or(peak_, -1);
    pending_.pct_of_cublas = median_or(cublas_, -1);
  }
  std::ostream& out = GetOutputStream();
  if (progress_ && terminal_) std::fprintf(progress_stream_, "\r\033[K");  // the progress line goes first
  if (!pending_.unavailable()) {
    if (pending_.family() != family_) {
      family_ = pending_.family();
      out << family_heading(family_) << "\n";
    }
    out << format_line(pending_) << "\n";
  }
  out.flush();
  lines_.push_back(pending_);
  ++done_;
  draw_progress(pending_.name);
}

void ConsoleReporter::draw_progress(const std::string& last) {
  if (!progress_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int left = std::max(total_ - done_, 0);
  const std::string eta = done_ > 0 ? clock_text(elapsed / done_ * left) : "?";
  std::fprintf(progress_stream_, "%s[%d/%d] %s elapsed, ETA %s, last %s%s", terminal_ ? "\r\033[K" : "", done_, total_,
               clock_text(elapsed).c_str(), eta.c_str(), last.c_str(), terminal_ ? "" : "\n");
  std::fflush(progress_stream_);
}

void ConsoleReporter::Finalize() {
  flush();
  if (progress_ && terminal_) {
    std::fprintf(progress_stream_, "\r\033[K");
    std::fflush(progress_stream_);
  }
}

}  // namespace gpubench
