// The runner: batch sizing, the counters derived from a work model, and run_case as Google
// Benchmark runs it (a workload on a virtual clock, so the times are exact).
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "harness/runner.h"
#include "tests/google_benchmark_run.h"

namespace gpubench {
namespace {

TEST(Runner, BatchFillsTheMinimumSample) {
  EXPECT_EQ(choose_batch(1.0), 1);
  EXPECT_EQ(choose_batch(kMinSampleSeconds), 1);
  EXPECT_EQ(choose_batch(kMinSampleSeconds / 10), 10);
  EXPECT_EQ(choose_batch(1e-9), kMaxBatch);
  EXPECT_EQ(choose_batch(0), 1);
}

TEST(Runner, CountersFromTheWorkModel) {
  Peaks peaks;
  peaks.dram_GBps = 2000;
  const WorkModel copy = copy_work(1e9);  // 2e9 bytes per op
  const DerivedCounters d = derive_counters(copy, 1e-3, peaks);
  EXPECT_DOUBLE_EQ(d.GBps, 2000);
  EXPECT_DOUBLE_EQ(d.pct_of_peak, 100);
  EXPECT_EQ(d.sector_GBps, 0);
  EXPECT_EQ(d.TFLOPS, 0);
}

TEST(Runner, SectorTrafficReportedWhenItDiffers) {
  Peaks peaks;
  const WorkModel w = strided_work(1 << 20, 8, 4);
  const DerivedCounters d = derive_counters(w, 1.0, peaks);
  EXPECT_DOUBLE_EQ(d.sector_GBps / d.GBps, 8.0);
  EXPECT_LT(d.pct_of_peak, 0);  // unknown peak: left out, never invented
}

// The roofline's own figure for DRAM-level rows with FLOP: against min(compute peak, DRAM peak x
// FLOP per byte), so a memory-bound point reads as a share of its roof (the H100's fma:0.5 row,
// 0.125 FLOP/byte at 2.90 TB/s, is 0.54 % of the FP32 peak and 87 % of its roof); compute-bound
// points read as their % of peak; no figure without both peaks, for rows with no FLOP or no
// compute peak (FP16x2), nor for rows that are not DRAM-level.
TEST(Runner, PctOfRooflineIsAgainstWhatTheIntensityAllows) {
  Peaks peaks;
  peaks.dram_GBps = 3350;
  peaks.fp32_TFLOPS = 66.9;
  WorkModel half = fma_sweep_work(1 << 26, 4, 1, PeakKind::fp32);
  half.flop /= 2;  // fma:0.5: 0.125 FLOP per byte
  EXPECT_DOUBLE_EQ(attainable_TFLOPS(half, peaks), 3350 * 0.125 / 1e3);
  const double seconds = half.useful_bytes / 2901.5e9;
  const DerivedCounters d = derive_counters(half, seconds, peaks, true);
  EXPECT_NEAR(d.pct_of_roofline, 100.0 * 2901.5 / 3350, 1e-9);
  EXPECT_NEAR(d.pct_of_peak, 100.0 * d.TFLOPS / 66.9, 1e-9);
  EXPECT_LT(d.pct_of_peak, 1.0);
  EXPECT_LT(derive_counters(half, seconds, peaks, false).pct_of_roofline, 0) << "not a DRAM-level row";
  const WorkModel dense = fma_sweep_work(1 << 26, 4, 2048, PeakKind::fp32);  // 512 FLOP per byte
  EXPECT_DOUBLE_EQ(attainable_TFLOPS(dense, peaks), 66.9);
  const DerivedCounters top = derive_counters(dense, dense.flop / 60e12, peaks, true);
  EXPECT_NEAR(top.pct_of_roofline, top.pct_of_peak, 1e-9);
  EXPECT_LT(derive_counters(fma_sweep_work(1 << 26, 2, 4, PeakKind::none), 1e-3, peaks, true).pct_of_roofline, 0);
  EXPECT_LT(derive_counters(copy_work(1e9), 1e-3, peaks, true).pct_of_roofline, 0) << "no FLOP";
  Peaks no_dram = peaks;
  no_dram.dram_GBps = 0;
  EXPECT_LT(derive_counters(half, seconds, no_dram, true).pct_of_roofline, 0) << "unknown DRAM peak";
}

TEST(Runner, TflopsAndComputePeak) {
  Peaks peaks;
  peaks.fp16_tensor_TFLOPS = 989;
  const WorkModel g = gemm_work(4096, 4096, 4096, 2, 4, PeakKind::fp16_tensor);
  const double seconds = g.flop / 494.5e12;
  const DerivedCounters d = derive_counters(g, seconds, peaks);
  EXPECT_NEAR(d.TFLOPS, 494.5, 1e-9);
  EXPECT_NEAR(d.pct_of_peak, 50.0, 1e-9);
}

TEST(Runner, Bf16AndFp8RowsAgainstTheirOwnPeaksAndNoneWhereZero) {
  Peaks peaks;
  peaks.fp16_tensor_TFLOPS = 312;
  peaks.bf16_tensor_TFLOPS = 989;
  peaks.fp8_tensor_TFLOPS = 1979;
  const WorkModel bf16 = gemm_work(4096, 4096, 4096, 2, 4, PeakKind::bf16_tensor);
  EXPECT_NEAR(derive_counters(bf16, bf16.flop / 494.5e12, peaks).pct_of_peak, 50.0, 1e-9);
  const WorkModel fp8 = gemm_work(4096, 4096, 4096, 1, 4, PeakKind::fp8_tensor);
  EXPECT_NEAR(derive_counters(fp8, fp8.flop / 989.5e12, peaks).pct_of_peak, 50.0, 1e-9);
  // A card without FP8 tensor cores carries 0: the row keeps its TFLOPS and has no percentage.
  peaks.fp8_tensor_TFLOPS = 0;
  const DerivedCounters d = derive_counters(fp8, fp8.flop / 100e12, peaks);
  EXPECT_NEAR(d.TFLOPS, 100.0, 1e-9);
  EXPECT_LT(d.pct_of_peak, 0);
}

// A workload whose operation takes exactly `per_op` seconds of "device" time, and which records
// what the runner asked of it.
struct Calls {
  int prepares = 0, poisons = 0, verifies = 0;
  std::vector<int> batches;
  std::size_t runs_before_verify = 0;  // batches.size() when verify() was called
  bool written_since_poison = false;
  std::function<double(int call)> scale;      // slows (or speeds) call number `call` by this factor
  std::chrono::milliseconds verify_takes{0};  // host wall time verify() spends
};
class ClockWorkload final : public Workload {
 public:
  ClockWorkload(double per_op, double first_op, Calls* calls) : per_op_(per_op), first_(first_op), calls_(calls) {}
  void prepare() override { ++calls_->prepares; }
  void poison() override {
    ++calls_->poisons;
    calls_->written_since_poison = false;
  }
  double run(int batch) override {
    calls_->batches.push_back(batch);
    calls_->written_since_poison = true;
    const double first = std::exchange(first_, 0.0);  // a slow first operation (lazy loading)
    const double scale = calls_->scale ? calls_->scale(static_cast<int>(calls_->batches.size()) - 1) : 1.0;
    return batch * per_op_ * scale + first;
  }
  Verification verify() override {
    ++calls_->verifies;
    calls_->runs_before_verify = calls_->batches.size();
    std::this_thread::sleep_for(calls_->verify_takes);
    return calls_->written_since_poison ? Verification::pass() : Verification::fail("output never written");
  }

