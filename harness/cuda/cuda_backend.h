// The CUDA backend: device discovery, the device description from the runtime, and the
// Backend implementation that runs the CUDA workloads. Compiled by the host compiler against
// the CUDA runtime API; kernels are reached only through the launcher headers in kernels/.
// This header itself includes nothing from CUDA.
#pragma once

#include <memory>
#include <string>

#include "harness/backend.h"
#include "harness/workload_table.h"

namespace gpubench {

/// Whether CUDA devices can be used, and if not, why. Never throws.
struct CudaAvailability {
  int device_count = 0;  ///< usable devices (0 when none)
  int error_code = 0;    ///< cudaError_t of cudaGetDeviceCount
  std::string reason;    ///< one line when device_count == 0: "no NVIDIA driver ...", "no CUDA device", ...
};
CudaAvailability cuda_availability();

/// The backend for device `index` (0-based) running the workloads in `table`
/// (cuda_workloads(): every family's). Throws std::runtime_error with one line on failure.
std::unique_ptr<Backend> make_cuda_backend(int index, WorkloadTable table);

/// The one-line reason why cudaGetDeviceCount's `error_code` leaves no usable device.
/// `driver_version` and `runtime_version` are cudaDriverGetVersion / cudaRuntimeGetVersion
/// values (12040 = CUDA 12.4; a driver version of 0 means no driver is installed). Pure.
std::string cuda_unavailable_reason(int error_code, int driver_version, int runtime_version);

/// "12.4" from 12040 (the CUDA version encoding 1000 * major + 10 * minor).
std::string cuda_version_string(int version);

/// The major number of an NVIDIA driver version string ("550" of "550.54.15"); 0 if none.
int driver_major_version(const std::string& driver_version);

/// Stable device key for the results store: card name slug, memory in GiB, compute
/// capability, driver and CUDA runtime, e.g. "h100_80gb_hbm3-79gib-sm90-drv550-cuda13.0".
/// `driver_major` is the NVIDIA driver branch (550); when it is unknown (0) the CUDA version
/// the driver supports stands in ("drvcuda12.4"). No hostname, no clocks. Pure.
std::string cuda_device_key(const DeviceDescription& d, int driver_major, int cuda_driver_version, int runtime_version);

/// The words the context's cache_policy entry records.
extern const char* const kCudaCachePolicy;

}  // namespace gpubench
