// The runner's safety net, tested as it runs: rows registered with register_cases and run by
// Google Benchmark itself (RunSpecifiedBenchmarks with a reporter that keeps every run), on a
// backend whose workloads are planted: one writes nothing, one writes a wrong last element, one
// writes only during the warm-up run, one is correct, one cannot run here (SkipCase in prepare)
// and one the backend declares unavailable. A wrong output must be an error row and counted as a
// failure, never a number; a skip is a skip, never a failure.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/runner.h"
#include "harness/verify.h"
#include "tests/google_benchmark_run.h"

namespace gpubench {
namespace {

// Each operation takes exactly this long on the workloads' virtual clock: fast, exact runs.
constexpr double kPerOp = 1e-5;
constexpr std::uint32_t kPattern = 0x1234567u;  // out[i] = kPattern + i is the right output
constexpr std::size_t kElements = 1031;         // odd: the last index is no multiple of anything
constexpr const char* kSkipReason = "needs 1 TiB of memory (planted)";
constexpr const char* kUnavailableReason = "planted: not on this backend";

// What each planted workload does; the row's variant names it.
enum class Plant {
  correct,
  writes_nothing,
  wrong_last,
  warm_up_only,
  skips_in_prepare,
  unavailable,
  loses_device_in_counters,
  measures_no_time
};

const std::map<std::string, Plant>& plants() {
  static const std::map<std::string, Plant> p = {{"correct", Plant::correct},
                                                 {"writes_nothing", Plant::writes_nothing},
                                                 {"wrong_last", Plant::wrong_last},
                                                 {"warm_up_only", Plant::warm_up_only},
                                                 {"skips_in_prepare", Plant::skips_in_prepare},
                                                 {"unavailable", Plant::unavailable},
                                                 {"loses_device_in_counters", Plant::loses_device_in_counters},
                                                 {"measures_no_time", Plant::measures_no_time}};
  return p;
}

// What the runner asked of the workloads of one row.
struct Calls {
  int creates = 0, prepares = 0, verifies = 0, runs = 0, counters = 0;
  int counters_before_a_verify = 0;  // extra_counters calls made while a verification was still to come
};

class PlantedWorkload final : public Workload {
 public:
  PlantedWorkload(Plant plant, Calls* calls) : plant_(plant), calls_(calls) {}
  void prepare() override {
    ++calls_->prepares;
    if (plant_ == Plant::skips_in_prepare) throw SkipCase(kSkipReason);
    out_.assign(kElements, 0);
  }
  void poison() override { poison_fill(out_.data(), out_.size() * 4); }
  double run(int batch) override {
    ++calls_->runs;
    const bool first_after_prepare = runs_++ == 0;  // the runner's first run: its warm-up
    const bool writes = plant_ == Plant::correct || plant_ == Plant::wrong_last ||
                        plant_ == Plant::loses_device_in_counters ||
                        (plant_ == Plant::warm_up_only && first_after_prepare);
    if (writes) {
      for (std::size_t i = 0; i < out_.size(); ++i) out_[i] = static_cast<std::uint32_t>(kPattern + i);
    }
    if (plant_ == Plant::wrong_last) out_.back() ^= 0x10u;
    return plant_ == Plant::measures_no_time ? 0.0 : batch * kPerOp;
  }
  Verification verify() override {
    ++calls_->verifies;
    return check_write_pattern(out_.data(), out_.size(), kPattern);
  }
  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    ++calls_->counters;
    if (calls_->verifies == 0) ++calls_->counters_before_a_verify;
    if (plant_ == Plant::loses_device_in_counters) throw DeviceLost("planted: lost while counting");
    return {{"planted_per_op_us", seconds_per_op * 1e6}};
  }

