// What a CUDA workload needs from its backend: the device's stream, SM count, L2 flusher and
// telemetry. Workload factories receive a Backend&; cuda_device_of() gets this from it.
//
//   std::unique_ptr<Workload> make_my_workload(const BenchCase& c, Backend& b) {
//     return std::make_unique<MyWorkload>(c, cuda_device_of(b));
//   }
//   ... in prepare():  dev.activate();  if (c.needs_flush) dev.flusher().allocate(dev.stream());
//   ... in run(batch): return timer.time(batch, enqueue, c.needs_flush ? &dev.flusher() : nullptr);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "harness/backend.h"
#include "harness/cuda/nvml.h"
#include "harness/cuda/timing.h"

struct CUstream_st;

namespace gpubench {

class Nvml;

/// The description of CUDA device `index` from the runtime (cudaDeviceGetAttribute for clocks,
/// bus width, L2, SMs and compute capability; cudaGetDeviceProperties for the name and memory)
/// and its PCI bus id. The PCIe link fields are left unknown here.
DeviceDescription describe_cuda_device(int index, std::string* pci_bus_id);

/// One CUDA device as the workloads see it; owned by the CUDA backend, outlives its workloads.
class CudaDevice {
 public:
  /// Makes `index` current and creates a non-blocking stream on it (a created stream, not the
  /// legacy default stream, which cannot be captured into a graph). `nvml`: the device's NVML,
  /// opened once by the caller (nullptr without one; `nvml_status` says why).
  CudaDevice(int index, const DeviceDescription& desc, const std::string& pci_bus_id,
             std::unique_ptr<Nvml> nvml = nullptr, std::string nvml_status = "no NVML");
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  /// Makes this device current on the calling thread (cheap; call at the top of prepare()).
  void activate() const;
  int index() const { return index_; }
  /// The stream every workload of this device enqueues on.
  CUstream_st* stream() const { return stream_; }
  int sm_count() const { return desc_.sm_count; }
  const DeviceDescription& description() const { return desc_; }
  /// "0000:3b:00.0" from cudaDeviceGetPCIBusId (sysfs and NVML key the device by it).
  const std::string& pci_bus_id() const { return pci_bus_id_; }
  /// The shared L2 flusher (its buffer is allocated on first use).
  L2Flusher& flusher() { return flusher_; }
  /// NVML telemetry now; available=false without NVML.
  Telemetry telemetry() const;
  /// The SM clock in MHz to convert cycles to time: NVML's current SM clock when available,
  /// else the maximum clock from the runtime.
  double sm_clock_MHz_now() const;
  /// The device's memory now (cudaMemGetInfo: device-wide free and total; used = total - free;
  /// tolerance cuda_leak_tolerance_bytes with this device's flush buffer); nullopt when the
  /// runtime cannot say (a lost device).
  std::optional<MemoryReading> memory_reading() const;
  /// The loaded NVML, or nullptr ("no telemetry"); nvml_status() says why.
  const Nvml* nvml() const { return nvml_.get(); }
  const std::string& nvml_status() const { return nvml_status_; }

 private:
  int index_;
  DeviceDescription desc_;
  std::string pci_bus_id_;
  CUstream_st* stream_ = nullptr;
  L2Flusher flusher_;
  std::unique_ptr<Nvml> nvml_;
  std::string nvml_status_;
};

/// A Backend that runs on a CudaDevice: the CUDA backend, or a test's stand-in for it.
class CudaBackendBase : public Backend {
 public:
  /// The device the backend's workloads run on.
  virtual CudaDevice& cuda_device() = 0;
  std::optional<MemoryReading> memory_reading() override { return cuda_device().memory_reading(); }
};

/// The CudaDevice behind a CUDA backend. Throws std::logic_error for any other backend.
CudaDevice& cuda_device_of(Backend& backend);

}  // namespace gpubench
