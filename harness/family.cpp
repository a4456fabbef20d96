#include "harness/family.h"

namespace gpubench {

SweepOptions sweep_options(const DeviceDescription& d, const std::string& backend_kind, bool quick) {
  SweepOptions o;
  o.quick = quick;
  o.backend_kind = backend_kind;
  o.l2_bytes = d.l2_bytes;
  o.memory_bytes = d.memory_bytes;
  o.sm_count = d.sm_count;
  if (backend_kind == "cuda") o.l1_bytes = l1_shared_bytes_per_sm(d.cc_major, d.cc_minor);
  o.traffic = traffic_geometry(d, backend_kind == "host");
  o.device_ordinal = d.ordinal;
  o.device_count = d.visible_devices;
  o.peer_paths = d.peer_paths;
  return o;
}

std::string size_token(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  std::uint64_t v = bytes;
  while (u < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + units[u];
}

std::string memory_level(double bytes, const SweepOptions& o) {
  return o.l2_bytes > 0 && bytes < static_cast<double>(o.l2_bytes) / 2 ? "l2" : "dram";
}

std::string row_label(const BenchCase& c) {
  std::string label = std::string("peak=") + peak_kind_name(c.work.peak) + " metric=" + metric_label(c.work.metric) +
                      " level=" + c.level;
  if (!c.sweep.empty()) label += " sweep=" + c.sweep;
  if (!c.path.empty()) label += " path=" + c.path;
  return label;
}

}  // namespace gpubench
