// The CUDA backend's host-side logic, testable without a GPU: availability and its one-line
// reasons, the device key, the CUDA error rule (sticky -> DeviceLost, out of memory ->
// SkipCase), NVML loading and throttle classification, the chase ring, and that the backend
// implements every CUDA row of the memory table.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "harness/cuda/cuda_backend.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/node_health.h"
#include "harness/cuda/nvml.h"
#include "harness/family.h"
#include "harness/host/host_backend.h"
#include "harness/random.h"
#include "kernels/chase_ring.h"

GPUBENCH_FAMILY(global_memory)

namespace gpubench {
namespace {

bool library_loads(const char* name) {
  void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (h) dlclose(h);
  return h != nullptr;
}

bool has_substr(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- availability ----

TEST(CudaAvailability, MatchesWhetherADriverIsInstalled) {
  const CudaAvailability a = cuda_availability();
  if (!library_loads("libcuda.so.1")) {
    // The build machines: the runtime cannot find a driver at all.
    EXPECT_EQ(a.device_count, 0);
    EXPECT_EQ(a.error_code, 35);  // cudaErrorInsufficientDriver
    EXPECT_EQ(a.reason.rfind("no NVIDIA driver", 0), 0u) << a.reason;
    EXPECT_EQ(a.reason.find('\n'), std::string::npos);
  } else if (a.device_count > 0) {
    EXPECT_EQ(a.error_code, 0);
    EXPECT_TRUE(a.reason.empty()) << a.reason;
  } else {
    EXPECT_FALSE(a.reason.empty());
  }
}

TEST(CudaAvailability, MakeBackendWithoutADeviceThrowsTheReason) {
  const CudaAvailability a = cuda_availability();
  if (a.device_count > 0) {
    EXPECT_THROW(make_cuda_backend(a.device_count, cuda_workloads()), std::runtime_error);  // one past the last
    return;
  }
  try {
    make_cuda_backend(0, cuda_workloads());
    FAIL() << "make_cuda_backend(0) succeeded without a usable device";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), a.reason);
  }
}

TEST(CudaUnavailableReason, NoDriverAtAll) {
  EXPECT_EQ(cuda_unavailable_reason(35, 0, 13000),
            "no NVIDIA driver (libcuda.so.1 not found); this gpubench uses CUDA runtime 13.0");
}

TEST(CudaUnavailableReason, DriverOlderThanTheRuntime) {
  EXPECT_EQ(cuda_unavailable_reason(35, 12040, 13000),
            "NVIDIA driver too old: it supports CUDA 12.4, older than the CUDA runtime 13.0 this gpubench uses");
}

TEST(CudaUnavailableReason, NoDeviceStubAndOthers) {
  EXPECT_EQ(cuda_unavailable_reason(100, 12080, 12080).rfind("no CUDA device", 0), 0u);
  EXPECT_TRUE(has_substr(cuda_unavailable_reason(34, 0, 13000), "stub"));
  EXPECT_EQ(cuda_unavailable_reason(0, 12080, 12080), "no CUDA device");
  // Any other code: the runtime's own name and description.
  EXPECT_EQ(cuda_unavailable_reason(3, 12080, 13000),
            "cudaGetDeviceCount failed: cudaErrorInitializationError (3: initialization error)");
}

TEST(CudaVersions, Strings) {
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(12040), "12.4");
  EXPECT_EQ(cuda_version_string(11080), "11.8");
  EXPECT_EQ(driver_major_version("550.54.15"), 550);
  EXPECT_EQ(driver_major_version("580.65"), 580);
  EXPECT_EQ(driver_major_version(""), 0);
  EXPECT_EQ(driver_major_version("unknown"), 0);
}

// ---- device key ----

DeviceDescription h100() {
  DeviceDescription d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.sm_clock_kHz = 1980000;
  d.mem_clock_kHz = 2619000;
  d.bus_width_bits = 5120;
  d.l2_bytes = 52428800;
  d.memory_bytes = 85045182464ull;  // 79.2 GiB, as the runtime reports an H100 80GB
  return d;
}

TEST(CudaDeviceKey, FromTheDescription) {
  EXPECT_EQ(cuda_device_key(h100(), 550, 12040, 13000), "h100_80gb_hbm3-79gib-sm90-drv550-cuda13.0");
  // Without the driver branch, the CUDA version the driver supports stands in.
  EXPECT_EQ(cuda_device_key(h100(), 0, 12040, 12080), "h100_80gb_hbm3-79gib-sm90-drvcuda12.4-cuda12.8");
  DeviceDescription g;
  g.name = "NVIDIA GeForce RTX 4090";
  g.cc_major = 8;
  g.cc_minor = 9;
  g.memory_bytes = 25393692672ull;  // 23.6 GiB
  EXPECT_EQ(cuda_device_key(g, 575, 12090, 13000), "geforce_rtx_4090-24gib-sm89-drv575-cuda13.0");
}

