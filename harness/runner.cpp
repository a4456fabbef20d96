#include "harness/runner.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpubench {

int choose_batch(double seconds_per_op) {
  if (!(seconds_per_op > 0)) return 1;
  const double n = std::ceil(kMinSampleSeconds / seconds_per_op);
  return static_cast<int>(std::clamp(n, 1.0, static_cast<double>(kMaxBatch)));
}

namespace {
// The compute peak a row's FLOP are measured against; 0 for memory peaks and where the card has
// none (FP8 tensor cores before Hopper and Ada). One table for pct_of_peak and the roofline's roof.
double compute_peak_TFLOPS(PeakKind kind, const Peaks& peaks) {
  switch (kind) {
    case PeakKind::fp32: return peaks.fp32_TFLOPS;
    case PeakKind::fp16_tensor: return peaks.fp16_tensor_TFLOPS;
    case PeakKind::bf16_tensor: return peaks.bf16_tensor_TFLOPS;
    case PeakKind::fp8_tensor: return peaks.fp8_tensor_TFLOPS;
    default: return 0;  // memory rows, and those with no peak (FP16x2)
  }
}
}  // namespace

double attainable_TFLOPS(const WorkModel& w, const Peaks& peaks) {
  const double compute = compute_peak_TFLOPS(w.peak, peaks);
  if (!(w.flop > 0) || !(w.traffic_bytes > 0) || !(compute > 0) || !(peaks.dram_GBps > 0)) return 0;
  return std::min(compute, peaks.dram_GBps * (w.flop / w.traffic_bytes) / 1e3);
}

DerivedCounters derive_counters(const WorkModel& w, double seconds_per_op, const Peaks& peaks, bool dram_level) {
  DerivedCounters d;
  if (!(seconds_per_op > 0)) return d;
  d.GBps = w.useful_bytes / seconds_per_op / 1e9;
  if (w.traffic_bytes > 0 && w.traffic_bytes != w.useful_bytes) d.sector_GBps = w.traffic_bytes / seconds_per_op / 1e9;
  if (w.flop > 0) d.TFLOPS = w.flop / seconds_per_op / 1e12;
  double peak = 0, achieved = 0;
  switch (w.peak) {
    case PeakKind::smem:
      peak = peaks.smem_GBps;
      achieved = d.GBps;
      break;
    case PeakKind::l1:
    case PeakKind::l2: break;  // no theoretical cache figure: no percentage
    case PeakKind::dram:
      peak = peaks.dram_GBps;
      achieved = d.GBps;
      break;
    case PeakKind::pcie_h2d:
    case PeakKind::pcie_d2h:
      peak = peaks.pcie_GBps;
      achieved = d.GBps;
      if (peaks.pcie_protocol_GBps > 0) d.pct_of_protocol_limit = 100.0 * d.GBps / peaks.pcie_protocol_GBps;
      break;
    case PeakKind::fp32:
    case PeakKind::fp16_tensor:
    case PeakKind::bf16_tensor:
    case PeakKind::fp8_tensor:  // 0 on cards without FP8 tensor cores: no percentage
      peak = compute_peak_TFLOPS(w.peak, peaks);
      achieved = d.TFLOPS;
      break;
    case PeakKind::none: break;
  }
  if (peak > 0) d.pct_of_peak = 100.0 * achieved / peak;
  // The intensity sweep against the roofline itself: a memory-bound point is a share of what its
  // intensity allows (the H100's fma:0.5 row at 2.90 TB/s read 0.54 % of the FP32 peak: 87 % of
  // its roof).
  if (const double roof = dram_level ? attainable_TFLOPS(w, peaks) : 0; roof > 0)
    d.pct_of_roofline = 100.0 * d.TFLOPS / roof;
  return d;
}

