// Telemetry during the timed region: the summary of the readings, the sampling thread, and the
// counters the runner derives (energy per GB and per FLOP).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "harness/runner.h"
#include "harness/telemetry_sampler.h"

namespace gpubench {
namespace {

TelemetryReading reading(double sm, double power, double temp, std::uint64_t reasons, bool throttled,
                         bool power_capped = false) {
  TelemetryReading r;
  r.sm_clock_MHz = sm;
  r.mem_clock_MHz = 2619;
  r.power_W = power;
  r.temperature_C = temp;
  r.throttle_reasons = reasons;
  r.throttled = throttled;
  r.power_capped = power_capped;
  return r;
}

TEST(Telemetry, SummaryOfTheRegion) {
  const Telemetry t = summarize_telemetry(
      {reading(1980, 300, 50, 0, false), reading(1755, 700, 61, 0x4, false, true), reading(1980, 500, 55, 0x41, true)},
      12.5);
  EXPECT_TRUE(t.available);
  EXPECT_EQ(t.samples, 3);
  EXPECT_DOUBLE_EQ(t.sm_clock_MHz, 1980);      // median
  EXPECT_DOUBLE_EQ(t.sm_clock_min_MHz, 1755);  // the dip a single reading afterwards would miss
  EXPECT_DOUBLE_EQ(t.power_W, 500);            // mean
  EXPECT_DOUBLE_EQ(t.temperature_C, 61);       // highest
  EXPECT_TRUE(t.throttled);                    // one throttled reading marks the region
  EXPECT_TRUE(t.power_capped);                 // and one at the power cap
  EXPECT_EQ(t.throttle_reasons, 0x45u);
  const Telemetry capped = summarize_telemetry({reading(1755, 700, 61, 0x4, false, true)}, -1);
  EXPECT_TRUE(capped.power_capped);
  EXPECT_FALSE(capped.throttled);  // the power cap alone is not a throttle
  EXPECT_DOUBLE_EQ(t.energy_J, 12.5);
}

TEST(Telemetry, UnreadFieldsStayUnknown) {
  TelemetryReading r;
  r.sm_clock_MHz = 1500;  // power and temperature could not be read
  const Telemetry t = summarize_telemetry({r}, -1);
  EXPECT_TRUE(t.available);
  EXPECT_LT(t.power_W, 0);
  EXPECT_LT(t.temperature_C, 0);
  EXPECT_LT(t.energy_J, 0);
  EXPECT_FALSE(summarize_telemetry({}, 3.0).available);
  EXPECT_FALSE(summarize_telemetry({TelemetryReading{}}, 3.0).available);  // no clock read
}

// A device drawing 100 W: the energy counter grows 100 J per second of the steady clock.
// Polls `done` every millisecond for up to 5 s: a loaded test machine can stall the sampler's
// thread for tens of milliseconds, which a fixed sleep does not allow for.
template <class Done>
bool wait_until(Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

double joules_now() {
  return 100.0 * std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TEST(Telemetry, SamplerReadsWhileTheRegionRuns) {
  std::atomic<int> reads{0};
  TelemetrySampler sampler(
      [&]() -> std::optional<TelemetryReading> {
        const int n = ++reads;
        return reading(n % 2 ? 1980 : 1900, 400, 50, 0, false);
      },
      [] { return std::optional<double>(joules_now()); }, std::chrono::milliseconds(2));
  EXPECT_FALSE(sampler.stop().available);  // never started
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  ASSERT_TRUE(wait_until([&] { return reads.load() >= 6; }));
  const Telemetry t = sampler.stop();
  EXPECT_GE(t.samples, 5);  // read while the region ran
  EXPECT_LE(t.samples, reads.load());
  EXPECT_DOUBLE_EQ(t.sm_clock_min_MHz, 1900);
  EXPECT_GE(t.seconds, 0.06);
  // The counter's difference over the readings, scaled to the region: 100 W x its length.
  EXPECT_NEAR(t.energy_J, 100.0 * t.seconds, 0.1 * 100.0 * t.seconds);
  // The thread reads on between regions; a new region summarizes only its own readings.
  EXPECT_TRUE(wait_until([&] { return reads.load() > t.samples; }));
  sampler.start();
  const int before = reads.load();  // one reading may be under way: it may land inside
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Two readings begun after the start, so stamped inside the region.
  ASSERT_TRUE(wait_until([&] { return reads.load() >= before + 3; }));
  const Telemetry again = sampler.stop();
  EXPECT_GE(again.samples, 2);
  EXPECT_LE(again.samples, reads.load() - before + 1);
}

// A region shorter than the period holds no reading of its own: the thread reads at once as it
// ends, and that reading (not the latest before the region: verification idle, or the previous
// row) stands for it; no energy is claimed from one reading.
TEST(Telemetry, ARegionShorterThanAPeriodIsReadAsItEnds) {
  std::atomic<int> reads{0};
  TelemetrySampler sampler(
      [&]() -> std::optional<TelemetryReading> {
        const int n = ++reads;
        return reading(n == 1 ? 345 : 1755, 300, 40, 0, false);  // the first: an idle GPU's clock
      },
      [] { return std::optional<double>(joules_now()); }, std::chrono::seconds(5));
  sampler.start();  // the thread's first reading falls inside this region (stop waits for it)
  const Telemetry first = sampler.stop();
  EXPECT_TRUE(first.available);
  EXPECT_EQ(first.samples, 1);
  EXPECT_DOUBLE_EQ(first.sm_clock_MHz, 345);
  sampler.start();
  const Telemetry short_one = sampler.stop();
  EXPECT_TRUE(short_one.available);
  EXPECT_EQ(short_one.samples, 1);
  EXPECT_DOUBLE_EQ(short_one.sm_clock_MHz, 1755);  // read as it ended, not the idle reading before
  EXPECT_LT(short_one.energy_J, 0);
  EXPECT_EQ(reads.load(), 2);  // long before the 5 s period: the region's end asked for it
}

// What the readings cost: counted, with the median and the slowest time one took.
TEST(Telemetry, SamplerCountsWhatItsReadingsCost) {
  TelemetrySampler sampler(
      []() -> std::optional<TelemetryReading> {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        return reading(1980, 300, 40, 0, false);
      },
      nullptr, std::chrono::milliseconds(1));
  EXPECT_EQ(sampler.cost().readings, 0);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  ASSERT_TRUE(wait_until([&] { return sampler.cost().readings >= 3; }));
  (void)sampler.stop();
  const TelemetrySampler::Cost c = sampler.cost();
  EXPECT_GE(c.readings, 3);
  EXPECT_GE(c.median_us, 2000);
  EXPECT_GE(c.max_us, c.median_us);
}

TEST(Telemetry, SamplerWithoutEnergyCounter) {
  TelemetrySampler sampler([] { return std::optional<TelemetryReading>(reading(1980, 300, 40, 0, false)); }, nullptr,
                           std::chrono::milliseconds(1));
  sampler.start();
  const Telemetry t = sampler.stop();
  EXPECT_TRUE(t.available);
  EXPECT_LT(t.energy_J, 0);
}

TEST(Telemetry, EnergyPerByteAndPerFlop) {
  Telemetry t;
  t.available = true;
  t.sm_clock_MHz = 1980;
  t.energy_J = 50.0;
  t.power_W = 500;
  t.seconds = 2.0;
  // 100 copies of 1 GB (2e9 useful bytes each): 0.5 J per copy, 0.25 J per GB
  auto k = telemetry_counters(t, copy_work(1e9), 100);
  EXPECT_DOUBLE_EQ(k.at("energy_J_per_GB"), 0.25);
  EXPECT_EQ(k.count("energy_pJ_per_FLOP"), 0u);
  EXPECT_DOUBLE_EQ(k.at("power_W"), 500);
  EXPECT_EQ(k.count("temperature_C"), 0u);  // unknown: left out
  // 10 GEMMs of 2 x 1024^3 FLOP with 50 J: 5 J each
  k = telemetry_counters(t, gemm_work(1024, 1024, 1024, 2, 4, PeakKind::fp16_tensor), 10);
  EXPECT_NEAR(k.at("energy_pJ_per_FLOP"), 5.0 / (2.0 * 1024 * 1024 * 1024) * 1e12, 1e-9);
  t.seconds = 0.2;  // too short for the counter's steps: no energy figure
  EXPECT_EQ(telemetry_counters(t, copy_work(1e9), 100).count("energy_J_per_GB"), 0u);
  t.seconds = 2.0;
  t.energy_J = -1;  // no energy counter
  EXPECT_EQ(telemetry_counters(t, copy_work(1e9), 100).count("energy_J_per_GB"), 0u);
}

}  // namespace
}  // namespace gpubench
