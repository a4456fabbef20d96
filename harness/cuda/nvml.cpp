#include "harness/cuda/nvml.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace gpubench {

bool is_throttled(std::uint64_t reasons) {
  using namespace nvml_reason;
  constexpr std::uint64_t kThrottling = kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
  return (reasons & kThrottling) != 0;
}

bool is_power_capped(std::uint64_t reasons) { return (reasons & nvml_reason::kSwPowerCap) != 0; }

std::string throttle_reason_names(std::uint64_t reasons) {
  using namespace nvml_reason;
  static const std::pair<std::uint64_t, const char*> kNames[] = {{kGpuIdle, "gpu_idle"},
                                                                 {kApplicationsClocksSetting, "app_clocks"},
                                                                 {kSwPowerCap, "sw_power_cap"},
                                                                 {kHwSlowdown, "hw_slowdown"},
                                                                 {kSyncBoost, "sync_boost"},
                                                                 {kSwThermalSlowdown, "sw_thermal"},
                                                                 {kHwThermalSlowdown, "hw_thermal"},
                                                                 {kHwPowerBrakeSlowdown, "hw_power_brake"},
                                                                 {kDisplayClockSetting, "display_clocks"}};
  std::string out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (reasons & bit) out += (out.empty() ? "" : "+") + std::string(name);
  }
  if (reasons & ~known) out += (out.empty() ? "" : "+") + std::string("other");
  return out.empty() ? "none" : out;
}

namespace {

// The few NVML declarations used here (nvml.h, NVML API reference): nvmlReturn_t is an int
// enum with NVML_SUCCESS = 0; nvmlDevice_t is an opaque pointer; clock types SM = 1, MEM = 2.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMem = 2;
constexpr int kNvmlTemperatureGpu = 0;

// nvmlDeviceGetFieldValues' record (nvml.h's nvmlFieldValue_t: two 32-bit ids, two 64-bit
// times, the value's type and return code, an 8-byte value) and the fields read through it.
union NvmlValue {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  int si;
  unsigned short us;
};
struct NvmlFieldValue {
  std::uint32_t field_id;
  std::uint32_t scope_id;
  std::int64_t timestamp;
  std::int64_t latency_us;
  unsigned int value_type;  // 0 double, 1 uint, 2 ulong, 3 ulonglong, 4 longlong, 5 int, 6 ushort
  int nvml_return;
  NvmlValue value;
};
static_assert(sizeof(NvmlFieldValue) == 40 && offsetof(NvmlFieldValue, value) == 32, "nvmlFieldValue_t's layout");
constexpr std::uint32_t kFieldPowerInstant = 186;  // NVML_FI_DEV_POWER_INSTANT, milliwatts

// The field's value as a number; false when it was not read or has a type we do not know.
bool field_number(const NvmlFieldValue& f, double* out) {
  if (f.nvml_return != kNvmlSuccess) return false;
  switch (f.value_type) {
    case 0: *out = f.value.d; return true;
    case 1: *out = f.value.ui; return true;
    case 2: *out = static_cast<double>(f.value.ul); return true;
    case 3: *out = static_cast<double>(f.value.ull); return true;
    case 4: *out = static_cast<double>(f.value.sll); return true;
    case 5: *out = f.value.si; return true;
    case 6: *out = f.value.us; return true;
    default: return false;
  }
}

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;                                            // nvmlInit_v2
  nvmlReturn_t (*shutdown)() = nullptr;                                        // nvmlShutdown
  nvmlReturn_t (*by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;         // ..._v2
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned int*) = nullptr;      // nvmlDeviceGetClockInfo
  nvmlReturn_t (*max_clock_info)(nvmlDevice_t, int, unsigned int*) = nullptr;  // ...GetMaxClockInfo
  // nvmlDeviceGetCurrentClocksEventReasons (newer drivers) or ...ThrottleReasons (older).
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned int) = nullptr;  // nvmlSystemGetDriverVersion
  // PCIe link queries (optional): nvmlDeviceGetCurrPcieLinkGeneration / ...Width,
  // nvmlDeviceGetGpuMaxPcieLinkGeneration (or ...GetMaxPcieLinkGeneration), ...MaxPcieLinkWidth.
  nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*pcie_max_gen)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*pcie_max_width)(nvmlDevice_t, unsigned int*) = nullptr;
  // Power (mW), temperature (sensor 0 = GPU, degrees C), energy since load (mJ); optional.
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*field_values)(nvmlDevice_t, int, NvmlFieldValue*) = nullptr;  // optional
};

namespace {

template <class F>
bool bind(void* handle, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(handle, name));
  return *fn != nullptr;
}

}  // namespace

