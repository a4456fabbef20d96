// What the host backend reports about this machine: CPU model, logical CPUs, memory and
// last-level cache, read from /proc and /sys.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "harness/backend.h"
#include "harness/model/device.h"

namespace gpubench {

/// The host as a DeviceDescription (cc 0.0; sm_count = logical CPUs; l2_bytes = last-level cache).
DeviceDescription describe_host();

/// "host_<cpu model>_<N>cpu_<M>GiB": stable for the same machine, no hostname.
std::string host_device_key(const DeviceDescription& d);

/// The value of `key` in a /proc file of "Key:   123 kB" lines (/proc/meminfo,
/// /proc/self/status), in bytes; nullopt when the key is missing or not a number of kB.
std::optional<std::uint64_t> proc_field_bytes(const std::string& text, const std::string& key);

/// The host's memory now: total = MemTotal, free = MemAvailable (/proc/meminfo, what can be
/// had without swapping), used = this process's resident anonymous memory (RssAnon, VmRSS on
/// kernels without it, from /proc/self/status) after malloc_trim(0) has handed the allocator's
/// free pages back. Other processes move free but never used, so the leak check follows used
/// and ctest's parallel tests cannot fail it. nullopt when /proc cannot be read.
std::optional<MemoryReading> host_memory_reading();

}  // namespace gpubench