std::map<std::string, double> telemetry_counters(const Telemetry& t, const WorkModel& work, std::int64_t ops) {
  std::map<std::string, double> k;
  k["sm_clock_MHz"] = t.sm_clock_MHz;
  k["sm_clock_min_MHz"] = t.sm_clock_min_MHz;
  k["mem_clock_MHz"] = t.mem_clock_MHz;
  k["throttled"] = t.throttled ? 1 : 0;
  k["power_capped"] = t.power_capped ? 1 : 0;
  if (t.power_W >= 0) k["power_W"] = t.power_W;
  if (t.temperature_C >= 0) k["temperature_C"] = t.temperature_C;
  // NVML's energy counter moves in steps (an H100 run showed 2-3x the board's power over 0.1 s
  // regions), so energy is only reported over regions long enough to average them out.
  if (t.energy_J > 0 && ops > 0 && t.seconds >= kMinEnergySeconds) {
    const double per_op = t.energy_J / static_cast<double>(ops);
    if (work.useful_bytes > 0) k["energy_J_per_GB"] = per_op / (work.useful_bytes / 1e9);
    if (work.flop > 0) k["energy_pJ_per_FLOP"] = per_op / work.flop * 1e12;
  }
  return k;
}

namespace {
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
}  // namespace

SampleOutliers find_outliers(const std::vector<double>& samples, const std::vector<double>& earlier) {
  SampleOutliers o;
  if (samples.empty()) return o;
  const double median = median_of(samples);
  for (double s : samples)
    if (s > kOutlierFactor * median || s * kOutlierFactor < median) ++o.samples;
  std::vector<double> all = earlier;
  all.insert(all.end(), samples.begin(), samples.end());
  double sum = 0;
  for (double s : samples) sum += s;
  o.repetition_per_op = sum / static_cast<double>(samples.size());
  o.reference_per_op = median_of(all);
  if (!earlier.empty() && o.reference_per_op > 0) {
    const double ratio = o.repetition_per_op / o.reference_per_op;
    o.repetition = ratio > 1 + kOutlierRepetitionDeviation || ratio < 1 - kOutlierRepetitionDeviation;
  }
  return o;
}

namespace {

// The workload of the case that ran last, kept so that repetitions of one benchmark (which run
// back to back unless interleaving is asked for) allocate and fill their inputs once, size
// their batch once and verify once. Only one is kept, so memory holds a single working set.
struct LastWorkload {
  const BenchCase* c = nullptr;
  std::unique_ptr<Workload> w;
  int batch = 0;                      ///< operations per timed sample, 0 until sized
  bool verified = false;              ///< the output of a timed loop was checked
  std::vector<double> sample_per_op;  ///< seconds per operation of every timed sample so far
  /// Google Benchmark's repetitions run with one iteration count, its trial runs with growing
  /// ones: the count of the calls so far, and how many calls in a row had it (the next call's
  /// repetition_index, in the outlier line).
  benchmark::IterationCount rep_iterations = 0;
  int repetitions = 0;
  /// The device has run this workload with no host work since (no verification in between):
  /// the next call needs no warm-up.
  bool warm = false;
  double prepare_seconds = 0;  ///< wall time of create + prepare (allocation, inputs)
  double sizing_seconds = 0;   ///< wall time of size_batch
  double verify_seconds = 0;   ///< wall time of verify()
  double wall_seconds = 0;     ///< wall time of every call so far, trials included
  int calls = 0;               ///< Google Benchmark calls of this benchmark, trial runs included
  /// The backend's used memory before create (the previous working set freed) and the most
  /// read since, after prepare and after each timed loop: memory_used_bytes is their difference.
  std::optional<std::uint64_t> memory_used_before;
  std::uint64_t memory_used_peak = 0;
};
LastWorkload& last_workload() {
  static LastWorkload last;
  return last;
}

std::atomic<int> g_interrupt{0};
static_assert(std::atomic<int>::is_always_lock_free, "set from a signal handler");

}  // namespace

void request_interrupt(int signal_number) { g_interrupt.store(signal_number); }
int interrupt_signal() { return g_interrupt.load(); }