 private:
  double per_op_, first_;
  Calls* calls_;
};

class ClockBackend final : public Backend {
 public:
  ClockBackend(double per_op, double first_op) : per_op_(per_op), first_(first_op) {}
  std::string kind() const override { return "host"; }
  const DeviceDescription& device() const override { return device_; }
  const Peaks& peaks() const override { return peaks_; }
  std::string device_key() const override { return "clock"; }
  std::string unavailable_reason(const BenchCase&) const override { return {}; }
  std::unique_ptr<Workload> create(const BenchCase&) override {
    return std::make_unique<ClockWorkload>(per_op_, first_, &calls);
  }
  std::map<std::string, std::string> context() const override { return {}; }
  void set_peaks(const Peaks& p) { peaks_ = p; }
  // Telemetry: the region must hold the timed samples; 1 J per operation run inside it.
  void telemetry_start() override { region_start_ = calls.batches.size(); }
  Telemetry telemetry_stop() override {
    if (calls.batches.size() - region_start_ >= kMinOutlierSamples) ++full_loops;  // a repetition
    // A SIGTERM as a reported repetition ends (20 samples or more: Google Benchmark's trial
    // runs at these settings have at most 5).
    if (calls.batches.size() - region_start_ >= 20 && ++long_loops == interrupt_after_loops) request_interrupt(SIGTERM);
    Telemetry t;
    t.available = true;
    t.sm_clock_MHz = t.sm_clock_min_MHz = 1980;
    t.seconds = kMinEnergySeconds;  // long enough for an energy figure
    t.energy_J = 0;
    for (std::size_t i = region_start_; i < calls.batches.size(); ++i) t.energy_J += calls.batches[i];
    return t;
  }
  Calls calls;
  int full_loops = 0;             // timed loops long enough to be repetitions (not Google Benchmark's trials)
  int interrupt_after_loops = 0;  // > 0: a SIGTERM arrives as that many repetitions have run
  int long_loops = 0;

