// The backend seam: the CUDA backend and the host backend provide the same benchmark families
// through this one interface, so registration, timing, counters and verification are written
// once (harness/runner.cpp) and each backend only knows how to run its own workloads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/model/device.h"
#include "harness/model/work_model.h"

namespace gpubench {

/// One benchmark instance from a family table: its name parts, parameters and work model.
/// The full name is family/kernel/variant/params and is stable across releases.
struct BenchCase {
  std::string family;                  ///< "bandwidth", "compute" or "roofline"
  std::string kernel;                  ///< e.g. "copy", "strided", "sgemm", "pcie_h2d"
  std::string variant;                 ///< "kernel" for the hand-written one, the library name for references
  std::string params;                  ///< e.g. "bytes:64MiB" or "bytes:256MiB,stride:8"
  std::map<std::string, double> args;  ///< numeric parameters: "bytes", "stride", "m", ...
  WorkModel work;                      ///< per execution
  int min_cc = 0;                      ///< minimum compute capability x10 (80 = sm_80); 0 for any
  bool needs_flush = false;            ///< working set large enough that the L2 must be flushed first
  /// DRAM-sized rows that rotate instead of flushing: copies of their buffers cycled through,
  /// together at least 4 x L2, so each pass misses the L2 (1 = no rotation).
  int slots = 1;
  /// The memory level the row targets, as the result's label names it: "dram", "l2" (on the
  /// host: the last-level cache), "smem", "pcie" (the host link), "p2p" (a copy between two
  /// GPUs; the link is in `path`) or "none" (compute rows).
  std::string level = "none";
  /// The argument the family sweeps, the x axis of the row's plot ("bytes", "stride", "k", "m").
  std::string sweep;
  /// Peer-to-peer rows (families/p2p): the link to the peer GPU from NVML's topology
  /// ("nvlink", "pcie_switch", "pcie_host_bridge", ..., "unknown"), written into the label as
  /// path=; "" for every other row (no path= in their label).
  std::string path;

