// What gpubench prints on the console (the result file stays Google Benchmark's JSON): one
// line per benchmark from its repetitions, grouped by family, and the closing summary against
// the card. Pure formatting over plain values, so every rule here is unit-tested without
// running a benchmark; harness/console_reporter.* feeds it from Google Benchmark's runs.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace gpubench {

/// Everything one benchmark's line needs, gathered from its repetitions.
struct BenchmarkLine {
  std::string name;               ///< family/kernel/variant/params (no "/manual_time")
  std::string metric;             ///< the label's metric=: GBps, TFLOPS, latency_ns, latency_us
  std::string level;              ///< the label's level=: dram, l2, smem, pcie, none
  std::vector<double> values;     ///< the headline counter of each repetition that ran
  double pct_of_peak = -1;        ///< median over repetitions; < 0 unknown
  double pct_of_cublas = -1;      ///< median over repetitions; < 0 none
  bool throttled = false;         ///< a repetition was throttled (NVML)
  bool power_capped = false;      ///< a repetition ran at the software power cap (NVML)
  bool outlier = false;           ///< a repetition was marked an outlier
  double working_set_bytes = -1;  ///< the row's working_set_bytes counter; < 0 unknown
  std::string error;              ///< the first error of a repetition ("verification failed: ...", "skipped: ...")

  std::string family() const;
  std::string kernel() const;
  std::string variant() const;
  double median() const;
  /// Coefficient of variation over the repetitions (0 with fewer than two).
  double cv() const;
  bool failed() const;   ///< an error that is not a skip
  bool skipped() const;  ///< "skipped: ..." or "interrupted"
  bool noisy() const;    ///< cv above kNoisyCv with at least two repetitions
  /// A row this backend does not run ("skipped: not on the host backend: ..."): counted, not listed.
  bool unavailable() const;
};

/// Above this coefficient of variation a row is marked noisy.
constexpr double kNoisyCv = 0.05;

/// The label's `key=value` fields ("peak=dram metric=GBps ...").
std::map<std::string, std::string> label_fields(const std::string& label);
/// The counter that holds the headline of `metric` (GBps -> "GB/s").
std::string headline_counter(const std::string& metric);
/// The unit printed after the headline ("GB/s", "TFLOPS", "ns", "us").
std::string headline_unit(const std::string& metric);

/// A rate or time with three significant figures and no exponent: 2812 -> "2812", 45.27 ->
/// "45.3", 0.04531 -> "0.0453".
std::string three_figures(double v);
/// Bytes in the unit that fits: "512 B", "4 KiB", "1.5 MiB", "80 GiB".
std::string format_bytes(double bytes);
/// Seconds in the unit that fits: "850 us", "12.3 ms", "4.2 s", "2 min 05 s".
std::string format_duration(double seconds);

/// Width of the console table (every line fits in it).
constexpr std::size_t kConsoleWidth = 120;
/// The column heading line of the table.
std::string table_heading();
/// "bandwidth" and the like, when a new family starts.
std::string family_heading(const std::string& family);
/// One benchmark's line: name, median headline with its unit and spread, % of peak, % of
/// cuBLAS, and marks (noisy, throttled, power-cap, outlier) or the error; at most kConsoleWidth
/// columns.
std::string format_line(const BenchmarkLine& line);

/// The few lines printed before the table, from the result context (result_context()): the
/// device and backend, driver and runtime, the peaks that are known, clocks, cache policy, memory.
std::vector<std::string> console_header(const std::map<std::string, std::string>& context);

/// Where the result went, for the summary's last line.
struct SummaryDestination {
  std::string result_path;     ///< the published file ("" when nothing was written)
  bool asked_to_save = false;  ///< --out or --results-dir was given
  bool host = false;           ///< the host backend: level l2 is its last-level cache
  double l2_bytes = 0;         ///< the device's L2 (the host's last-level cache); 0 unknown
};

/// A cache-resident working set from this fraction of the L2 (the last-level cache on the host)
/// up is a cache plateau: a smaller set occupies a fraction of the SMs, or on the host a core's L1
/// (the host's 16 KiB copy, 393 GB/s, was quoted as its last-level cache). The roofline's measured
/// L2 line starts there too (scripts/gpubench_tools/results.py, CACHE_PLATEAU_MIN_FRACTION).
constexpr double kCachePlateauMinFraction = 1.0 / 64.0;
/// The closing summary: the headline numbers against the card (DRAM copy, L2 plateau, PCIe
/// H2D/D2H, SGEMM, FP16 and BF16 GEMM against cuBLAS, peak FMA: those the run has), then the noisy,
/// throttled, failed and skipped rows, then where the result went (or that nothing was saved).
std::vector<std::string> closing_summary(const std::vector<BenchmarkLine>& lines, const SummaryDestination& dest);

}  // namespace gpubench