 private:
  double per_op_, first_;
  std::size_t region_start_ = 0;
  DeviceDescription device_;
  Peaks peaks_;
};

// The row's per-repetition runs, registered by register_cases and run by Google Benchmark.
test_run::Runs run_through_google_benchmark(ClockBackend& backend, const BenchCase& c, int repetitions,
                                            RunOutcome* outcome) {
  return test_run::run_rows(backend, {c}, *outcome, repetitions, "0.05").by_name[c.name()];
}

BenchCase copy_case(double bytes) {
  BenchCase c;
  c.family = "bandwidth";
  c.kernel = "copy";
  c.variant = "kernel";
  c.params = "bytes:test";
  c.work = copy_work(bytes);
  return c;
}

// The runner gives the figure to the rows whose level is dram, and to no other.
TEST(RunnerUnderGoogleBenchmark, PctOfRooflineOnDramLevelRowsWithFlop) {
  for (const char* level : {"dram", "none"}) {
    SCOPED_TRACE(level);
    ClockBackend backend(1e-4, 0);
    Peaks peaks;
    peaks.dram_GBps = 3350;
    peaks.fp32_TFLOPS = 66.9;
    backend.set_peaks(peaks);
    BenchCase c;
    c.family = "roofline";
    c.kernel = "intensity_fp32";
    c.variant = "kernel";
    c.params = "fma:1,bytes:test";
    c.work = fma_sweep_work(1 << 20, 4, 1, PeakKind::fp32);
    c.level = level;
    RunOutcome outcome;
    const auto runs = run_through_google_benchmark(backend, c, 2, &outcome);
    ASSERT_EQ(runs.size(), 2u);
    for (const auto& r : runs) {
      ASSERT_EQ(r.counters.count("pct_of_roofline"), std::string(level) == "dram" ? 1u : 0u);
      if (std::string(level) == "dram") {
        EXPECT_NEAR(r.counters.at("pct_of_roofline").value,
                    100.0 * r.counters.at("TFLOPS").value / attainable_TFLOPS(c.work, peaks), 1e-6);
      }
    }
  }
}

// One iteration is one operation: real_time is the time per operation (here exactly 1 us),
// whatever the batch, so two runs compare like with like; GB/s follows from the same time.
TEST(RunnerUnderGoogleBenchmark, RealTimeIsTheTimeOfOneOperation) {
  for (double per_op : {1e-6, 3e-4}) {
    ClockBackend backend(per_op, 5e-3);
    RunOutcome outcome;
    const auto runs = run_through_google_benchmark(backend, copy_case(1e6), 3, &outcome);
    ASSERT_EQ(runs.size(), 3u);
    for (const auto& r : runs) {
      EXPECT_NEAR(r.GetAdjustedRealTime(), per_op * 1e6, per_op * 1e6 * 1e-6);  // microseconds
      EXPECT_NEAR(r.counters.at("GB/s").value, 2e6 / per_op / 1e9, 1e-6 * 2e6 / per_op / 1e9);
      // the batch fills the 2 ms sample (the slow first operation did not shrink it)
      EXPECT_EQ(r.counters.at("ops_per_sample").value, choose_batch(per_op));
      EXPECT_GE(static_cast<double>(r.iterations) * per_op, 0.05 * 0.99);  // min_time of operations
    }
    EXPECT_EQ(outcome.failed, 0);
  }
}

// A signal between repetitions (or a lost device, or an error before a repetition's loop): the
// later repetitions are skipped without crashing Google Benchmark 1.7, which checks that every
// repetition reports the same iteration count (a repetition skipped before its loop reported 0:
// SIGABRT, seen in a fresh clone's signal test).
TEST(RunnerUnderGoogleBenchmark, AnInterruptBetweenRepetitionsSkipsTheRestWithoutACrash) {
  ClockBackend backend(1e-5, 0);
  backend.interrupt_after_loops = 2;
  RunOutcome outcome;
  const auto runs = run_through_google_benchmark(backend, copy_case(1e6), 4, &outcome);
  request_interrupt(0);  // the flag is the process's: leave it clear for the next test
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_FALSE(runs[0].error_occurred);
  EXPECT_FALSE(runs[1].error_occurred);
  for (std::size_t i = 2; i < runs.size(); ++i) {
    EXPECT_TRUE(runs[i].error_occurred);
    EXPECT_EQ(runs[i].error_message, "interrupted");
    EXPECT_EQ(runs[i].iterations, runs[0].iterations);  // what ComputeStats checks
  }
}

// Prepared, sized and verified once for all repetitions; poisoned only before the timed loop
// whose output is verified; one warm-up, after the verification (the device idled meanwhile),
// of a whole sample (one operation may be too short for the clocks to come back).
TEST(RunnerUnderGoogleBenchmark, PreparesSizesAndVerifiesOnce) {
  ClockBackend backend(1e-5, 0);
  backend.calls.verify_takes = std::chrono::milliseconds(30);
  RunOutcome outcome;
  const auto runs = run_through_google_benchmark(backend, copy_case(1e6), 4, &outcome);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(backend.calls.prepares, 1);
  EXPECT_EQ(backend.calls.verifies, 1);
  EXPECT_EQ(backend.calls.poisons, 2);  // before sizing, and before the verified timed loop
  int single = 0;
  for (int b : backend.calls.batches) single += b == 1 ? 1 : 0;
  EXPECT_EQ(single, 3);  // the three single operations that size the batch
  const int sized = static_cast<int>(runs.back().counters.at("ops_per_sample").value);
  ASSERT_LT(backend.calls.runs_before_verify, backend.calls.batches.size());
  EXPECT_EQ(backend.calls.batches[backend.calls.runs_before_verify], sized);  // the warm-up: one sample
  // Where the time went: the verification's 30 ms in verify_s (and in wall_s), every call counted.
  const auto& last = runs.back().counters;
  EXPECT_GE(last.at("verify_s").value, 0.03);
  EXPECT_GE(last.at("wall_s").value, last.at("verify_s").value + last.at("sizing_s").value);
  EXPECT_GE(last.at("calls").value, 4);  // one per repetition at least, Google Benchmark's trials besides
  for (const auto& r : runs) {
    EXPECT_EQ(r.counters.at("verified").value, 1);
    // telemetry of the timed region: 1 J per operation of 2e6 useful bytes = 500 J/GB
    EXPECT_DOUBLE_EQ(r.counters.at("energy_J_per_GB").value, 500.0);
    EXPECT_EQ(r.counters.at("sm_clock_MHz").value, 1980);
  }
  // after sizing, every timed sample is one whole batch
  const int batch = choose_batch(1e-5);
  int full = 0;
  for (int b : backend.calls.batches) full += b == batch ? 1 : 0;
  EXPECT_GT(full, 4);
}

TEST(Runner, OutliersAgainstTheMedians) {
  // one sample of ten twice as slow; a repetition all 40 % slower than what came before
  std::vector<double> samples(10, 1e-6);
  samples[3] = 2e-6;
  SampleOutliers o = find_outliers(samples, {});
  EXPECT_EQ(o.samples, 1);
  EXPECT_FALSE(o.repetition);  // nothing before it to differ from
  const std::vector<double> earlier(30, 1e-6);
  o = find_outliers(std::vector<double>(10, 1.4e-6), earlier);
  EXPECT_EQ(o.samples, 0);
  EXPECT_TRUE(o.repetition);
  EXPECT_NEAR(o.reference_per_op, 1e-6, 1e-12);
  EXPECT_FALSE(find_outliers(std::vector<double>(10, 1.1e-6), earlier).repetition);  // within 25 %
  EXPECT_TRUE(find_outliers(std::vector<double>(10, 0.5e-6), earlier).repetition);   // faster counts too
}

// Two slow warm-ups do not leave the batch small; a repetition on a busy machine is marked as
// an outlier, the others are not; samples that fall far short of 2 ms grow the batch.
TEST(RunnerUnderGoogleBenchmark, SlowWarmUpsAndABusyRepetition) {
  // A dry run on the same virtual clock counts the long timed loops: Google Benchmark's last
  // trial (which is the first repetition) and the two repetitions after it.
  int loops = 0;
  {
    ClockBackend dry(1e-6, 0);
    RunOutcome dry_outcome;
    (void)run_through_google_benchmark(dry, copy_case(1e6), 3, &dry_outcome);
    loops = dry.full_loops;
  }
  ASSERT_GE(loops, 3);
  ClockBackend backend(1e-6, 0);
  backend.calls.scale = [&](int call) {
    if (call < 2) return 50.0;                           // the first two single-operation warm-ups crawl
    return backend.full_loops >= loops - 1 ? 3.0 : 1.0;  // the last repetition runs on a busy machine
  };
  RunOutcome outcome;
  testing::internal::CaptureStderr();
  const auto runs = run_through_google_benchmark(backend, copy_case(1e6), 3, &outcome);
  const std::string said = testing::internal::GetCapturedStderr();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].counters.at("ops_per_sample").value, choose_batch(1e-6));  // not 1/50 of it
  EXPECT_EQ(runs[0].counters.at("outlier").value, 0);
  EXPECT_EQ(runs[1].counters.at("outlier").value, 0);
  EXPECT_EQ(runs[2].counters.at("outlier").value, 1);  // three times slower
  // Numbered as the file numbers them (repetition_index): Google Benchmark's trial runs do not count.
  EXPECT_NE(said.find(": repetition_index 2 is an outlier"), std::string::npos) << said;
}

TEST(RunnerUnderGoogleBenchmark, ShortSamplesGrowTheBatch) {
  ClockBackend backend(1e-5, 0);
  int sized_after = -1;
  backend.calls.scale = [&](int call) {
    // after sizing (3 warm-ups and up to 5 sizing samples), the device gets ten times faster
    if (sized_after < 0 && call >= 8) sized_after = call;
    return sized_after >= 0 ? 0.1 : 1.0;
  };
  RunOutcome outcome;
  const auto runs = run_through_google_benchmark(backend, copy_case(1e6), 2, &outcome);
  ASSERT_EQ(runs.size(), 2u);
  // samples of the old batch now last 0.2 ms, far short of 2 ms: the batch grew to fill 2 ms
  EXPECT_EQ(runs.back().counters.at("ops_per_sample").value, std::min(kMaxBatch, choose_batch(1e-6)));
}

}  // namespace
}  // namespace gpubench
