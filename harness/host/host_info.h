// What the host backend reports about this machine: CPU model, logical CPUs, memory and
// last-level cache, read from /proc and /sys.
#pragma once

#include "harness/model/device.h"

namespace gpubench {

/// The host as a DeviceDescription (cc 0.0; sm_count = logical CPUs; l2_bytes = last-level cache).
DeviceDescription describe_host();

/// "host_<cpu model>_<N>cpu_<M>GiB": stable for the same machine, no hostname.
std::string host_device_key(const DeviceDescription& d);

}  // namespace gpubench