std::unique_ptr<Nvml> Nvml::open(const std::string& pci_bus_id, std::string* why, const char* library) {
  auto fail = [&](std::string reason) -> std::unique_ptr<Nvml> {
    if (why) *why = std::move(reason);
    return nullptr;
  };
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    return fail(std::string("NVML not available (") + library + ": " + (err ? err : "not found") + ")");
  }
  auto api = std::make_unique<Api>();
  const bool ok = bind(handle, "nvmlInit_v2", &api->init) && bind(handle, "nvmlShutdown", &api->shutdown) &&
                  bind(handle, "nvmlDeviceGetHandleByPciBusId_v2", &api->by_pci_bus_id) &&
                  bind(handle, "nvmlDeviceGetClockInfo", &api->clock_info);
  if (ok && !bind(handle, "nvmlDeviceGetCurrentClocksEventReasons", &api->reasons))
    bind(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", &api->reasons);
  bind(handle, "nvmlSystemGetDriverVersion", &api->driver_version);
  bind(handle, "nvmlDeviceGetMaxClockInfo", &api->max_clock_info);
  bind(handle, "nvmlDeviceGetCurrPcieLinkGeneration", &api->pcie_gen);
  bind(handle, "nvmlDeviceGetCurrPcieLinkWidth", &api->pcie_width);
  if (!bind(handle, "nvmlDeviceGetGpuMaxPcieLinkGeneration", &api->pcie_max_gen))
    bind(handle, "nvmlDeviceGetMaxPcieLinkGeneration", &api->pcie_max_gen);
  bind(handle, "nvmlDeviceGetMaxPcieLinkWidth", &api->pcie_max_width);
  bind(handle, "nvmlDeviceGetPowerUsage", &api->power_usage);
  bind(handle, "nvmlDeviceGetTemperature", &api->temperature);
  bind(handle, "nvmlDeviceGetTotalEnergyConsumption", &api->total_energy);
  bind(handle, "nvmlDeviceGetFieldValues", &api->field_values);
  if (!ok) {
    dlclose(handle);
    return fail(std::string("NVML not available (") + library + " lacks the expected functions)");
  }
  if (const int rc = api->init(); rc != kNvmlSuccess) {
    dlclose(handle);
    return fail("NVML not available (nvmlInit_v2 returned " + std::to_string(rc) + ")");
  }
  nvmlDevice_t device = nullptr;
  if (const int rc = api->by_pci_bus_id(pci_bus_id.c_str(), &device); rc != kNvmlSuccess) {
    api->shutdown();
    dlclose(handle);
    return fail("NVML has no device at " + pci_bus_id + " (error " + std::to_string(rc) + ")");
  }
  return std::unique_ptr<Nvml>(new Nvml(handle, std::move(api), device));
}

Nvml::Nvml(void* handle, std::unique_ptr<Api> api, void* device)
    : handle_(handle), api_(std::move(api)), device_(device) {}

Nvml::~Nvml() {
  api_->shutdown();
  dlclose(handle_);
}

Telemetry Nvml::sample() const {
  Telemetry t;
  unsigned int sm = 0, mem = 0;
  if (api_->clock_info(device_, kNvmlClockSm, &sm) != kNvmlSuccess) return t;
  if (api_->clock_info(device_, kNvmlClockMem, &mem) != kNvmlSuccess) return t;
  t.sm_clock_MHz = sm;
  t.mem_clock_MHz = mem;
  t.available = true;
  return t;
}

std::uint64_t Nvml::throttle_reasons() const {
  unsigned long long r = 0;
  if (!api_->reasons || api_->reasons(device_, &r) != kNvmlSuccess) return 0;
  return r;
}

double Nvml::power_W() const {
  if (api_->field_values) {
    NvmlFieldValue f{};
    f.field_id = kFieldPowerInstant;
    double mW = 0;
    // A board draws between nothing and a few kilowatts: anything else is not this field.
    if (api_->field_values(device_, 1, &f) == kNvmlSuccess && field_number(f, &mW) && mW > 0 && mW < 5e6)
      return mW / 1000.0;
  }
  unsigned int mW = 0;
  if (!api_->power_usage || api_->power_usage(device_, &mW) != kNvmlSuccess) return -1;
  return mW / 1000.0;
}

double Nvml::temperature_C() const {
  unsigned int c = 0;
  if (!api_->temperature || api_->temperature(device_, kNvmlTemperatureGpu, &c) != kNvmlSuccess) return -1;
  return c;
}

double Nvml::total_energy_J() const {
  unsigned long long mJ = 0;
  if (!api_->total_energy || api_->total_energy(device_, &mJ) != kNvmlSuccess) return -1;
  return static_cast<double>(mJ) / 1000.0;
}

bool Nvml::max_clocks(double* sm_MHz, double* mem_MHz) const {
  unsigned int sm = 0, mem = 0;
  if (!api_->max_clock_info || api_->max_clock_info(device_, kNvmlClockSm, &sm) != kNvmlSuccess ||
      api_->max_clock_info(device_, kNvmlClockMem, &mem) != kNvmlSuccess)
    return false;
  *sm_MHz = sm;
  *mem_MHz = mem;
  return true;
}

std::string Nvml::driver_version() const {
  char buf[96] = {};
  if (!api_->driver_version || api_->driver_version(buf, sizeof buf) != kNvmlSuccess) return {};
  return buf;
}

void Nvml::pcie_link(int* gen, int* width, int* max_gen, int* max_width) const {
  const auto query = [this](nvmlReturn_t (*fn)(nvmlDevice_t, unsigned int*)) {
    unsigned int v = 0;
    return fn && fn(device_, &v) == kNvmlSuccess && v < 1024 ? static_cast<int>(v) : 0;
  };
  *gen = query(api_->pcie_gen);
  *width = query(api_->pcie_width);
  *max_gen = query(api_->pcie_max_gen);
  *max_width = query(api_->pcie_max_width);
}

void* Nvml::symbol(const char* name) const { return dlsym(handle_, name); }

}  // namespace gpubench
