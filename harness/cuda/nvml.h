// NVML telemetry (SM and memory clocks, throttle reasons), loaded at run time with dlopen:
// the CUDA toolkit ships neither nvml.h nor a link stub, and a machine without the NVIDIA
// driver has no libnvidia-ml.so.1. Its absence means "no telemetry", never an error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "harness/backend.h"

namespace gpubench {

/// NVML throttle ("clocks event") reason bits, as documented in nvml.h
/// (nvmlClocksThrottleReason* / nvmlClocksEventReason*).
namespace nvml_reason {
constexpr std::uint64_t kGpuIdle = 0x1;
constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
constexpr std::uint64_t kSwPowerCap = 0x4;
constexpr std::uint64_t kHwSlowdown = 0x8;
constexpr std::uint64_t kSyncBoost = 0x10;
constexpr std::uint64_t kSwThermalSlowdown = 0x20;
constexpr std::uint64_t kHwThermalSlowdown = 0x40;
constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
constexpr std::uint64_t kDisplayClockSetting = 0x100;
}  // namespace nvml_reason

/// True when the reasons say the clocks were pulled down by a fault or heat: HW slowdown, SW/HW
/// thermal slowdown, HW power brake. A result taken so is not the card's normal speed (the
/// comparator calls such a row INVALID). Idle, application-clock, sync-boost and display-clock
/// reasons are settings or states; the software power cap is is_power_capped's.
bool is_throttled(std::uint64_t reasons);
/// True when the software power cap held the clocks down: how an H100 normally runs heavy tensor
/// work (its FP16 GEMMs at 4096-8192 ran there in every run), so it is reported, not a fault.
bool is_power_capped(std::uint64_t reasons);

/// Names of the set reason bits, "+"-joined ("sw_power_cap+hw_thermal"); "none" when 0.
std::string throttle_reason_names(std::uint64_t reasons);

/// A loaded and initialized NVML, bound to one device by its PCI bus id.
class Nvml {
 public:
  /// Loads `library` (default libnvidia-ml.so.1), initializes NVML and finds the device with
  /// `pci_bus_id`. Returns nullptr, with the reason in *why, when any step fails.
  static std::unique_ptr<Nvml> open(const std::string& pci_bus_id, std::string* why,
                                    const char* library = "libnvidia-ml.so.1");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  /// Current SM and memory clocks; available=false if a query fails (throttle_reasons() has the
  /// reasons).
  Telemetry sample() const;
  /// Raw throttle reasons now (0 when the query fails).
  std::uint64_t throttle_reasons() const;
  /// Board power in watts now: the instantaneous reading (field NVML_FI_DEV_POWER_INSTANT) where
  /// the driver has it, else nvmlDeviceGetPowerUsage (which Ampere and newer average over one
  /// second); < 0 when unknown.
  double power_W() const;
  /// GPU temperature in degrees C (nvmlDeviceGetTemperature, the GPU sensor); < 0 when unknown.
  double temperature_C() const;
  /// Energy used since the driver loaded, in joules (nvmlDeviceGetTotalEnergyConsumption, Volta
  /// and newer); < 0 when unknown.
  double total_energy_J() const;
  /// The maximum SM and memory clocks in MHz (nvmlDeviceGetMaxClockInfo); false if unknown.
  bool max_clocks(double* sm_MHz, double* mem_MHz) const;
  /// The driver version string ("550.54.15"), empty if unknown.
  std::string driver_version() const;
  /// PCIe link: current and maximum generation and width (nvmlDeviceGetCurrPcieLink*,
  /// nvmlDeviceGetGpuMaxPcieLinkGeneration or else nvmlDeviceGetMaxPcieLinkGeneration,
  /// nvmlDeviceGetMaxPcieLinkWidth); each is 0 where the query fails or the driver lacks it.
  void pcie_link(int* gen, int* width, int* max_gen, int* max_width) const;

  /// An NVML entry point by name (nullptr where this driver's NVML lacks it), for the queries
  /// kept beside their users (node health, peer topology) rather than in this class.
  void* symbol(const char* name) const;
  /// The nvmlDevice_t of this device, to pass to symbol()'s functions.
  void* device_handle() const { return device_; }

 private:
  struct Api;
  Nvml(void* handle, std::unique_ptr<Api> api, void* device);
  void* handle_;
  std::unique_ptr<Api> api_;
  void* device_;
};

}  // namespace gpubench
