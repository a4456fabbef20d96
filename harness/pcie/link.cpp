#include "harness/pcie/link.h"

#include "harness/pcie/payload.h"

#include <sys/stat.h>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "harness/model/device.h"

namespace gpubench::pcie {
namespace {

/// The whole first line of a small sysfs attribute, trailing whitespace removed; "" if unreadable.
std::string read_attribute(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

/// True for a sysfs PCI device name: domain:bus:device.function in lower-case hex.
bool is_pci_name(const std::string& name) {
  try {
    return sysfs_pci_address(name) == name;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

/// Negotiated link of the device directory `dir` (unknown when its files are missing).
LinkState read_current(const std::string& dir) {
  LinkState s;
  s.gen = parse_link_speed_gen(read_attribute(dir + "/current_link_speed"), &s.speed_GTps);
  s.width = parse_link_width(read_attribute(dir + "/current_link_width"));
  return s;
}

/// The PCI devices above `device_dir` in its resolved sysfs path, root port first.
std::vector<PathHop> read_upstream(const std::string& device_dir) {
  std::vector<PathHop> hops;
  char* resolved = ::realpath(device_dir.c_str(), nullptr);
  if (!resolved) return hops;
  std::string path = resolved;
  std::free(resolved);
  // Climb while the parent directory is itself a PCI device (it stops at "pci0000:80").
  for (auto slash = path.rfind('/'); slash != std::string::npos && slash > 0; slash = path.rfind('/')) {
    path.erase(slash);
    const std::string name = path.substr(path.rfind('/') + 1);
    if (!is_pci_name(name)) break;
    hops.insert(hops.begin(), PathHop{name, read_current(path)});
  }
  return hops;
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// Parses `text` entirely as hexadecimal with at most `max_digits` digits.
bool parse_hex(const std::string& text, std::size_t max_digits, unsigned long* value) {
  if (text.empty() || text.size() > max_digits) return false;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  *value = std::strtoul(text.c_str(), nullptr, 16);
  return true;
}

}  // namespace

bool PcieLink::downgraded() const {
  if (!current.known() || !max.known()) return false;
  return current.gen < max.gen || current.width < max.width;
}

std::string sysfs_pci_address(const std::string& bus_id) {
  const auto bad = [&bus_id]() {
    return std::invalid_argument("not a PCI address (domain:bus:device.function): \"" + bus_id + "\"");
  };
  // Split "domain:bus:device.function"; the domain is optional (lspci omits it).
  std::string domain = "0", rest = bus_id;
  const auto first = bus_id.find(':');
  const auto second = first == std::string::npos ? std::string::npos : bus_id.find(':', first + 1);
  if (first == std::string::npos) throw bad();
  if (second != std::string::npos) {
    domain = bus_id.substr(0, first);
    rest = bus_id.substr(first + 1);
  }
  const auto colon = rest.find(':');
  const auto dot = rest.find('.');
  if (colon == std::string::npos || dot == std::string::npos || dot < colon) throw bad();
  unsigned long dom = 0, bus = 0, dev = 0, fn = 0;
  // NVML writes an 8-digit domain; a domain above 0xffff exists (Intel VMD) and sysfs prints
  // it in full, so only leading zeros are dropped.
  if (!parse_hex(domain, 8, &dom) || !parse_hex(rest.substr(0, colon), 2, &bus) ||
      !parse_hex(rest.substr(colon + 1, dot - colon - 1), 2, &dev) || !parse_hex(rest.substr(dot + 1), 1, &fn) ||
      dev > 0x1f || fn > 7) {
    throw bad();
  }
  char out[32];
  std::snprintf(out, sizeof out, "%04lx:%02lx:%02lx.%lx", dom, bus, dev, fn);
  return out;
}

int parse_link_speed_gen(const std::string& text, double* GTps) {
  if (GTps) *GTps = 0;
  const char* begin = text.c_str();
  char* end = nullptr;
  const double rate = std::strtod(begin, &end);
  if (end == begin || !(rate > 0)) return 0;  // "Unknown", "Unknown speed", ""
  // The unit must follow: "2.5 GT/s", "16.0 GT/s PCIe" (newer kernels append "PCIe").
  std::string rest(end);
  while (!rest.empty() && rest.front() == ' ') rest.erase(rest.begin());
  if (rest.compare(0, 4, "GT/s") != 0) return 0;
  // Per-lane rate of each generation (PCI Express Base Specification).
  static const double kRates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  for (int g = 0; g < 6; ++g) {
    if (std::fabs(rate - kRates[g]) < 0.01) {
      if (GTps) *GTps = rate;
      return g + 1;
    }
  }
  return 0;
}

int parse_link_width(const std::string& text) {
  std::string t = text;
  if (!t.empty() && (t.front() == 'x' || t.front() == 'X')) t.erase(t.begin());
  if (t.empty()) return 0;
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return 0;
  }
  const long w = std::strtol(t.c_str(), nullptr, 10);
  // Links are x1..x32; a link that is down reads 0.
  return (w > 0 && w <= 32) ? static_cast<int>(w) : 0;
}

PcieLink read_pcie_link(const std::string& sysfs_root, const std::string& address) {
  PcieLink link;
  link.address = sysfs_pci_address(address);
  const std::string dir = sysfs_root + "/bus/pci/devices/" + link.address + "/";
  link.found = is_directory(dir);
  if (!link.found) return link;
  link.current = read_current(dir);
  link.max.gen = parse_link_speed_gen(read_attribute(dir + "max_link_speed"), &link.max.speed_GTps);
  link.max.width = parse_link_width(read_attribute(dir + "max_link_width"));
  const std::string node = read_attribute(dir + "numa_node");
  char* end = nullptr;
  const long n = std::strtol(node.c_str(), &end, 10);
  if (!node.empty() && *end == '\0' && n >= 0 && n < 4096) link.numa_node = static_cast<int>(n);
  if (link.current.known() || link.max.known()) link.source = "sysfs";
  link.max_payload_bytes = read_max_payload(sysfs_root, link.address);
  link.upstream = read_upstream(dir);
  return link;
}

PcieLink read_pcie_link_under_load(const std::string& sysfs_root, const std::string& address,
                                   const std::function<void()>& load, bool* reread) {
  return read_link_under_load([&] { return read_pcie_link(sysfs_root, address); }, load, reread);
}

PcieLink read_link_under_load(const std::function<PcieLink()>& read, const std::function<void()>& load, bool* reread,
                              std::chrono::milliseconds pause) {
  PcieLink link = read();
  if (reread) *reread = false;
  if (link.downgraded() && load) {
    load();
    if (reread) *reread = true;
    for (int i = 0; i < kLinkReadsUnderLoad; ++i) {
      if (i > 0) std::this_thread::sleep_for(pause);
      link = read();
      if (!link.downgraded()) break;
    }
  }
  return link;
}

bool fill_unknown_link(PcieLink& link, const LinkState& nvml_current, const LinkState& nvml_max) {
  // NVML reports generation and width only; keep sysfs's GT/s where it has one.
  static const double kRates[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  bool filled = false;
  for (auto [mine, theirs] : {std::pair<LinkState*, const LinkState*>{&link.current, &nvml_current},
                              std::pair<LinkState*, const LinkState*>{&link.max, &nvml_max}}) {
    if (mine->known() || theirs->gen < 1 || theirs->gen > 6 || theirs->width < 1 || theirs->width > 32) continue;
    mine->gen = theirs->gen;
    mine->width = theirs->width;
    mine->speed_GTps = kRates[theirs->gen];
    filled = true;
  }
  if (filled) link.source = link.source.empty() ? "nvml" : link.source + "+nvml";
  return filled;
}

const PathHop* upstream_bottleneck(const PcieLink& link) {
  const double own = link_GBps_per_direction(link.current);
  if (own <= 0) return nullptr;
  const PathHop* slowest = nullptr;
  for (const PathHop& hop : link.upstream) {
    const double rate = link_GBps_per_direction(hop.current);
    if (rate > 0 && rate < own * (1 - 1e-9) && (!slowest || rate < link_GBps_per_direction(slowest->current))) {
      slowest = &hop;
    }
  }
  return slowest;
}

std::string path_description(const PcieLink& link) {
  std::string out;
  for (const PathHop& hop : link.upstream) out += hop.address + " " + link_name(hop.current) + " > ";
  return out + link.address + " " + link_name(link.current);
}

std::vector<std::string> link_warnings(const std::string& dev, const PcieLink& link) {
  std::vector<std::string> w;
  if (std::string d = downgraded_link_warning(dev, link); !d.empty()) w.push_back(std::move(d));
  if (const PathHop* b = upstream_bottleneck(link)) {
    w.push_back("warning: PCIe path of " + dev + " narrows to " + link_name(b->current) + " at " + b->address +
                ", upstream of its own " + link_name(link.current) + " link");
  }
  return w;
}

std::string link_name(const LinkState& s) {
  if (!s.known()) return "unknown";
  return "Gen" + std::to_string(s.gen) + " x" + std::to_string(s.width);
}

double link_GBps_per_direction(const LinkState& s) { return s.known() ? pcie_GBps_per_direction(s.gen, s.width) : 0.0; }

std::string downgraded_link_warning(const std::string& dev, const PcieLink& link) {
  if (!link.downgraded()) return {};
  return "warning: PCIe link of " + dev + " runs at " + link_name(link.current) + ", below its maximum " +
         link_name(link.max);
}

}  // namespace gpubench::pcie