 private:
  Plant plant_;
  Calls* calls_;
  int runs_ = 0;
  std::vector<std::uint32_t> out_;
};

class PlantedBackend final : public Backend {
 public:
  std::string kind() const override { return "host"; }
  const DeviceDescription& device() const override { return device_; }
  const Peaks& peaks() const override { return peaks_; }
  std::string device_key() const override { return "planted"; }
  std::string unavailable_reason(const BenchCase& c) const override {
    return plants().at(c.variant) == Plant::unavailable ? kUnavailableReason : "";
  }
  std::unique_ptr<Workload> create(const BenchCase& c) override {
    Calls& k = calls[c.variant];
    ++k.creates;
    return std::make_unique<PlantedWorkload>(plants().at(c.variant), &k);
  }
  std::map<std::string, std::string> context() const override { return {}; }
  std::map<std::string, Calls> calls;  // by variant

 private:
  DeviceDescription device_;
  Peaks peaks_;
};

BenchCase planted_case(const std::string& variant) {
  BenchCase c;
  c.family = "bandwidth";
  c.kernel = "write";
  c.variant = variant;
  c.params = "elements:" + std::to_string(kElements);
  c.args["bytes"] = 4.0 * kElements;
  c.work = write_work(4.0 * kElements);
  c.sweep = "bytes";
  return c;
}

struct Result {
  std::map<std::string, test_run::Runs> runs;  // by variant
  RunOutcome outcome;
};

// The rows of `variants`, registered by register_cases and run by Google Benchmark.
Result run_rows(PlantedBackend& backend, const std::vector<std::string>& variants, int repetitions = 2) {
  std::vector<BenchCase> cases;
  for (const auto& v : variants) cases.push_back(planted_case(v));
  Result result;
  test_run::Reported reported = test_run::run_rows(backend, cases, result.outcome, repetitions);
  EXPECT_EQ(reported.registered, static_cast<int>(variants.size()));
  for (const auto& c : cases) result.runs[c.variant] = reported.by_name[c.name()];
  return result;
}

// Every run of the row is an error whose message starts with `prefix`; returns how many.
int expect_errors(const std::vector<benchmark::BenchmarkReporter::Run>& runs, const std::string& prefix) {
  EXPECT_FALSE(runs.empty()) << "the row was not reported";
  for (const auto& r : runs) {
    EXPECT_TRUE(r.error_occurred) << prefix;
    EXPECT_EQ(r.error_message.rfind(prefix, 0), 0u)
        << "'" << r.error_message << "' does not start with '" << prefix << "'";
    EXPECT_EQ(r.counters.count("verified"), 0u) << "an error row carries no verified counter";
    EXPECT_EQ(r.counters.count("GB/s"), 0u) << "an error row carries no number";
  }
  return static_cast<int>(runs.size());
}

std::string element_message(std::size_t i) { return "verification failed: element " + std::to_string(i) + ": "; }

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

// (a) A workload that writes nothing: its output stays poisoned.
TEST(RunnerSafetyNet, AnOutputNeverWrittenIsAFailedRow) {
  PlantedBackend backend;
  const Result r = run_rows(backend, {"writes_nothing"});
  const int errors = expect_errors(r.runs.at("writes_nothing"), element_message(0));
  for (const auto& run : r.runs.at("writes_nothing"))
    EXPECT_NE(run.error_message.find("got " + hex(kPoisonU32)), std::string::npos) << run.error_message;
  EXPECT_EQ(r.outcome.failed, errors);
  EXPECT_EQ(r.outcome.failed_benchmarks, std::vector<std::string>{planted_case("writes_nothing").name()});
  EXPECT_EQ(r.outcome.skipped, 0);
  EXPECT_EQ(backend.calls["writes_nothing"].verifies, errors);  // verified every time, never let through
}

// A timer that saw no work (0 s for a sample): an error row, where Google Benchmark, given no
// time, would have asked for ten times the iterations without end.
TEST(RunnerSafetyNet, ASampleThatMeasuredNoTimeIsAnErrorNotAnEndlessTrial) {
  PlantedBackend backend;
  const Result r = run_rows(backend, {"measures_no_time"});
  const int errors = expect_errors(r.runs.at("measures_no_time"), "error: a timed sample of ");
  for (const auto& run : r.runs.at("measures_no_time"))
    EXPECT_NE(run.error_message.find("measured no time"), std::string::npos) << run.error_message;
  EXPECT_EQ(r.outcome.failed, errors);
  EXPECT_LE(backend.calls["measures_no_time"].runs, 40) << "each call gives up at its first sample";
}

// (b) A wrong element at the last index: the error names that index and both values.
TEST(RunnerSafetyNet, AWrongLastElementIsAFailedRowNamingIt) {
  PlantedBackend backend;
  const Result r = run_rows(backend, {"wrong_last"});
  const std::uint32_t want = static_cast<std::uint32_t>(kPattern + kElements - 1);
  const int errors = expect_errors(
      r.runs.at("wrong_last"), element_message(kElements - 1) + "expected " + hex(want) + ", got " + hex(want ^ 0x10u));
  EXPECT_EQ(r.outcome.failed, errors);
  EXPECT_EQ(r.outcome.failed_benchmarks, std::vector<std::string>{planted_case("wrong_last").name()});
  EXPECT_EQ(r.outcome.skipped, 0);
}

// (c) Output written only by the warm-up run (the first run after prepare): the runner poisons
// between the warm-up and the timed runs, so the timed runs' (absent) output is what is checked.
TEST(RunnerSafetyNet, AnOutputWrittenOnlyByTheWarmUpFails) {
  PlantedBackend backend;
  const Result r = run_rows(backend, {"warm_up_only"});
  const int errors = expect_errors(r.runs.at("warm_up_only"), element_message(0));
  for (const auto& run : r.runs.at("warm_up_only"))
    EXPECT_NE(run.error_message.find("got " + hex(kPoisonU32)), std::string::npos) << run.error_message;
  EXPECT_EQ(r.outcome.failed, errors);
  EXPECT_EQ(r.outcome.failed_benchmarks, std::vector<std::string>{planted_case("warm_up_only").name()});
  EXPECT_GT(backend.calls["warm_up_only"].runs, 1);  // the warm-up wrote; later runs did not
}

// A workload's own counters come before the verification (a GEMM's paired cuBLAS reference runs
// right after the kernel's samples, not after a second of host-side checking), and a device lost
// there is the run's lost device: a failed row, not an exception Google Benchmark does not catch
// (std::terminate, no result, the temporary file left behind).
TEST(RunnerSafetyNet, TheWorkloadsCountersComeBeforeTheVerificationInsideTheSafetyNet) {
  PlantedBackend backend;
  const Result ok = run_rows(backend, {"correct"}, 2);
  EXPECT_GE(backend.calls["correct"].counters_before_a_verify, 1);
  EXPECT_EQ(backend.calls["correct"].verifies, 1);
  const Result lost = run_rows(backend, {"loses_device_in_counters"}, 2);
  const auto& runs = lost.runs.at("loses_device_in_counters");
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs.front().error_message, "device lost: planted: lost while counting");
  for (const auto& r : runs) {
    EXPECT_TRUE(r.error_occurred);
    EXPECT_EQ(r.counters.count("GB/s"), 0u) << "a run whose device was lost carries no number";
  }
  EXPECT_EQ(lost.outcome.device_lost, "planted: lost while counting");
  EXPECT_GE(lost.outcome.failed, 1);
  EXPECT_EQ(backend.calls["loses_device_in_counters"].verifies, 0) << "no verification after the device was lost";
}

