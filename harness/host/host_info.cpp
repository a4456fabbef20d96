#include "harness/host/host_info.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include "harness/host/parallel.h"
#include "harness/slug.h"

namespace gpubench {

namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(' '));
        return name;
      }
    }
  }
  return "unknown CPU";
}

// Size of the highest cache level of cpu0, from sysfs ("491520K").
std::uint64_t last_level_cache_bytes() {
  std::uint64_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string s;
    if (!(in >> s) || s.empty()) continue;
    std::uint64_t mult = 1;
    if (s.back() == 'K') mult = 1024;
    if (s.back() == 'M') mult = std::uint64_t{1024} * 1024;
    try {
      best = std::max<std::uint64_t>(best, std::stoull(s) * mult);
    } catch (const std::exception&) {
    }
  }
  return best;
}

}  // namespace

DeviceDescription describe_host() {
  DeviceDescription d;
  d.name = cpu_model_name();
  d.sm_count = static_cast<int>(host_threads());
  d.l2_bytes = last_level_cache_bytes();
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) d.memory_bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  return d;
}

std::string host_device_key(const DeviceDescription& d) {
  const std::string slug = slugify(d.name, '-');
  const auto gib = (d.memory_bytes + (1ull << 29)) >> 30;  // rounded: the kernel reserves a little
  return "host_" + slug + "_" + std::to_string(d.sm_count) + "cpu_" + std::to_string(gib) + "GiB";
}

}  // namespace gpubench
