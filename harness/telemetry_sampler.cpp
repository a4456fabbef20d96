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
    t.power_capped = t.power_capped || r.power_capped;
    t.throttle_reasons |= r.throttle_reasons;
  }
  t.energy_J = energy_J;
  return t;
}

TelemetrySampler::TelemetrySampler(ReadFn read, EnergyFn energy, std::chrono::milliseconds period)
    : read_(std::move(read)), energy_(std::move(energy)), period_(period) {}

TelemetrySampler::~TelemetrySampler() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void TelemetrySampler::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    Stamped s;
    const auto began = std::chrono::steady_clock::now();
    s.reading = read_();
    if (energy_) s.energy_J = energy_();
    s.at = std::chrono::steady_clock::now();  // when the reading was complete
    const double us = std::chrono::duration<double, std::micro>(s.at - began).count();
    lock.lock();
    ++read_count_;
    if (read_us_.size() < kMaxCostSamples) read_us_.push_back(us);
    read_us_max_ = std::max(read_us_max_, us);
    readings_.push_back(s);
    read_now_ = false;
    wake_.notify_all();
    wake_.wait_for(lock, period_, [this] { return stopping_ || read_now_; });
  }
}

void TelemetrySampler::start() {
  const std::lock_guard<std::mutex> lock(mutex_);
  started_ = std::chrono::steady_clock::now();
  in_region_ = true;
  // Keep only the latest reading from before the region: it stands for a region too short to
  // hold one of its own.
  if (readings_.size() > 1) readings_.erase(readings_.begin(), readings_.end() - 1);
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
}

Telemetry TelemetrySampler::stop() {
  if (!in_region_) return {};
  in_region_ = false;
  const auto ended = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  const auto read_since = [this](std::chrono::steady_clock::time_point t) {
    return !readings_.empty() && readings_.back().at >= t;
  };
  if (!read_since(started_)) {
    // No reading inside (a region shorter than a period): one now, as the region ends, rather
    // than the latest before it (verification idle, or the previous row).
    read_now_ = true;
    wake_.notify_all();
    wake_.wait_for(lock, std::chrono::seconds(1), [&] { return read_since(ended); });
  }
  std::vector<const Stamped*> inside;
  const Stamped* before = nullptr;
  for (const auto& s : readings_) {
    if (s.at < started_) before = &s;
    if (s.at >= started_ && s.at <= ended) inside.push_back(&s);
  }
  // The reading taken as the region ended stands for a region with none of its own.
  if (inside.empty() && !readings_.empty() && readings_.back().at > ended) inside.push_back(&readings_.back());
  if (inside.empty() && !readings_.empty()) inside.push_back(before ? before : &readings_.front());
  std::vector<TelemetryReading> values;
  for (const Stamped* s : inside)
    if (s->reading) values.push_back(*s->reading);
  const double seconds = std::chrono::duration<double>(ended - started_).count();
  double energy = -1.0;
  const Stamped* first = nullptr;
  const Stamped* last = nullptr;
  double first_J = 0.0;
  double last_J = 0.0;
  for (const Stamped* s : inside) {
    if (!s->energy_J || s->at < started_) continue;
    if (!first) {
      first = s;
      first_J = *s->energy_J;
    }
    last = s;
    last_J = *s->energy_J;
  }
  if (first && last != first && last_J >= first_J) {
    const double span = std::chrono::duration<double>(last->at - first->at).count();
    if (span > 0) energy = (last_J - first_J) * seconds / span;
  }
  Telemetry t = summarize_telemetry(values, energy);
  t.seconds = seconds;
  return t;
}

TelemetrySampler::Cost TelemetrySampler::cost() {
  const std::lock_guard<std::mutex> lock(mutex_);
  Cost c;
  c.readings = read_count_;
  c.max_us = read_us_max_;
  if (!read_us_.empty()) {
    std::vector<double> v = read_us_;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    c.median_us = v[v.size() / 2];
  }
  return c;
}

}  // namespace gpubench