TEST(CudaDeviceKey, IgnoresClocksAndIsFilenameSafe) {
  DeviceDescription slow = h100();
  slow.sm_clock_kHz = 1200000;
  slow.mem_clock_kHz = 1000000;
  slow.pcie_gen = 4;
  EXPECT_EQ(cuda_device_key(slow, 550, 12040, 13000), cuda_device_key(h100(), 550, 12040, 13000));
  DeviceDescription odd = h100();
  odd.name = "  Tesla V100-SXM2-16GB / (rev a1) ";
  const std::string key = cuda_device_key(odd, 550, 12040, 13000);
  EXPECT_EQ(key.rfind("tesla_v100_sxm2_16gb_rev_a1-", 0), 0u) << key;
  for (char c : key)
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') << key;
}

// ---- CUDA error rule ----

int fake_illegal_address() { return 700; }

TEST(CudaCheck, StickyErrorsAreDeviceLost) {
  EXPECT_TRUE(is_sticky_cuda_error(700));  // cudaErrorIllegalAddress
  EXPECT_TRUE(is_sticky_cuda_error(719));  // cudaErrorLaunchFailure
  EXPECT_TRUE(is_sticky_cuda_error(716));  // cudaErrorMisalignedAddress
  EXPECT_TRUE(is_sticky_cuda_error(214));  // cudaErrorECCUncorrectable
  EXPECT_FALSE(is_sticky_cuda_error(0));
  EXPECT_FALSE(is_sticky_cuda_error(2));    // cudaErrorMemoryAllocation
  EXPECT_FALSE(is_sticky_cuda_error(1));    // cudaErrorInvalidValue
  EXPECT_FALSE(is_sticky_cuda_error(701));  // cudaErrorLaunchOutOfResources: a bad launch, context fine
  EXPECT_FALSE(is_sticky_cuda_error(35));
  try {
    GPUBENCH_CUDA_CHECK(fake_illegal_address());
    FAIL() << "no throw";
  } catch (const DeviceLost& e) {
    const std::string m = e.what();
    EXPECT_TRUE(has_substr(m, "cudaErrorIllegalAddress (700: ")) << m;
    EXPECT_TRUE(has_substr(m, "`fake_illegal_address()`")) << m;
    EXPECT_TRUE(has_substr(m, "test_cuda_backend.cpp:")) << m;
  }
}

TEST(CudaCheck, OutOfMemoryIsSkipOthersAreErrors) {
  EXPECT_NO_THROW(GPUBENCH_CUDA_CHECK(0));
  EXPECT_THROW(GPUBENCH_CUDA_CHECK(2), SkipCase);
  try {
    GPUBENCH_CUDA_CHECK(1);
    FAIL() << "no throw";
  } catch (const SkipCase&) {
    FAIL() << "cudaErrorInvalidValue must not skip";
  } catch (const DeviceLost&) {
    FAIL() << "cudaErrorInvalidValue must not lose the device";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(has_substr(e.what(), "cudaErrorInvalidValue")) << e.what();
  }
  EXPECT_NO_THROW(GPUBENCH_CUDA_CHECK_NOEXCEPT(700));
}

// ---- NVML ----

TEST(Nvml, MissingLibraryMeansNoTelemetry) {
  std::string why;
  EXPECT_EQ(Nvml::open("0000:00:00.0", &why, "libgpubench-no-such-nvml.so.1"), nullptr);
  EXPECT_TRUE(has_substr(why, "NVML not available (libgpubench-no-such-nvml.so.1")) << why;
}

TEST(Nvml, OnThisMachine) {
  std::string why;
  auto nvml = Nvml::open("0000:00:00.0", &why);  // no GPU sits at this address
  EXPECT_EQ(nvml, nullptr);
  if (!library_loads("libnvidia-ml.so.1")) {
    EXPECT_TRUE(has_substr(why, "NVML not available (libnvidia-ml.so.1")) << why;
  } else {
    EXPECT_FALSE(why.empty());
  }
}

