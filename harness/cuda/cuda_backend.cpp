#include "harness/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>

#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/node_health.h"
#include "harness/cuda/nvml.h"
#include "harness/cuda/pcie_probe.h"
#include "harness/cuda/peer_topology.h"
#include "harness/model/card_table.h"
#include "harness/nvidia_driver.h"
#include "harness/pcie/pcie_context.h"
#include "harness/slug.h"
#include "harness/telemetry_sampler.h"

namespace gpubench {

const char* const kCudaCachePolicy =
    "copy/read/write: working sets >= L2/2 rotate among copies of their buffers totalling >= 4xL2 (counter "
    "slots), smaller sets stay cache-resident by design; the hand-written kernels make several passes per launch "
    "(counter passes_per_launch) so that a launch lasts >= 100 us (>= 200 us when rotating). Other rows with "
    "working sets >= L2/2: L2 flushed before each timed run by reading a 2xL2 buffer (outside the timed events)";

// ---- pure helpers ----

std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string cuda_unavailable_reason(int error_code, int driver_version, int runtime_version) {
  const std::string runtime = "CUDA runtime " + cuda_version_string(runtime_version);
  switch (error_code) {
    case cudaErrorInsufficientDriver:
      if (driver_version <= 0) return "no NVIDIA driver (libcuda.so.1 not found); this gpubench uses " + runtime;
      return "NVIDIA driver too old: it supports CUDA " + cuda_version_string(driver_version) + ", older than the " +
             runtime + " this gpubench uses";
    case cudaErrorNoDevice: return "no CUDA device (the NVIDIA driver sees none, or CUDA_VISIBLE_DEVICES hides them)";
    case cudaErrorStubLibrary:
      return "the CUDA driver library found is the toolkit's stub (lib64/stubs/libcuda.so), not a real "
             "NVIDIA driver";
    case cudaSuccess:  // success with zero devices
      return "no CUDA device";
    default:
      return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(static_cast<cudaError_t>(error_code)) +
             " (" + std::to_string(error_code) + ": " + cudaGetErrorString(static_cast<cudaError_t>(error_code)) + ")";
  }
}

int driver_major_version(const std::string& driver_version) {
  std::size_t i = 0;
  int major = 0;
  while (i < driver_version.size() && std::isdigit(static_cast<unsigned char>(driver_version[i]))) {
    major = major * 10 + (driver_version[i] - '0');
    if (major > 100000) return 0;
    ++i;
  }
  return i > 0 ? major : 0;
}

std::string cuda_device_key(const DeviceDescription& d, int driver_major, int cuda_driver_version,
                            int runtime_version) {
  // Slug: lowercase alphanumerics, every other run of characters one '_', the vendor prefix
  // dropped ("NVIDIA H100 80GB HBM3" -> "h100_80gb_hbm3").
  std::string slug = slugify(d.name, '_');
  if (slug.rfind("nvidia_", 0) == 0) slug.erase(0, 7);
  if (slug.empty()) slug = "unknown_gpu";
  const double gib = static_cast<double>(d.memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  std::string key = slug + "-" + std::to_string(static_cast<long long>(std::llround(gib))) + "gib-sm" +
                    std::to_string(d.cc_major) + std::to_string(d.cc_minor) + "-drv";
  key += driver_major > 0 ? std::to_string(driver_major) : "cuda" + cuda_version_string(cuda_driver_version);
  key += "-cuda" + cuda_version_string(runtime_version);
  return key;
}

// ---- availability ----

CudaAvailability cuda_availability() {
  CudaAvailability a;
  try {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    int driver = 0, runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = CUDART_VERSION;
    (void)cudaGetLastError();  // the failed call above must not be seen by a later check
    a.error_code = static_cast<int>(e);
    if (e == cudaSuccess && count > 0) {
      a.device_count = count;
      return a;
    }
    a.reason = cuda_unavailable_reason(a.error_code, driver, runtime);
  } catch (...) {
    a.device_count = 0;
    a.reason = "CUDA availability could not be determined";
  }
  return a;
}

// ---- the backend ----

namespace {

class CudaBackend final : public CudaBackendBase {
 public:
  /// Everything the backend reports, built here in one pass: `link` is the probed PCIe link
  /// (already applied to `desc`), `nvml` the device's NVML opened once by the caller.
  CudaBackend(int index, const DeviceDescription& desc, const std::string& pci_bus_id, std::unique_ptr<Nvml> nvml,
              const std::string& nvml_status, const pcie::PcieLink& link, bool link_read_under_load,
              WorkloadTable table)
      : device_(index, desc, pci_bus_id, std::move(nvml), nvml_status),
        peaks_(theoretical_peaks(desc)),
        numa_node_(link.numa_node),
        table_(std::move(table)) {
    int driver = 0, runtime = 0;
    GPUBENCH_CUDA_CHECK(cudaDriverGetVersion(&driver));
    GPUBENCH_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    driver_version_ = nvidia_driver_version();
    if (driver_version_.empty() && device_.nvml()) driver_version_ = device_.nvml()->driver_version();
    key_ = cuda_device_key(desc, driver_major_version(driver_version_), driver, runtime);
    context_ = pcie::link_context(link, link_read_under_load);
    context_["driver_version"] = (driver_version_.empty() ? std::string("unknown") : driver_version_) + " (CUDA " +
                                 cuda_version_string(driver) + ")";
    context_["runtime_version"] = cuda_version_string(runtime);
    context_["pci_bus_id"] = pci_bus_id;
    context_["cache_policy"] = kCudaCachePolicy;
    context_["timing"] =
        "CUDA events; a CUDA graph of the batch's launches between two events, except flushed rows: one event pair "
        "per run; one operation = one pass over the working set";
    context_["telemetry"] = device_.nvml_status();
    // The node's health as NVML sees it, for the acceptance run's likely causes.
    const auto health = device_.nvml() ? node_health_context(read_node_health(*device_.nvml(), ::getpid()))
                                       : node_health_unknown(device_.nvml_status());
    for (const auto& [k, v] : health) context_[k] = v;
    double max_sm = 0, max_mem = 0;
    if (device_.nvml() && device_.nvml()->max_clocks(&max_sm, &max_mem)) {
      context_["nvml_max_clocks_MHz"] =
          "sm " + std::to_string(static_cast<long>(max_sm)) + ", mem " + std::to_string(static_cast<long>(max_mem));
    }
  }

  std::string kind() const override { return "cuda"; }
  const DeviceDescription& device() const override { return device_.description(); }
  const Peaks& peaks() const override { return peaks_; }
  std::string device_key() const override { return key_; }
  std::optional<int> gpu_numa_node() const override { return numa_node_; }
  std::string unavailable_reason(const BenchCase& c) const override {
    const std::string why = table_.unavailable_reason(c, cc());
    return why.empty() ? why : "not on the cuda backend: " + why;
  }
  std::unique_ptr<Workload> create(const BenchCase& c) override {
    const WorkloadFactory f = table_.find(c, cc());
    if (!f) throw SkipCase(unavailable_reason(c));
    return f(c, *this);
  }
  // NVML in a background thread while the samples run: clocks and throttle reasons every 10 ms,
  // power, temperature and the energy counter every 50 ms (each NVML query goes to the driver,
  // and the power reading is itself an average; a region too short for one has none).
  void telemetry_start() override {
    const Nvml* nvml = device_.nvml();
    if (!nvml) return;
    if (!sampler_) {
      auto readings = std::make_shared<long long>(0);  // the sampler thread's count: full every kFullEvery
      constexpr long long kFullEvery = 5;
      sampler_ = std::make_unique<TelemetrySampler>(
          [nvml, readings]() -> std::optional<TelemetryReading> {
            const Telemetry now = nvml->sample();
            if (!now.available) return std::nullopt;
            TelemetryReading r;
            r.sm_clock_MHz = now.sm_clock_MHz;
            r.mem_clock_MHz = now.mem_clock_MHz;
            r.throttle_reasons = nvml->throttle_reasons();
            r.throttled = is_throttled(r.throttle_reasons);
            r.power_capped = is_power_capped(r.throttle_reasons);
            if (*readings % kFullEvery == 0) {
              r.power_W = nvml->power_W();
              r.temperature_C = nvml->temperature_C();
            }
            return r;
          },
          // Called right after the reading above, on the same thread: the same count.
          [nvml, readings]() -> std::optional<double> {
            const bool full = (*readings)++ % kFullEvery == 0;
            const double joules = full ? nvml->total_energy_J() : -1;
            return joules >= 0 ? std::optional<double>(joules) : std::nullopt;
          },
          std::chrono::milliseconds(10));
    }
    sampler_->start();
  }
  Telemetry telemetry_stop() override { return sampler_ ? sampler_->stop() : Telemetry{}; }
  std::string telemetry_cost() const override {
    if (!sampler_) return "";
    const TelemetrySampler::Cost c = sampler_->cost();
    char line[160];
    std::snprintf(line, sizeof line, "telemetry: %lld NVML readings, %.0f us each (median), %.0f us the slowest",
                  c.readings, c.median_us, c.max_us);
    return line;
  }
  std::map<std::string, std::string> context() const override {
    auto c = context_;
    // Read now, not at construction: after --numa-bind it shows where the benchmarks run.
    for (const auto& [k, v] : pcie::bench_cpu_context(pcie::kSysfsRoot)) c[k] = v;
    return c;
  }
  CudaDevice& cuda_device() override { return device_; }

 private:
  int cc() const { return device_.description().cc_major * 10 + device_.description().cc_minor; }

  CudaDevice device_;
  Peaks peaks_;
  int numa_node_;  ///< the GPU's NUMA node from the link probe, -1 unknown
  std::string key_;
  std::string driver_version_;
  std::map<std::string, std::string> context_;
  WorkloadTable table_;
  std::unique_ptr<TelemetrySampler> sampler_;  // after device_: destroyed (thread ended) before NVML closes
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(int index, WorkloadTable table) {
  const CudaAvailability a = cuda_availability();
  if (a.device_count == 0) throw std::runtime_error(a.reason);
  if (index < 0 || index >= a.device_count)
    throw std::runtime_error("CUDA device " + std::to_string(index) + " does not exist (" +
                             std::to_string(a.device_count) + " device" + (a.device_count == 1 ? "" : "s") + ")");
  try {
    std::string bus;
    DeviceDescription d = describe_cuda_device(index, &bus);
    d.ordinal = index;
    d.visible_devices = a.device_count;
    // NVML once, for the link probe, telemetry and the driver version.
    std::string nvml_status;
    std::unique_ptr<Nvml> nvml = Nvml::open(bus, &nvml_status);
    if (nvml) nvml_status = "NVML loaded";
    d.peer_paths = peer_link_paths(nvml.get(), index, a.device_count);
    // The negotiated PCIe link (not the card's datasheet link) sets peak_pcie_*.
    bool link_read_under_load = false;
    const pcie::PcieLink link = probe_cuda_pcie_link(index, bus, nvml.get(), &link_read_under_load);
    pcie::apply_link(link, d);
    auto backend = std::make_unique<CudaBackend>(index, d, bus, std::move(nvml), nvml_status, link,
                                                 link_read_under_load, std::move(table));
    for (const std::string& warning :
         pcie::link_warnings("CUDA device " + std::to_string(index) + " (" + link.address + ")", link))
      std::fprintf(stderr, "%s\n", warning.c_str());
    return backend;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("CUDA device ") + std::to_string(index) + ": " + e.what());
  }
}

}  // namespace gpubench
