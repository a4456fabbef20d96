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
  bool throttled = false;  ///< the reasons include throttling (power cap, thermal, slowdown)
};

/// The summary of the readings of one timed region: SM clock median and minimum, memory clock
/// median, power mean, temperature maximum, throttled when any reading was, every reason seen,
/// and the energy (`energy_J` < 0 when unknown). available=false without a reading.
Telemetry summarize_telemetry(const std::vector<TelemetryReading>& readings, double energy_J);

/// Samples `read` every `period` on its own thread between start() and stop().
class TelemetrySampler {
 public:
  using ReadFn = std::function<std::optional<TelemetryReading>()>;
  /// Total energy used by the device so far, in joules (a monotonic counter); nullopt if unknown.
  using EnergyFn = std::function<std::optional<double>()>;
  TelemetrySampler(ReadFn read, EnergyFn energy, std::chrono::milliseconds period);
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  /// Takes a first reading at once, then one every period until stop().
  void start();
  /// Takes a last reading, ends the thread and summarizes the region.
  Telemetry stop();

 private:
  void loop();
  void read_once();

  ReadFn read_;
  EnergyFn energy_;
  std::chrono::milliseconds period_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<TelemetryReading> readings_;  // guarded by mutex_
  std::optional<double> energy_start_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace gpubench
