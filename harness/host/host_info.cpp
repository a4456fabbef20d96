#include "harness/host/host_info.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "harness/host/parallel.h"
#include "harness/memory_check.h"
#include "harness/slug.h"

// Under AddressSanitizer freed memory waits in its quarantine and the shadow memory stays
// resident, so the resident set only grows; the sanitizer's own count of live heap bytes
// stands in for it there.
#if defined(__SANITIZE_ADDRESS__)
#define GPUBENCH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUBENCH_ASAN 1
#endif
#endif
#ifdef GPUBENCH_ASAN
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();  // NOLINT: the sanitizer's interface
#endif

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
      // deliberately swallowed: a size sysfs writes in a form we do not read is left out
    }
  }
  return best;
}

std::string read_text(const char* path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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

std::optional<std::uint64_t> proc_field_bytes(const std::string& text, const std::string& key) {
  const std::string head = key + ":";
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t eol = std::min(text.find('\n', at), text.size());
    if (text.compare(at, head.size(), head) == 0) {
      std::istringstream line(text.substr(at + head.size(), eol - at - head.size()));
      std::uint64_t value = 0;
      std::string unit;
      if (line >> value >> unit && unit == "kB") return value * 1024;
      return std::nullopt;
    }
    at = eol + 1;
  }
  return std::nullopt;
}

std::optional<MemoryReading> host_memory_reading() {
  // Freed memory the allocator still holds would read as a leak: glibc keeps freed chunks in
  // its arenas (one per thread that allocated), and malloc_trim returns their whole pages.
  (void)malloc_trim(0);
  const std::string meminfo = read_text("/proc/meminfo");
  const auto total = proc_field_bytes(meminfo, "MemTotal");
  const auto available = proc_field_bytes(meminfo, "MemAvailable");
#ifdef GPUBENCH_ASAN
  std::optional<std::uint64_t> used = __sanitizer_get_current_allocated_bytes();
  const char* used_what = "heap in use by this process (AddressSanitizer's count)";
#else
  const std::string status = read_text("/proc/self/status");
  auto used = proc_field_bytes(status, "RssAnon");
  const char* used_what = "resident anonymous memory of this process (RssAnon)";
  if (!used) {
    used = proc_field_bytes(status, "VmRSS");
    used_what = "resident memory of this process (VmRSS)";
  }
#endif
  if (!total || !available || !used) return std::nullopt;
  MemoryReading r;
  r.total_bytes = *total;
  r.free_bytes = *available;
  r.used_bytes = *used;
  r.used_what = used_what;
  r.leak_tolerance_bytes = kHostLeakToleranceBytes;
  return r;
}

std::string host_device_key(const DeviceDescription& d) {
  const std::string slug = slugify(d.name, '-');
  const auto gib = (d.memory_bytes + (1ull << 29)) >> 30;  // rounded: the kernel reserves a little
  return "host_" + slug + "_" + std::to_string(d.sm_count) + "cpu_" + std::to_string(gib) + "GiB";
}

}  // namespace gpubench
