#include "harness/telemetry_sampler.h"

#include <algorithm>
#include <utility>

namespace gpubench {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The values of one field that were read.
template <class Get>
std::vector<double> read_values(const std::vector<TelemetryReading>& readings, Get get) {
  std::vector<double> v;
  for (const auto& r : readings)
    if (get(r) >= 0) v.push_back(get(r));
  return v;
}

}  // namespace

Telemetry summarize_telemetry(const std::vector<TelemetryReading>& readings, double energy_J) {
  Telemetry t;
  const auto sm = read_values(readings, [](const TelemetryReading& r) { return r.sm_clock_MHz; });
  if (sm.empty()) return t;
  t.available = true;
  t.samples = static_cast<int>(readings.size());
  t.sm_clock_MHz = median(sm);
  t.sm_clock_min_MHz = *std::min_element(sm.begin(), sm.end());
  const auto mem = read_values(readings, [](const TelemetryReading& r) { return r.mem_clock_MHz; });
  if (!mem.empty()) t.mem_clock_MHz = median(mem);
  const auto power = read_values(readings, [](const TelemetryReading& r) { return r.power_W; });
  if (!power.empty()) {
    double sum = 0;
    for (double p : power) sum += p;
    t.power_W = sum / static_cast<double>(power.size());
  }
  const auto temp = read_values(readings, [](const TelemetryReading& r) { return r.temperature_C; });
  if (!temp.empty()) t.temperature_C = *std::max_element(temp.begin(), temp.end());
  for (const auto& r : readings) {
    t.throttled = t.throttled || r.throttled;
    t.throttle_reasons |= r.throttle_reasons;
  }
  t.energy_J = energy_J;
  return t;
}

TelemetrySampler::TelemetrySampler(ReadFn read, EnergyFn energy, std::chrono::milliseconds period)
    : read_(std::move(read)), energy_(std::move(energy)), period_(period) {}

TelemetrySampler::~TelemetrySampler() {
  if (thread_.joinable()) (void)stop();
}

void TelemetrySampler::read_once() {
  if (auto r = read_()) {
    const std::lock_guard<std::mutex> lock(mutex_);
    readings_.push_back(*r);
  }
}

void TelemetrySampler::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, period_, [this] { return stopping_; })) {
    lock.unlock();
    read_once();
    lock.lock();
  }
}

void TelemetrySampler::start() {
  if (thread_.joinable()) (void)stop();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    readings_.clear();
    stopping_ = false;
  }
  energy_start_ = energy_ ? energy_() : std::nullopt;
  started_ = std::chrono::steady_clock::now();
  read_once();
  thread_ = std::thread([this] { loop(); });
}

Telemetry TelemetrySampler::stop() {
  if (!thread_.joinable()) return {};
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  read_once();
  const std::optional<double> end = energy_ ? energy_() : std::nullopt;
  const double energy = energy_start_ && end && *end >= *energy_start_ ? *end - *energy_start_ : -1.0;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const std::lock_guard<std::mutex> lock(mutex_);
  Telemetry t = summarize_telemetry(readings_, energy);
  t.seconds = seconds;
  return t;
}

}  // namespace gpubench
