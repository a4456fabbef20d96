// --device=auto|host|N: which backend runs, and why, in one line.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "harness/backend.h"
#include "harness/cli.h"
#include "harness/family.h"
#include "harness/workload_table.h"

namespace gpubench {

/// The requested device cannot be used (no driver, no device, driver too old): exit 2.
class DeviceUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Number of usable CUDA devices (0 without CUDA support or without a driver) and, when 0, why.
int usable_cuda_devices(std::string* reason);

/// --device=auto without a usable CUDA device: the host, unless a GPU is there that CUDA cannot
/// use (a driver older than the runtime, say) and CUDA_VISIBLE_DEVICES does not hide it on
/// purpose; then the one-line error to exit with (empty: run on the host).
std::string auto_fallback_error(bool gpu_present, const std::string& driver_version, const char* cuda_visible_devices,
                                const std::string& reason);

/// Where the host backend's workloads come from: host_workloads() (harness/family.h).
using HostWorkloadSource = WorkloadTable (*)();

/// The backend for a choice other than `all`. For `auto` without a usable GPU, `note` receives
/// the one line to print on stderr. Throws DeviceUnavailable or UsageError (an index past the
/// last device). `host_table` makes the host backend's workloads: host_workloads() always, except
/// in a test executable (run_app's seam, harness/app.h).
std::unique_ptr<Backend> select_backend(const DeviceChoice& choice, std::string* note,
                                        HostWorkloadSource host_table = &host_workloads);

}  // namespace gpubench