  std::string name() const { return family + "/" + kernel + "/" + variant + "/" + params; }
  /// family/kernel/variant: the key backends use to find the workload factory.
  std::string key() const { return family + "/" + kernel + "/" + variant; }
  double arg(const std::string& k) const {
    auto it = args.find(k);
    if (it == args.end()) throw std::logic_error("benchmark " + name() + " lacks argument " + k);
    return it->second;
  }
};

/// Thrown from Workload::prepare() when a case cannot run here (does not fit in memory, the
/// architecture is too old): the benchmark is skipped with this reason, never crashes.
class SkipCase : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown when the device is unusable from now on (a sticky CUDA error): the runner reports it
/// once and skips every remaining benchmark of the backend with the same reason.
class DeviceLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The device lost to work that never finished (a hung kernel or copy): beyond DeviceLost,
/// nothing that waits for the device (freeing its memory, destroying its streams) may run
/// again, or the process would hang with it.
class DeviceHung : public DeviceLost {
 public:
  using DeviceLost::DeviceLost;
};

/// Result of checking a workload's outputs against its reference.
struct Verification {
  bool ok = false;
  std::string message;  ///< on failure: the first wrong index and the expected/actual values
  static Verification pass() { return {true, {}}; }
  static Verification fail(std::string why) { return {false, std::move(why)}; }
};

/// Clocks and throttling sampled around a run (NVML on a GPU); empty when unavailable.
struct Telemetry {
  double sm_clock_MHz = 0;      ///< median over the region
  double sm_clock_min_MHz = 0;  ///< lowest reading
  double mem_clock_MHz = 0;
  double power_W = -1;                 ///< mean; < 0 unknown
  double temperature_C = -1;           ///< highest; < 0 unknown
  double energy_J = -1;                ///< energy the device used over the region; < 0 unknown
  double seconds = 0;                  ///< wall-clock length of the region
  std::uint64_t throttle_reasons = 0;  ///< every reason seen (NVML bits)
  int samples = 0;
  bool throttled = false;     ///< clocks were pulled down by heat or a fault (thermal, slowdown) at some point
  bool power_capped = false;  ///< the software power cap held the clocks at some point
  bool available = false;
};

/// The device's memory at one moment: the result context's capacity entries, each benchmark's
/// memory_used_bytes counter and the leak check at the end of a run (harness/memory_check.h).
struct MemoryReading {
  std::uint64_t total_bytes = 0;  ///< the device's memory (the host: MemTotal)
  std::uint64_t free_bytes = 0;   ///< free now, device-wide (a GPU: cudaMemGetInfo; the host: MemAvailable)
  /// The memory the run answers for, which the counter and the leak check follow: on a GPU
  /// total - free (a benchmark run has its device to itself); on the host this process's
  /// resident anonymous memory after malloc_trim, which no other process can move.
  std::uint64_t used_bytes = 0;
  /// used_bytes in words, for the leak line ("device memory in use (cudaMemGetInfo)").
  std::string used_what;
  /// How far used_bytes may rise over a run before the rise is called a leak.
  std::uint64_t leak_tolerance_bytes = 0;
  /// Other processes that held the memory at the reading ("1 (pids 4242)"; "" for none or not
  /// known): device-wide memory that grew while they ran cannot be laid at this run's door.
  std::string shared_with;
};

/// One runnable benchmark instance on one backend. Lifetime: prepare, poison, run (warm-up and
/// timed), verify.
class Workload {
 public:
  virtual ~Workload() = default;
  /// Allocate buffers and fill inputs with seeded random data. Throws SkipCase or DeviceLost.
  virtual void prepare() = 0;
  /// Overwrite outputs with a poison pattern, so an output never written fails verification.
  virtual void poison() = 0;
  /// Execute the operation `batch` times back to back and return the elapsed seconds of the
  /// whole batch, measured on the device's own clock (CUDA events on a GPU). A backend that
  /// must flush caches does so here, before starting its clock.
  virtual double run(int batch) = 0;
  /// Check every output (or a documented sample, for GEMM at large sizes) against the reference.
  virtual Verification verify() = 0;
  /// Extra per-run values for the result (e.g. "latency_ns"), derived from the last run.
  virtual std::map<std::string, double> extra_counters(double /*seconds_per_op*/) { return {}; }
};

/// A device plus the workloads it can run.
class Backend {
 public:
  virtual ~Backend() = default;
  /// "cuda" or "host", as written in the result context.
  virtual std::string kind() const = 0;
  virtual const DeviceDescription& device() const = 0;
  virtual const Peaks& peaks() const = 0;
  /// Stable hardware-level key for the results store (no hostname, no clocks).
  virtual std::string device_key() const = 0;
  /// Why this backend cannot run the case here (a row it declares unavailable, an architecture
  /// too old), "" when it can.
  virtual std::string unavailable_reason(const BenchCase& c) const = 0;
  /// True when the case runs here.
  bool supports(const BenchCase& c) const { return unavailable_reason(c).empty(); }
  /// A fresh workload for a supported case. Must not allocate until prepare().
  virtual std::unique_ptr<Workload> create(const BenchCase& c) = 0;
  /// Starts sampling telemetry for a timed region (a GPU: NVML in a background thread).
  virtual void telemetry_start() {}
  /// Ends the region and summarizes it; available=false where there is no telemetry.
  virtual Telemetry telemetry_stop() { return {}; }
  /// What sampling the telemetry cost over the run, in one line ("" when there was none), for
  /// the end of the run: the readings and how long one took.
  virtual std::string telemetry_cost() const { return ""; }
  /// The NUMA node of the GPU: nullopt for a backend without one (the host), -1 when unknown.
  virtual std::optional<int> gpu_numa_node() const { return std::nullopt; }
  /// The memory now; nullopt where it cannot be read (never throws). Not const: the host first
  /// hands the allocator's free pages back to the system, so that what was freed reads as free.
  virtual std::optional<MemoryReading> memory_reading() { return std::nullopt; }
  /// Context entries specific to this backend (driver/runtime versions, cache policy, link...).
  virtual std::map<std::string, std::string> context() const = 0;
};

/// Factory of workloads for one family/kernel/variant key.
using WorkloadFactory = std::unique_ptr<Workload> (*)(const BenchCase&, Backend&);

/// The row's meaning as its result entries carry it (Google Benchmark's "label"):
/// "peak=dram metric=GBps level=dram sweep=bytes". The scripts select rows by these fields.
std::string row_label(const BenchCase& c);

}  // namespace gpubench
