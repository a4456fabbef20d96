// A stand-in for libnvidia-ml.so.1 with the few entry points gpubench loads, so the NVML
// loader (harness/cuda/nvml.cpp) is tested end to end: symbol binding, init, lookup by PCI bus
// id, clocks, throttle reasons, shutdown. Signatures as in nvml.h (enums passed as int).
#include <unistd.h>

#include <cstring>

namespace {
int g_inits = 0;
int g_device_tag = 0;  // the handle handed out
}  // namespace

extern "C" {

int nvmlInit_v2() {
  ++g_inits;
  return 0;
}
int nvmlShutdown() {
  --g_inits;
  return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  if (g_inits <= 0) return 1;                              // NVML_ERROR_UNINITIALIZED
  if (std::strcmp(bus_id, "0000:3B:00.0") != 0) return 6;  // NVML_ERROR_NOT_FOUND
  *device = &g_device_tag;
  return 0;
}
int nvmlDeviceGetClockInfo(void* device, int type, unsigned int* mhz) {
  if (device != &g_device_tag) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *mhz = type == 1 ? 1755u : type == 2 ? 2619u : 0u;
  return type == 1 || type == 2 ? 0 : 2;
}
int nvmlDeviceGetMaxClockInfo(void* device, int type, unsigned int* mhz) {
  if (device != &g_device_tag) return 2;
  *mhz = type == 1 ? 1980u : 2619u;
  return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(void* device, unsigned long long* reasons) {
  if (device != &g_device_tag) return 2;
  *reasons = 0x1ull | 0x40ull;  // idle + HW thermal slowdown
  return 0;
}
int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  if (device != &g_device_tag) return 2;
  *milliwatts = 312500;
  return 0;
}
int nvmlDeviceGetTemperature(void* device, int sensor, unsigned int* celsius) {
  if (device != &g_device_tag || sensor != 0) return 2;  // only NVML_TEMPERATURE_GPU
  *celsius = 47;
  return 0;
}
// nvml.h's nvmlFieldValue_t, written out: the one field asked for here is the instantaneous
// power (NVML_FI_DEV_POWER_INSTANT = 186, milliwatts, an unsigned int); others are not supported.
struct FieldValue {
  unsigned int field_id, scope_id;
  long long timestamp, latency_us;
  unsigned int value_type;
  int nvml_return;
  union {
    double d;
    unsigned int ui;
    unsigned long long ull;
  } value;
};
int nvmlDeviceGetFieldValues(void* device, int count, FieldValue* values) {
  if (device != &g_device_tag || count < 0) return 2;
  for (int i = 0; i < count; ++i) {
    FieldValue& f = values[i];
    if (f.field_id == 186) {
      f.value_type = 1;
      f.value.ui = 287250u;
      f.nvml_return = 0;
    } else {
      f.nvml_return = 3;  // NVML_ERROR_NOT_SUPPORTED
    }
  }
  return 0;
}
// A counter that moves: 1.5 J more at every read.
int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* millijoules) {
  static unsigned long long total = 1000000;
  if (device != &g_device_tag) return 2;
  total += 1500;
  *millijoules = total;
  return 0;
}
int nvmlSystemGetDriverVersion(char* out, unsigned int length) {
  const char* v = "550.54.15";
  if (length < std::strlen(v) + 1) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::strcpy(out, v);
  return 0;
}
// Node health (harness/cuda/node_health.cpp): ECC on with 3 corrected errors since boot and one
// uncorrected in the card's life, one row remapped for an uncorrectable error whose remapping
// failed, this process and one other on the GPU, no MIG on this card. No retired-page query
// (as on drivers that dropped it): that field stays unknown.
int nvmlDeviceGetEccMode(void* device, unsigned int* current, unsigned int* pending) {
  if (device != &g_device_tag) return 2;
  *current = *pending = 1;
  return 0;
}
int nvmlDeviceGetTotalEccErrors(void* device, int type, int counter, unsigned long long* count) {
  if (device != &g_device_tag) return 2;
  *count = type == 0 ? (counter == 0 ? 3 : 9) : (counter == 0 ? 0 : 1);
  return 0;
}
int nvmlDeviceGetRemappedRows(void* device, unsigned int* corrected, unsigned int* uncorrected, unsigned int* pending,
                              unsigned int* failed) {
  if (device != &g_device_tag) return 2;
  *corrected = 0;
  *uncorrected = 1;
  *pending = 0;
  *failed = 1;
  return 0;
}
struct FakeProcessInfo {
  unsigned int pid;
  unsigned long long used_memory;
  unsigned int gpu_instance;
  unsigned int compute_instance;
};
int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned int* count, FakeProcessInfo* infos) {
  if (device != &g_device_tag) return 2;
  const unsigned int pids[] = {static_cast<unsigned int>(::getpid()), 4242u};
  if (*count < 2) {
    *count = 2;
    return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  }
  for (unsigned int i = 0; i < 2; ++i) infos[i] = FakeProcessInfo{pids[i], 1u << 30, 0, 0};
  *count = 2;
  return 0;
}
int nvmlDeviceGetMigMode(void* device, unsigned int* current, unsigned int* pending) {
  if (device != &g_device_tag) return 2;
  *current = *pending = 0;
  return 3;  // NVML_ERROR_NOT_SUPPORTED: a card without MIG
}
/// Test hook: how many nvmlInit_v2 are not yet matched by nvmlShutdown.
int fake_nvml_live_inits() { return g_inits; }

}  // extern "C"
