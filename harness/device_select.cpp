#include "harness/device_select.h"

#include <cstdlib>

#include "harness/family.h"
#include "harness/host/host_backend.h"
#include "harness/nvidia_driver.h"
#ifdef GPUBENCH_HAVE_CUDA
#include "harness/cuda/cuda_backend.h"
#endif

namespace gpubench {

int usable_cuda_devices(std::string* reason) {
#ifdef GPUBENCH_HAVE_CUDA
  const CudaAvailability a = cuda_availability();
  if (a.device_count == 0 && reason) *reason = a.reason;
  return a.device_count;
#else
  if (reason) *reason = "this gpubench was built without CUDA (GPUBENCH_CUDA=OFF or no toolkit)";
  return 0;
#endif
}

std::string auto_fallback_error(bool gpu_present, const std::string& driver_version, const char* cuda_visible_devices,
                                const std::string& reason) {
  if (!gpu_present || cuda_visible_devices != nullptr) return {};  // no GPU, or hidden on purpose
  return "--device=auto: an NVIDIA GPU is present (driver " + (driver_version.empty() ? "unknown" : driver_version) +
         ") but CUDA cannot use it: " + reason +
         ". Install a driver that supports this gpubench's CUDA runtime, or build gpubench with a CUDA toolkit "
         "your driver supports (cmake -DCMAKE_CUDA_COMPILER=<that toolkit>/bin/nvcc); --device=host runs on the CPU";
}

std::unique_ptr<Backend> select_backend(const DeviceChoice& choice, std::string* note, HostWorkloadSource host_table) {
  using Kind = DeviceChoice::Kind;
  if (choice.kind == Kind::host) return make_host_backend(host_table());
  std::string reason;
  const int count = usable_cuda_devices(&reason);
  if (choice.kind == Kind::automatic) {
    if (count == 0) {
#ifdef GPUBENCH_HAVE_CUDA
      const std::string error = auto_fallback_error(nvidia_gpu_present(), nvidia_driver_version(),
                                                    std::getenv("CUDA_VISIBLE_DEVICES"), reason);
      if (!error.empty()) throw DeviceUnavailable(error);
#endif
      if (note) *note = "gpubench: no usable GPU (" + reason + "); running on the host";
      return make_host_backend(host_table());
    }
  } else if (choice.kind == Kind::index) {
    if (count == 0) throw DeviceUnavailable("--device=" + std::to_string(choice.index) + ": " + reason);
    if (choice.index >= count)
      throw UsageError("--device=" + std::to_string(choice.index) + ": there " + (count == 1 ? "is " : "are ") +
                       std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") + " (0.." +
                       std::to_string(count - 1) + ")");
  } else {
    throw std::logic_error("select_backend: --device=all is handled by the caller");
  }
#ifdef GPUBENCH_HAVE_CUDA
  try {
    return make_cuda_backend(choice.kind == Kind::index ? choice.index : 0, cuda_workloads());
  } catch (const std::runtime_error& e) {
    throw DeviceUnavailable(std::string("CUDA device: ") + e.what());
  }
#else
  throw DeviceUnavailable(reason);
#endif
}

}  // namespace gpubench
