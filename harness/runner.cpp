#include "harness/runner.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>

namespace gpubench {

int choose_batch(double seconds_per_op) {
  if (!(seconds_per_op > 0)) return 1;
  const double n = std::ceil(kMinSampleSeconds / seconds_per_op);
  return static_cast<int>(std::clamp(n, 1.0, static_cast<double>(kMaxBatch)));
}

DerivedCounters derive_counters(const WorkModel& w, double seconds_per_op, const Peaks& peaks) {
  DerivedCounters d;
  if (!(seconds_per_op > 0)) return d;
  d.GBps = w.useful_bytes / seconds_per_op / 1e9;
  if (w.traffic_bytes > 0 && w.traffic_bytes != w.useful_bytes) d.sector_GBps = w.traffic_bytes / seconds_per_op / 1e9;
  if (w.flop > 0) d.TFLOPS = w.flop / seconds_per_op / 1e12;
  double peak = 0, achieved = 0;
  switch (w.peak) {
    case PeakKind::dram:
      peak = peaks.dram_GBps;
      achieved = d.GBps;
      break;
    case PeakKind::pcie_h2d:
    case PeakKind::pcie_d2h:
      peak = peaks.pcie_GBps;
      achieved = d.GBps;
      break;
    case PeakKind::fp32:
      peak = peaks.fp32_TFLOPS;
      achieved = d.TFLOPS;
      break;
    case PeakKind::fp16_tensor:
      peak = peaks.fp16_tensor_TFLOPS;
      achieved = d.TFLOPS;
      break;
    case PeakKind::none: break;
  }
  if (peak > 0) d.pct_of_peak = 100.0 * achieved / peak;
  return d;
}

namespace {

// The workload of the case that ran last, kept so that repetitions of one benchmark (which run
// back to back unless interleaving is asked for) allocate and fill their inputs once. Only one
// is kept, so memory holds a single working set.
struct LastWorkload {
  const BenchCase* c = nullptr;
  std::unique_ptr<Workload> w;
};
LastWorkload& last_workload() {
  static LastWorkload last;
  return last;
}

void run_case(benchmark::State& state, Backend* backend, const BenchCase* c, RunOutcome* outcome) {
  if (!outcome->device_lost.empty()) {
    state.SkipWithError(("skipped: device lost earlier: " + outcome->device_lost).c_str());
    ++outcome->skipped;
    return;
  }
  LastWorkload& last = last_workload();
  if (last.c != c) {
    last.w.reset();  // free the previous working set before allocating this one
    last.c = nullptr;
  }
  Workload* w = last.w.get();
  double total_seconds = 0;
  std::int64_t ops = 0;
  Telemetry telemetry;
  try {
    if (!w) {
      auto fresh = backend->create(*c);
      fresh->prepare();
      last.w = std::move(fresh);
      last.c = c;
      w = last.w.get();
    }
    w->poison();
    // Warm-up: lazy module loading, first-touch page faults, clocks ramping; then size the batch.
    // The first estimate includes the fixed cost of a sample (a graph launch, waking the host
    // threads), so grow the batch until one sample really fills kMinSampleSeconds.
    int batch = choose_batch(w->run(1));
    for (int round = 0; round < 4; ++round) {
      const double seconds = w->run(batch);
      const int next = choose_batch(seconds / batch);
      if (next <= batch) break;
      batch = next;
    }
    w->poison();  // the verified output must come from the timed runs alone
    for (auto _ : state) {
      const double s = w->run(batch);
      state.SetIterationTime(s);
      total_seconds += s;
      ops += batch;
    }
    telemetry = backend->sample_telemetry();
    const Verification v = w->verify();
    if (!v.ok) {
      last = LastWorkload{};  // a fresh workload for the next repetition
      state.SkipWithError(("verification failed: " + v.message).c_str());
      ++outcome->failed;
      return;
    }
    state.counters["ops_per_iteration"] = batch;
  } catch (const SkipCase& e) {
    last = LastWorkload{};
    state.SkipWithError((std::string("skipped: ") + e.what()).c_str());
    ++outcome->skipped;
    return;
  } catch (const DeviceLost& e) {
    last = LastWorkload{};
    outcome->device_lost = e.what();
    state.SkipWithError((std::string("device lost: ") + e.what()).c_str());
    ++outcome->failed;
    return;
  } catch (const std::exception& e) {
    last = LastWorkload{};
    state.SkipWithError((std::string("error: ") + e.what()).c_str());
    ++outcome->failed;
    return;
  }

  const double per_op = ops > 0 ? total_seconds / static_cast<double>(ops) : 0;
  const WorkModel& work = c->work;
  const DerivedCounters d = derive_counters(work, per_op, backend->peaks());
  auto& k = state.counters;
  if (work.useful_bytes > 0) k["GB/s"] = d.GBps;
  if (d.sector_GBps > 0) k["sector_GB/s"] = d.sector_GBps;
  if (work.flop > 0) {
    k["TFLOPS"] = d.TFLOPS;
    k["flop_per_byte"] = work.intensity();
  }
  if (d.pct_of_peak >= 0) k["pct_of_peak"] = d.pct_of_peak;
  k["working_set_bytes"] = work.working_set_bytes;
  k["verified"] = 1;
  if (telemetry.available) {
    k["sm_clock_MHz"] = telemetry.sm_clock_MHz;
    k["mem_clock_MHz"] = telemetry.mem_clock_MHz;
    k["throttled"] = telemetry.throttled ? 1 : 0;
  }
  for (const auto& [name, value] : w->extra_counters(per_op)) k[name] = value;
}

}  // namespace

void release_cached_workload() { last_workload() = LastWorkload{}; }

int register_cases(Backend& backend, const std::vector<BenchCase>& cases, RunOutcome& outcome) {
  int n = 0;
  for (const auto& c : cases) {
    if (!backend.supports(c)) continue;
    const BenchCase* row = &c;
    benchmark::RegisterBenchmark(c.name().c_str(), run_case, &backend, row, &outcome)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    ++n;
  }
  return n;
}

}  // namespace gpubench
