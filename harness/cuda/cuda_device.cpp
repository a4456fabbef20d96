#include "harness/cuda/cuda_device.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "harness/cuda/cuda_check.h"
#include "harness/cuda/node_health.h"
#include "harness/cuda/nvml.h"
#include "harness/memory_check.h"

namespace gpubench {

namespace {

int attribute(cudaDeviceAttr attr, int index) {
  int v = 0;
  GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, index));
  return v;
}

}  // namespace

// Everything from cudaDeviceGetAttribute except the name and memory size: cudaDeviceProp lost
// clockRate and memoryClockRate in CUDA 13, the attributes work with 12 and 13 alike.
DeviceDescription describe_cuda_device(int index, std::string* pci_bus_id) {
  cudaDeviceProp prop{};
  GPUBENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  DeviceDescription d;
  d.name = prop.name;
  d.memory_bytes = prop.totalGlobalMem;
  d.cc_major = attribute(cudaDevAttrComputeCapabilityMajor, index);
  d.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor, index);
  d.sm_count = attribute(cudaDevAttrMultiProcessorCount, index);
  d.sm_clock_kHz = attribute(cudaDevAttrClockRate, index);
  d.mem_clock_kHz = attribute(cudaDevAttrMemoryClockRate, index);
  d.bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, index);
  d.l2_bytes = static_cast<std::uint64_t>(attribute(cudaDevAttrL2CacheSize, index));
  d.geforce = d.name.find("GeForce") != std::string::npos;
  d.ecc = attribute(cudaDevAttrEccEnabled, index) != 0;
  char bus[64] = {};
  GPUBENCH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, static_cast<int>(sizeof bus), index));
  *pci_bus_id = bus;
  return d;
}

CudaDevice::CudaDevice(int index, const DeviceDescription& desc, const std::string& pci_bus_id,
                       std::unique_ptr<Nvml> nvml, std::string nvml_status)
    : index_(index),
      desc_(desc),
      pci_bus_id_(pci_bus_id),
      flusher_(desc.l2_bytes, desc.sm_count),
      nvml_(std::move(nvml)),
      nvml_status_(std::move(nvml_status)) {
  GPUBENCH_CUDA_CHECK(cudaSetDevice(index_));
  GPUBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  // A per-context limit, so read once the context exists: the unit an L2 miss fetches (64 B on
  // an H100, where Nsight Compute's DRAM byte counts of random reads show it).
  std::size_t fetch = 0;
  if (cudaDeviceGetLimit(&fetch, cudaLimitMaxL2FetchGranularity) == cudaSuccess) {
    desc_.l2_fetch_bytes = static_cast<int>(fetch);
  } else {
    GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaGetLastError());  // unsupported: the models assume a sector
  }
}

CudaDevice::~CudaDevice() {
  if (stream_) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
}

void CudaDevice::activate() const { GPUBENCH_CUDA_CHECK(cudaSetDevice(index_)); }

std::optional<MemoryReading> CudaDevice::memory_reading() const {
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaSetDevice(index_) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();  // a reading that failed must not fail the next checked call
    return std::nullopt;
  }
  MemoryReading r;
  r.total_bytes = total_bytes;
  r.free_bytes = free_bytes;
  r.used_bytes = total_bytes - std::min(free_bytes, total_bytes);
  r.used_what = "device memory in use (cudaMemGetInfo: total - free)";
  r.leak_tolerance_bytes = cuda_leak_tolerance_bytes(total_bytes, flusher_.buffer_bytes());
  if (nvml_) {
    const auto others = other_gpu_processes(*nvml_, static_cast<int>(::getpid()));
    if (others && others->count > 0) r.shared_with = other_gpu_processes_text(others);
  }
  return r;
}

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