// (d) A correct workload: verified once, every counter derived from the virtual clock.
TEST(RunnerSafetyNet, ACorrectOutputIsVerifiedWithItsCounters) {
  PlantedBackend backend;
  const Result r = run_rows(backend, {"correct"}, 3);
  const auto& runs = r.runs.at("correct");
  ASSERT_EQ(runs.size(), 3u);
  for (const auto& run : runs) {
    EXPECT_FALSE(run.error_occurred) << run.error_message;
    EXPECT_EQ(run.counters.at("verified").value, 1);
    EXPECT_NEAR(run.counters.at("GB/s").value, 4.0 * kElements / kPerOp / 1e9, 1e-9);
    EXPECT_EQ(run.counters.at("ops_per_sample").value, choose_batch(kPerOp));
    EXPECT_EQ(run.counters.at("working_set_bytes").value, 4.0 * kElements);
    EXPECT_NEAR(run.counters.at("planted_per_op_us").value, kPerOp * 1e6, 1e-9);  // the workload's own
    for (const char* k : {"wall_s", "prepare_s", "sizing_s", "verify_s", "calls", "outlier", "outlier_samples"})
      EXPECT_EQ(run.counters.count(k), 1u) << k;
    EXPECT_EQ(run.report_label, row_label(planted_case("correct")));
  }
  EXPECT_EQ(r.outcome.failed, 0);
  EXPECT_TRUE(r.outcome.failed_benchmarks.empty());
  EXPECT_EQ(r.outcome.skipped, 0);
  EXPECT_EQ(backend.calls["correct"].prepares, 1);
  EXPECT_EQ(backend.calls["correct"].verifies, 1);
}

