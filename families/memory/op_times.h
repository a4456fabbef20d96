// Per-operation times of a management benchmark (an allocate + free pair, a page-touching
// round): the runner sees only a batch's total, so the workloads keep each operation's time of
// their last run and report its median and 99th percentile (p50_us, p99_us).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace gpubench::memory {

/// The q-quantile (0 <= q <= 1) of `v`, linear between the closest ranks (numpy's default), so
/// q = 0.5 is the median: 2.5 for {1, 2, 3, 4}. 0 for no values.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

/// p50_us and p99_us of per-operation times in seconds.
inline std::map<std::string, double> percentile_counters(const std::vector<double>& seconds) {
  return {{"p50_us", quantile(seconds, 0.50) * 1e6}, {"p99_us", quantile(seconds, 0.99) * 1e6}};
}

class OpTimes {
 public:
  /// Forgets the previous run's times (call at the start of run()).
  void start_run(int batch) {
    seconds_.clear();
    seconds_.reserve(static_cast<std::size_t>(std::max(batch, 0)));
  }
  void add(double seconds) { seconds_.push_back(seconds); }
  /// The sum of this run's times: what run(batch) returns.
  double total() const {
    double s = 0;
    for (double t : seconds_) s += t;
    return s;
  }
  /// p50_us and p99_us of the last run.
  std::map<std::string, double> counters() const { return percentile_counters(seconds_); }

 private:
  std::vector<double> seconds_;
};

/// Seconds on the steady clock since `t0`.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace gpubench::memory