#ifdef GPUBENCH_FAKE_NVML
TEST(Nvml, LoadsAndReadsALibraryWithTheNvmlEntryPoints) {
  std::string why;
  {
    auto nvml = Nvml::open("0000:3B:00.0", &why, GPUBENCH_FAKE_NVML);
    ASSERT_NE(nvml, nullptr) << why;
    const Telemetry t = nvml->sample();
    EXPECT_TRUE(t.available);
    EXPECT_EQ(t.sm_clock_MHz, 1755);
    EXPECT_EQ(t.mem_clock_MHz, 2619);
    EXPECT_EQ(nvml->throttle_reasons(), 0x41u);
    EXPECT_TRUE(is_throttled(nvml->throttle_reasons()));  // HW thermal slowdown is set beside idle
    EXPECT_EQ(nvml->driver_version(), "550.54.15");
    EXPECT_DOUBLE_EQ(nvml->power_W(), 287.25);  // the instantaneous field, not the 1 s average (312.5)
    EXPECT_DOUBLE_EQ(nvml->temperature_C(), 47);
    const double e0 = nvml->total_energy_J();
    EXPECT_DOUBLE_EQ(nvml->total_energy_J() - e0, 1.5);  // joules, from millijoules
    double sm = 0, mem = 0;
    ASSERT_TRUE(nvml->max_clocks(&sm, &mem));
    EXPECT_EQ(sm, 1980);
    EXPECT_EQ(mem, 2619);
    // The node's health, as the acceptance run's causes read it from the context.
    const auto health = node_health_context(read_node_health(*nvml, ::getpid()));
    EXPECT_EQ(health.at("ecc_mode"), "on");
    EXPECT_EQ(health.at("ecc_errors_corrected_volatile"), "3");
    EXPECT_EQ(health.at("ecc_errors_uncorrected_volatile"), "0");
    EXPECT_EQ(health.at("ecc_errors_uncorrected_aggregate"), "1");
    EXPECT_EQ(health.at("retired_pages"), "unknown");  // this NVML has no such query
    EXPECT_EQ(health.at("remapped_rows_uncorrectable"), "1");
    EXPECT_EQ(health.at("row_remap_failure"), "yes");
    EXPECT_EQ(health.at("row_remap_pending"), "no");
    EXPECT_EQ(health.at("other_gpu_processes"), "1 (pids 4242)");  // this process is not counted
    // In a container NVML's ids are the host's: this process (which holds a context, so NVML
    // lists it) is one of them under an id it cannot know.
    const int outside = static_cast<int>(::getpid()) + 1;
    EXPECT_EQ(node_health_context(read_node_health(*nvml, outside)).at("other_gpu_processes"),
              "1 (pids " + std::to_string(::getpid()) +
                  ",4242; one of them this process, seen from outside its PID namespace)");
    EXPECT_EQ(health.at("mig_mode"), "not supported");
  }
  // Every init was shut down again (the library stays loaded while we ask).
  void* h = dlopen(GPUBENCH_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr);
  auto live = reinterpret_cast<int (*)()>(dlsym(h, "fake_nvml_live_inits"));
  ASSERT_NE(live, nullptr);
  EXPECT_EQ(live(), 0);
  // A bus id NVML does not know: no telemetry, with the reason, and init undone.
  EXPECT_EQ(Nvml::open("0000:01:00.0", &why, GPUBENCH_FAKE_NVML), nullptr);
  EXPECT_TRUE(has_substr(why, "NVML has no device at 0000:01:00.0")) << why;
  EXPECT_EQ(live(), 0);
  dlclose(h);
}
#endif

TEST(Nvml, ThrottleClassification) {
  using namespace nvml_reason;
  EXPECT_FALSE(is_throttled(0));
  for (std::uint64_t benign : {kGpuIdle, kApplicationsClocksSetting, kSyncBoost, kDisplayClockSetting})
    EXPECT_FALSE(is_throttled(benign)) << benign;
  for (std::uint64_t bad : {kHwSlowdown, kSwThermalSlowdown, kHwThermalSlowdown, kHwPowerBrakeSlowdown})
    EXPECT_TRUE(is_throttled(bad)) << bad;
  EXPECT_TRUE(is_throttled(kGpuIdle | kSwThermalSlowdown));
  // The software power cap is how an H100 runs heavy tensor work: power-capped, not throttled.
  EXPECT_FALSE(is_throttled(kSwPowerCap));
  EXPECT_TRUE(is_power_capped(kSwPowerCap | kGpuIdle));
  EXPECT_FALSE(is_power_capped(kHwSlowdown | kSwThermalSlowdown));
  // The documented bit values (nvml.h).
  EXPECT_EQ(kSwPowerCap, 0x4u);
  EXPECT_EQ(kHwSlowdown, 0x8u);
  EXPECT_EQ(kSwThermalSlowdown, 0x20u);
  EXPECT_EQ(kHwThermalSlowdown, 0x40u);
  EXPECT_EQ(kHwPowerBrakeSlowdown, 0x80u);
  EXPECT_EQ(throttle_reason_names(0), "none");
  EXPECT_EQ(throttle_reason_names(0x44), "sw_power_cap+hw_thermal");
  EXPECT_EQ(throttle_reason_names(1ull << 40), "other");
}

