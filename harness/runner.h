// The runner: turns the rows of the family tables into Google Benchmark benchmarks for one
// backend. Timing, batching, verification and every counter are decided here, once, for all
// backends and families.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/backend.h"

namespace gpubench {

/// Failures seen while running, for the exit status (verification failures, a lost device).
struct RunOutcome {
  int failed = 0;           ///< runs (repetitions) that failed verification, threw or lost the device
  int skipped = 0;          ///< runs skipped with a reason (too big, unsupported arch, unavailable here)
  std::string device_lost;  ///< the sticky error, when there was one
  /// The device was lost to work that never finished (DeviceHung): what the lost workload
  /// holds is left allocated, and the process must end without releasing device resources.
  bool device_hung = false;
  /// The benchmarks with at least one failed run, each once, in the order they failed.
  std::vector<std::string> failed_benchmarks;
};

/// Registers every case under its full name: the rows the backend runs, and the rows it declares
/// unavailable here as skips with the reason (Backend::unavailable_reason). Every entry carries
/// row_label() as its label. The backend, cases and outcome must outlive
/// benchmark::RunSpecifiedBenchmarks. Returns the number registered.
int register_cases(Backend& backend, const std::vector<BenchCase>& cases, RunOutcome& outcome);

/// SIGINT/SIGTERM: the signal handler records the signal (async-signal-safe); the running
/// benchmark stops after its current sample and the rest are skipped as "interrupted".
void request_interrupt(int signal_number);
/// The signal that interrupted the run, 0 when none did.
int interrupt_signal();

/// Frees the workload kept between repetitions; call after the run, while the backend's
/// device context is still alive.
void release_cached_workload();

/// One sample should take at least this long on the device, so event resolution (~0.5 us)
/// and launch gaps are negligible: small kernels are batched up to it.
constexpr double kMinSampleSeconds = 2e-3;

/// Batch size for an operation that takes `seconds_per_op`: enough back-to-back executions to
/// fill kMinSampleSeconds, between 1 and kMaxBatch.
int choose_batch(double seconds_per_op);
constexpr int kMaxBatch = 4096;
/// Sizing stops once a sample lasts this fraction of kMinSampleSeconds.
constexpr double kSizedFraction = 0.8;

/// The batch of a prepared workload: from the best of three single operations, grown until one
/// sample of `batch` operations fills kSizedFraction of kMinSampleSeconds.
int size_batch(Workload& w);

/// The counters of one benchmark, derived only from its work model, the measured time per
/// operation and the backend's peaks. Unknown peaks leave pct_of_peak out.
struct DerivedCounters {
  double GBps = 0;                    ///< useful bytes per second / 1e9
  double sector_GBps = 0;             ///< traffic bytes per second / 1e9 (0 when same as useful)
  double TFLOPS = 0;                  ///< 0 when the work model has no FLOP
  double pct_of_peak = -1;            ///< < 0: unknown peak
  double pct_of_protocol_limit = -1;  ///< PCIe rows: against the link after TLP overhead; < 0 otherwise
  double pct_of_roofline = -1;        ///< DRAM-level rows with FLOP: against their roof; < 0 otherwise
};
/// `dram_level`: the row streams a DRAM-sized set (its level is dram), so its roof is
/// min(compute peak, DRAM peak x its FLOP per byte) and pct_of_roofline is set where both peaks
/// are known.
DerivedCounters derive_counters(const WorkModel& w, double seconds_per_op, const Peaks& peaks, bool dram_level = false);
/// The roofline's attainable TFLOPS for `w` on a DRAM-sized set: min(its compute peak, DRAM peak
/// x FLOP per DRAM byte); 0 when the work has no FLOP or bytes, or either peak is unknown.
double attainable_TFLOPS(const WorkModel& w, const Peaks& peaks);

/// A sample whose time per operation is more than this factor from its repetition's median is
/// an outlier sample; a repetition whose mean is more than kOutlierRepetitionDeviation from the
/// median of every sample so far is an outlier repetition.
constexpr double kOutlierFactor = 1.5;
constexpr double kOutlierRepetitionDeviation = 0.25;
/// Timed loops with fewer samples (Google Benchmark's trial runs) are not judged as repetitions.
constexpr std::size_t kMinOutlierSamples = 3;
struct SampleOutliers {
  int samples = 0;               ///< outlier samples in this repetition
  bool repetition = false;       ///< this repetition as a whole is an outlier
  int repetition_index = 0;      ///< (filled by the caller)
  double repetition_per_op = 0;  ///< this repetition's mean seconds per operation
  double reference_per_op = 0;   ///< the median of every sample so far, this repetition's included
};
/// Outliers of one repetition's samples (seconds per operation) against its own median and, for
/// the repetition as a whole, against the samples of earlier repetitions plus its own.
SampleOutliers find_outliers(const std::vector<double>& samples, const std::vector<double>& earlier);

/// Shortest timed region whose energy is reported (--benchmark_min_time of 1 s or more gives it).
constexpr double kMinEnergySeconds = 1.0;

/// The telemetry counters of a timed region of `ops` operations: clocks (median, minimum),
/// throttled (0/1), mean power, peak temperature, and energy per useful GB and per FLOP where
/// the device reported its energy.
std::map<std::string, double> telemetry_counters(const Telemetry& t, const WorkModel& work, std::int64_t ops);

}  // namespace gpubench