int size_batch(Workload& w) {
  // The best of three single operations: a slow first one (lazy loading, a busy host, clocks
  // ramping) must not leave the batch too small. The estimate includes the fixed cost of a
  // sample (a graph launch, waking the host threads), so grow the batch until one sample
  // fills kMinSampleSeconds; within kSizedFraction of it is close enough (each new batch
  // size on a GPU is a new CUDA graph to capture and instantiate).
  double best = w.run(1);
  for (int i = 0; i < 2; ++i) best = std::min(best, w.run(1));
  int batch = choose_batch(best);
  for (int round = 0; round < 4; ++round) {
    const double seconds = w.run(batch);
    if (seconds >= kSizedFraction * kMinSampleSeconds) break;
    const int next = choose_batch(seconds / batch);
    if (next <= batch) break;
    batch = next;
  }
  return batch;
}

namespace {

// The memory the workload holds now, into the benchmark's peak (backends without a reading: none).
void note_memory_use(LastWorkload& last, Backend& backend) {
  if (!last.memory_used_before) return;
  if (const auto now = backend.memory_reading())
    last.memory_used_peak = std::max(last.memory_used_peak, now->used_bytes);
}

// A run that failed (wrong output, an error, the device lost): counted, and its benchmark named once.
void count_failure(RunOutcome* outcome, const BenchCase* c) {
  ++outcome->failed;
  const std::string name = c->name();
  auto& names = outcome->failed_benchmarks;
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

// A row the backend declares it does not run here: a skip with the reason, in the result.
void skip_unavailable(benchmark::State& state, const BenchCase* c, const std::string& reason, RunOutcome* outcome) {
  state.SetLabel(row_label(*c));
  state.SkipWithError(("skipped: " + reason).c_str());
  ++outcome->skipped;
}

// Marks the run skipped with `message`. Before the timed loop has started, the loop is then
// entered and left at once: Google Benchmark 1.7 (Debian's) checks that every repetition of a
// benchmark reports the same iteration count before it sets the skipped ones aside, and a
// repetition skipped before its loop reports 0 (SIGABRT in ComputeStats when two earlier
// repetitions had run: an interrupt, a lost device or an error between repetitions). Entered,
// the loop reports the count Google Benchmark asked for, as a repetition skipped inside it does.
void skip_run(benchmark::State& state, const std::string& message, bool loop_started) {
  state.SkipWithError(message.c_str());
  if (!loop_started) {
    for (auto _ : state) {
    }
  }
}

void run_case(benchmark::State& state, Backend* backend, const BenchCase* c, RunOutcome* outcome) {
  state.SetLabel(row_label(*c));
  bool loop_started = false;  // the timed loop below has been entered
  if (!outcome->device_lost.empty()) {
    skip_run(state, "skipped: device lost earlier: " + outcome->device_lost, loop_started);
    ++outcome->skipped;
    return;
  }
  if (interrupt_signal() != 0) {
    skip_run(state, "interrupted", loop_started);
    return;
  }
  LastWorkload& last = last_workload();
  if (last.c != c) {
    last = LastWorkload{};  // free the previous working set before allocating this one
  }
  // What Google Benchmark was told: its real_time is reported_seconds / reported_ops, and every
  // counter derives from the same time per operation.
  double reported_seconds = 0;
  std::int64_t reported_ops = 0;
  std::int64_t executed_ops = 0;  // operations run while telemetry was sampled
  Telemetry telemetry;
  std::map<std::string, double> extras;  // the workload's own counters (extra_counters)
  const auto call_start = std::chrono::steady_clock::now();
  const auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  try {
    if (!last.w) {
      // Memory before the workload exists: it is created and prepared once per benchmark, so
      // its peak use is measured from here across every repetition.
      if (const auto before = backend->memory_reading()) {
        last.memory_used_before = before->used_bytes;
        last.memory_used_peak = before->used_bytes;
      }
      auto fresh = backend->create(*c);
      try {
        fresh->prepare();
      } catch (const DeviceHung&) {
        (void)fresh.release();  // as below: a hang in a preparation's fill or upload leaves its buffers
        throw;
      }
      last.w = std::move(fresh);
      last.c = c;
      last.prepare_seconds = since(call_start);
      note_memory_use(last, *backend);
    }
    Workload* w = last.w.get();
    ++last.calls;
    // Outputs matter only until they are verified (once per benchmark): after that, no poison.
    if (!last.verified) w->poison();
    if (last.batch == 0) {
      const auto sizing_start = std::chrono::steady_clock::now();
      last.batch = size_batch(*w);
      last.sizing_seconds += since(sizing_start);
    } else if (!last.warm) {
      // Warm-up: the device may have idled (clocks) while the host verified; one whole sample,
      // long enough (2 ms) for the clocks to come back, where one operation may take microseconds.
      (void)w->run(last.batch);
    }
    int batch = last.batch;
    if (!last.verified) w->poison();  // the verified output must come from the timed runs alone
    // One Google Benchmark iteration is one operation, so real_time is the time of one
    // operation whatever the batch (tools that compare two runs, like Google Benchmark's
    // compare.py, compare like with like). Operations run in samples of `batch`; each of a
    // sample's iterations is given the sample's time per operation. Google Benchmark's
    // min_time applies to those times, which add up to the device time measured.
    int left_in_sample = 0;
    double per_op = 0;
    std::vector<double> samples;  // seconds per operation of this repetition's samples
    backend->telemetry_start();   // clocks, power and energy while the samples run
    loop_started = true;
    for (auto _ : state) {
      if (left_in_sample == 0 && interrupt_signal() != 0) {
        state.SkipWithError("interrupted");  // after the sample that was running
        break;
      }
      if (left_in_sample == 0) {
        const double seconds = w->run(batch);
        // A sample that took no time is no measurement, and Google Benchmark, seeing none,
        // would ask for ten times the iterations again and again.
        if (!(seconds > 0))
          throw std::runtime_error("a timed sample of " + std::to_string(batch) +
                                   " operations measured no time (the timer saw no work)");
        per_op = seconds / batch;
        samples.push_back(per_op);
        left_in_sample = batch;
        executed_ops += batch;
        // A sample far shorter than intended (the batch was sized while the device was slow):
        // larger samples from here on.
        if (seconds < kMinSampleSeconds / 4 && batch < kMaxBatch) batch = last.batch = choose_batch(per_op);
      }
      state.SetIterationTime(per_op);
      reported_seconds += per_op;
      ++reported_ops;
      --left_in_sample;
    }
    telemetry = backend->telemetry_stop();
    // The workload's own counters, before the verification (a host-side check of up to a second,
    // while the device idles): a GEMM's paired cuBLAS reference runs right after its samples, in
    // their power and thermal state, inside this error handling (a lost device there is one) and
    // inside wall_s.
    if (interrupt_signal() == 0)
      extras = w->extra_counters(reported_ops > 0 ? reported_seconds / static_cast<double>(reported_ops) : 0);
    note_memory_use(last, *backend);  // what the timed runs allocated (workspaces, pools, graphs)
    if (interrupt_signal() != 0) return;
    last.warm = true;  // back-to-back calls need no warm-up; a verification in between does
    if (!last.verified) {
      const auto verify_start = std::chrono::steady_clock::now();
      const Verification v = w->verify();
      last.verify_seconds += since(verify_start);
      if (!v.ok) {
        last = LastWorkload{};  // a fresh workload for the next repetition
        skip_run(state, "verification failed: " + v.message, loop_started);
        count_failure(outcome, c);
        return;
      }
      last.verified = true;
      last.warm = false;
    }
    state.counters["ops_per_sample"] = batch;
    // Where a run's time goes (scripts/run_cost.py sums these): this benchmark's wall time so
    // far, Google Benchmark's trial runs and verification included, its preparation, batch
    // sizing and verification, and the number of calls (trial runs included).
    last.wall_seconds += since(call_start);
    state.counters["wall_s"] = last.wall_seconds;
    state.counters["prepare_s"] = last.prepare_seconds;
    state.counters["sizing_s"] = last.sizing_seconds;
    state.counters["verify_s"] = last.verify_seconds;
    state.counters["calls"] = last.calls;
    // Outliers are marked, not hidden: samples far from this repetition's median, and a
    // repetition far from the median of every sample of the benchmark so far.
    SampleOutliers o = find_outliers(samples, last.sample_per_op);
    // Google Benchmark's repetition_index (0-based): a new iteration count is a trial run or the
    // first repetition, and numbering starts again; every call with the count is one.
    if (state.max_iterations != last.rep_iterations) {
      last.rep_iterations = state.max_iterations;
      last.repetitions = 0;
    }
    o.repetition_index = last.repetitions++;
    if (samples.size() >= kMinOutlierSamples) {
      last.sample_per_op.insert(last.sample_per_op.end(), samples.begin(), samples.end());
    } else {
      o.repetition = false;
    }
    state.counters["outlier_samples"] = o.samples;
    state.counters["outlier"] = o.repetition ? 1 : 0;
    if (o.repetition)
      std::fprintf(stderr,
                   "gpubench: %s: repetition_index %d is an outlier: %.3g us per operation against %.3g us (was "
                   "the machine busy?)\n",
                   c->name().c_str(), o.repetition_index, o.repetition_per_op * 1e6, o.reference_per_op * 1e6);
  } catch (const SkipCase& e) {
    last = LastWorkload{};
    skip_run(state, std::string("skipped: ") + e.what(), loop_started);
    ++outcome->skipped;
    return;
  } catch (const DeviceLost& e) {
    if (dynamic_cast<const DeviceHung*>(&e) != nullptr) {
      // Freeing its buffers would wait for the work that never finishes: leave them be.
      outcome->device_hung = true;
      (void)last.w.release();
    }
    last = LastWorkload{};
    outcome->device_lost = e.what();
    skip_run(state, std::string("device lost: ") + e.what(), loop_started);
    count_failure(outcome, c);
    return;
  } catch (const std::exception& e) {
    last = LastWorkload{};
    skip_run(state, std::string("error: ") + e.what(), loop_started);
    count_failure(outcome, c);
    return;
  }

  const double per_op = reported_ops > 0 ? reported_seconds / static_cast<double>(reported_ops) : 0;
  const WorkModel& work = c->work;
  const DerivedCounters d = derive_counters(work, per_op, backend->peaks(), c->level == "dram");
  auto& k = state.counters;
  if (work.useful_bytes > 0) k["GB/s"] = d.GBps;
  if (d.sector_GBps > 0) k["sector_GB/s"] = d.sector_GBps;
  if (work.flop > 0) {
    k["TFLOPS"] = d.TFLOPS;
    k["flop_per_byte"] = work.intensity();
  }
  if (d.pct_of_peak >= 0) k["pct_of_peak"] = d.pct_of_peak;
  if (d.pct_of_protocol_limit >= 0) k["pct_of_protocol_limit"] = d.pct_of_protocol_limit;
  if (d.pct_of_roofline >= 0) k["pct_of_roofline"] = d.pct_of_roofline;
  if (work.metric == Metric::latency_us) k["latency_us"] = per_op * 1e6;
  k["working_set_bytes"] = work.working_set_bytes;
  if (last.memory_used_before)
    k["memory_used_bytes"] = static_cast<double>(last.memory_used_peak - *last.memory_used_before);
  k["verified"] = 1;
  if (telemetry.available) {
    for (const auto& [name, value] : telemetry_counters(telemetry, work, executed_ops)) k[name] = value;
  }
  for (const auto& [name, value] : extras) k[name] = value;
}

}  // namespace

void release_cached_workload() { last_workload() = LastWorkload{}; }

int register_cases(Backend& backend, const std::vector<BenchCase>& cases, RunOutcome& outcome) {
  int n = 0;
  for (const auto& c : cases) {
    const BenchCase* row = &c;
    const std::string why = backend.unavailable_reason(c);
    if (why.empty()) {
      // No Unit(): --benchmark_time_unit sets it (us unless given: init_google_benchmark), which a
      // per-benchmark unit would override silently.
      benchmark::RegisterBenchmark(c.name().c_str(), run_case, &backend, row, &outcome)->UseManualTime();
    } else {
      benchmark::RegisterBenchmark(c.name().c_str(), skip_unavailable, row, why, &outcome);
    }
    ++n;
  }
  return n;
}

}  // namespace gpubench