// ---- chase ring ----

// Walks the whole ring from 0: it must come back to 0 after exactly n steps.
void expect_single_cycle(const std::vector<std::uint32_t>& next) {
  const std::size_t n = next.size();
  std::set<std::uint32_t> seen;
  std::uint32_t p = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_LT(p, n);
    seen.insert(p);
    p = next[p];
  }
  EXPECT_EQ(p, 0u);
  EXPECT_EQ(seen.size(), n);
}

TEST(ChaseRing, OneCycleThroughEveryEntry) {
  // Sizes at and either side of the Feistel domains (powers of 4), where cycle walking matters.
  for (std::size_t n : {1u, 2u, 3u, 4u, 5u, 15u, 16u, 17u, 1000u, 4095u, 4096u, 4097u, 65537u}) {
    SCOPED_TRACE(n);
    const auto next = make_chase_ring(n, 42);
    ASSERT_EQ(next.size(), n);
    expect_single_cycle(next);
    if (n > 1) {
      for (std::size_t i = 0; i < n; ++i) EXPECT_NE(next[i], i);
    }
  }
  EXPECT_THROW(make_chase_ring(0, 1), std::invalid_argument);
  EXPECT_THROW(make_chase_ring(std::size_t{1} << 32, 1), std::invalid_argument);
}

// The ring is the formula's: position and entry are inverse, next[] steps one position, and the
// order is scattered (a prefetcher could follow a ring of mostly neighbouring entries).
TEST(ChaseRing, TheFormulaIsAPermutationInAScatteredOrder) {
  const std::size_t n = 65537;
  const kernels::ChaseRing r = kernels::make_chase_ring_of(n, 9);
  const auto next = make_chase_ring(n, 9);
  std::size_t near = 0;
  for (std::uint32_t e = 0; e < n; ++e) {
    ASSERT_EQ(kernels::ring_entry(r, kernels::ring_position(r, e)), e);
    const std::uint64_t p = kernels::ring_position(r, e);
    ASSERT_EQ(next[e], kernels::ring_entry(r, (p + 1) % n));
    const std::int64_t gap = static_cast<std::int64_t>(next[e]) - static_cast<std::int64_t>(e);
    if (gap >= -64 && gap <= 64) ++near;  // within 256 bytes
  }
  // A random order lands within 64 entries with probability 129 / n: about 129 steps of n here
  // (a sequential or locally strided ring would land there at nearly every step).
  EXPECT_LT(near, 2u * 129u);
}

TEST(ChaseRing, SeededReferenceAndStarts) {
  const auto a = make_chase_ring(5000, 7), b = make_chase_ring(5000, 7), c = make_chase_ring(5000, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (std::uint32_t start : {0u, 17u, 4999u}) {
    for (std::uint64_t steps : {0ull, 1ull, 4999ull, 5000ull, 65536ull, 12345678ull}) {
      std::uint32_t p = start;
      for (std::uint64_t s = 0; s < steps; ++s) p = a[p];  // the full walk, no shortcut
      EXPECT_EQ(chase_reference(5000, 7, start, steps), p) << start << " " << steps;
    }
  }
  EXPECT_THROW(chase_reference(5000, 7, 5000, 1), std::invalid_argument);
  std::set<std::uint32_t> starts;
  for (int k = 0; k < 64; ++k) {
    const std::uint32_t s = chase_start(5000, 7, k);
    EXPECT_LT(s, 5000u);
    EXPECT_EQ(s, chase_start(5000, 7, k));
    starts.insert(s);
  }
  EXPECT_GT(starts.size(), 50u);  // scattered, not one point
}

// ---- the workload table against the memory table ----

TEST(CudaMemoryWorkloads, EveryCudaRowOfTheMemoryTableIsImplemented) {
  WorkloadTable table;
  families::global_memory::add_cuda_workloads(table);
  SweepOptions o;
  o.backend_kind = "cuda";
  o.l2_bytes = 50u << 20;
  o.memory_bytes = 80ull << 30;
  std::set<std::string> kernels;
  for (const BenchCase& c : families::global_memory::cases(o)) {
    kernels.insert(c.kernel);
    const bool host_only = c.variant == "memcpy";  // host memcpy; the GPU copy engine is memcpy_ce
    EXPECT_EQ(table.find(c, 90) != nullptr, !host_only) << c.name();
  }
  EXPECT_EQ(kernels, (std::set<std::string>{"copy", "read", "block_set_read", "write", "strided", "gather", "chase"}));
}

TEST(CudaMemoryWorkloads, OnlyForTheCudaBackend) {
  auto host = make_host_backend(host_workloads());
  EXPECT_THROW(cuda_device_of(*host), std::logic_error);
}

}  // namespace
}  // namespace gpubench
