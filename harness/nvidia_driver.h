// What the NVIDIA kernel driver shows, read from /proc and /dev without the CUDA runtime: whether
// a GPU is there at all, and the driver's version. A GPU that the driver shows but CUDA cannot
// use (a driver older than the runtime) is an error, not a reason to run on the host.
#pragma once

#include <string>

namespace gpubench {

/// The kernel module's version ("580.159.04") from <proc_root>/driver/nvidia/version; "" when
/// the file is absent or unreadable.
std::string nvidia_driver_version(const std::string& proc_root = "/proc");

/// Whether the driver shows a GPU: an entry under <proc_root>/driver/nvidia/gpus/ or a
/// <dev_root>/nvidia0 device node.
bool nvidia_gpu_present(const std::string& proc_root = "/proc", const std::string& dev_root = "/dev");

}  // namespace gpubench
