// Telemetry during the timed region: clocks, throttle reasons, power and temperature sampled in
// a background thread while the samples run (not once afterwards, from a GPU already idle), and
// the energy the device reports having used in between. Backend-neutral: the readings come from
// a function (NVML on a GPU); without one there is no telemetry.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "harness/backend.h"

namespace gpubench {

/// One reading. A field that could not be read is negative (reasons: 0).
struct TelemetryReading {
  double sm_clock_MHz = -1;
  double mem_clock_MHz = -1;
  double power_W = -1;
  double temperature_C = -1;
  std::uint64_t throttle_reasons = 0;
  bool throttled = false;     ///< the reasons include throttling (thermal, slowdown)
  bool power_capped = false;  ///< the reasons include the software power cap
};

/// The summary of the readings of one timed region: SM clock median and minimum, memory clock
/// median, power mean, temperature maximum, throttled (power-capped) when any reading was, every reason seen,
/// and the energy (`energy_J` < 0 when unknown). available=false without a reading.
Telemetry summarize_telemetry(const std::vector<TelemetryReading>& readings, double energy_J);

/// Reads `read` (and `energy`) every `period` on its own thread, from the first start() until
/// destruction, and summarizes the readings that fall inside each region start()..stop().
/// The thread runs on between regions so that marking one costs the benchmark nothing. (Run 6
/// on the H100 showed about 10 ms of fixed cost per Google Benchmark call; the synchronous NVML
/// readings at both ends of every region, which this replaces, were the likeliest part of it.)
class TelemetrySampler {
 public:
  using ReadFn = std::function<std::optional<TelemetryReading>()>;
  /// Total energy used by the device so far, in joules (a monotonic counter); nullopt if unknown.
  using EnergyFn = std::function<std::optional<double>()>;
  TelemetrySampler(ReadFn read, EnergyFn energy, std::chrono::milliseconds period);
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  /// Begins a region (the first call starts the thread, which reads at once).
  void start();
  /// Ends the region and summarizes its readings. A region shorter than a period may hold
  /// none: then the thread reads at once and that reading, taken as the region ends, stands for
  /// it (the latest one before the region only if none comes within a second). Energy: the
  /// counter's difference between the region's first and last readings, scaled to the region's
  /// length; unknown with fewer than two.
  Telemetry stop();

  /// The cost of the readings so far: how many, and the median and the slowest time one took
  /// (the read and energy functions together), in microseconds.
  struct Cost {
    long long readings = 0;
    double median_us = 0;
    double max_us = 0;
  };
  Cost cost();

 private:
  struct Stamped {
    std::chrono::steady_clock::time_point at;
    std::optional<TelemetryReading> reading;
    std::optional<double> energy_J;
  };
  void loop();

  ReadFn read_;
  EnergyFn energy_;
  std::chrono::milliseconds period_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;   // the thread's stop signal, and the first reading's arrival
  bool stopping_ = false;          // guarded by mutex_
  bool read_now_ = false;          // guarded by mutex_: stop() wants a reading without waiting a period
  std::vector<Stamped> readings_;  // guarded by mutex_; oldest first, pruned at each start()
  long long read_count_ = 0;       // guarded by mutex_
  std::vector<double> read_us_;    // guarded by mutex_: the first kMaxCostSamples readings' times
  double read_us_max_ = 0;         // guarded by mutex_
  static constexpr std::size_t kMaxCostSamples = 4096;
  bool in_region_ = false;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace gpubench
