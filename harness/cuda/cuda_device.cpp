#include "harness/cuda/cuda_device.h"

#include <cuda_runtime_api.h>

#include <stdexcept>

#include "harness/cuda/cuda_check.h"
#include "harness/cuda/nvml.h"

namespace gpubench {

CudaDevice::CudaDevice(int index, const DeviceDescription& desc, const std::string& pci_bus_id)
    : index_(index), desc_(desc), pci_bus_id_(pci_bus_id), flusher_(desc.l2_bytes, desc.sm_count) {
  GPUBENCH_CUDA_CHECK(cudaSetDevice(index_));
  GPUBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  nvml_ = Nvml::open(pci_bus_id_, &nvml_status_);
  if (nvml_) nvml_status_ = "NVML loaded";
}

CudaDevice::~CudaDevice() {
  if (stream_) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
}

void CudaDevice::activate() const { GPUBENCH_CUDA_CHECK(cudaSetDevice(index_)); }

Telemetry CudaDevice::telemetry() const { return nvml_ ? nvml_->sample() : Telemetry{}; }

double CudaDevice::sm_clock_MHz_now() const {
  const Telemetry t = telemetry();
  if (t.available && t.sm_clock_MHz > 0) return t.sm_clock_MHz;
  return desc_.sm_clock_kHz / 1000.0;
}

CudaDevice& cuda_device_of(Backend& backend) {
  auto* cuda = dynamic_cast<CudaBackendBase*>(&backend);
  if (!cuda) throw std::logic_error("a CUDA workload was created for the " + backend.kind() + " backend");
  return cuda->cuda_device();
}

}  // namespace gpubench