// (e) prepare() throws SkipCase: a skip with its reason, counted as skipped, not as failed.
TEST(RunnerSafetyNet, SkipCaseIsASkipNotAFailure) {
  PlantedBackend backend;
  const Result r = run_rows(backend, {"skips_in_prepare"});
  const int skips = expect_errors(r.runs.at("skips_in_prepare"), std::string("skipped: ") + kSkipReason);
  for (const auto& run : r.runs.at("skips_in_prepare"))
    EXPECT_EQ(run.error_message, std::string("skipped: ") + kSkipReason);
  EXPECT_EQ(r.outcome.skipped, skips);
  EXPECT_EQ(r.outcome.failed, 0);
  EXPECT_TRUE(r.outcome.failed_benchmarks.empty());
  EXPECT_EQ(backend.calls["skips_in_prepare"].runs, 0);
}

// (f) A row the backend declares unavailable: "skipped: <reason>", never created or run.
TEST(RunnerSafetyNet, AnUnavailableRowIsSkippedWithItsReasonAndNotRun) {
  PlantedBackend backend;
  const Result r = run_rows(backend, {"unavailable"});
  const int skips = expect_errors(r.runs.at("unavailable"), std::string("skipped: ") + kUnavailableReason);
  for (const auto& run : r.runs.at("unavailable")) {
    EXPECT_EQ(run.error_message, std::string("skipped: ") + kUnavailableReason);
    EXPECT_EQ(run.report_label, row_label(planted_case("unavailable")));
  }
  EXPECT_EQ(r.outcome.skipped, skips);
  EXPECT_EQ(r.outcome.failed, 0);
  EXPECT_TRUE(r.outcome.failed_benchmarks.empty());
  EXPECT_EQ(backend.calls["unavailable"].creates, 0);
}

// All of them in one run, as gpubench runs a table: a failed row neither stops nor taints the
// others, and the outcome counts exactly the failed and the skipped rows.
TEST(RunnerSafetyNet, OneRunOfEveryPlant) {
  PlantedBackend backend;
  const Result r =
      run_rows(backend, {"writes_nothing", "correct", "wrong_last", "skips_in_prepare", "warm_up_only", "unavailable"});
  int failed = 0;
  failed += expect_errors(r.runs.at("writes_nothing"), element_message(0));
  failed += expect_errors(r.runs.at("wrong_last"), element_message(kElements - 1));
  failed += expect_errors(r.runs.at("warm_up_only"), element_message(0));
  int skipped = 0;
  skipped += expect_errors(r.runs.at("skips_in_prepare"), "skipped: ");
  skipped += expect_errors(r.runs.at("unavailable"), "skipped: ");
  ASSERT_EQ(r.runs.at("correct").size(), 2u);
  for (const auto& run : r.runs.at("correct")) {
    EXPECT_FALSE(run.error_occurred) << run.error_message;
    EXPECT_EQ(run.counters.at("verified").value, 1);
  }
  EXPECT_EQ(r.outcome.failed, failed);
  EXPECT_EQ(r.outcome.failed_benchmarks,
            (std::vector<std::string>{planted_case("writes_nothing").name(), planted_case("wrong_last").name(),
                                      planted_case("warm_up_only").name()}));
  EXPECT_EQ(r.outcome.skipped, skipped);
  EXPECT_TRUE(r.outcome.device_lost.empty());
}

}  // namespace
}  // namespace gpubench
