// The CUDA backend: device discovery, the device description from the runtime, and the
// Backend implementation that runs the CUDA workloads. Compiled by the host compiler against
// the CUDA runtime API; kernels are reached only through the launcher headers in kernels/.
#pragma once

#include <memory>
#include <string>

#include "harness/backend.h"

namespace gpubench {

/// Whether CUDA devices can be used, and if not, why. Never throws.
struct CudaAvailability {
  int device_count = 0;  ///< usable devices (0 when none)
  int error_code = 0;    ///< cudaError_t of cudaGetDeviceCount
  std::string reason;    ///< one line when device_count == 0: "no NVIDIA driver ...", "no CUDA device", ...
};
CudaAvailability cuda_availability();

/// The backend for device `index` (0-based). Throws std::runtime_error with one line on failure.
std::unique_ptr<Backend> make_cuda_backend(int index);

}  // namespace gpubench
