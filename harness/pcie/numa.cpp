#include "harness/pcie/numa.h"

// sched_getcpu and the CPU_* macros need _GNU_SOURCE, which g++ always defines for C++.
#include <dirent.h>
#include <sched.h>
#include <sys/types.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace gpubench::pcie {
namespace {

/// Parses a non-negative decimal number (CPU, node or thread id) that fills `text`; -1 otherwise.
long parse_cpu_number(const std::string& text) {
  if (text.empty() || text.size() > 9) return -1;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  }
  return std::strtol(text.c_str(), nullptr, 10);
}

/// Node numbers present under <root>/devices/system/node (directories named node<N>).
std::vector<int> list_nodes(const std::string& sysfs_root) {
  std::vector<int> nodes;
  DIR* dir = ::opendir((sysfs_root + "/devices/system/node").c_str());
  if (!dir) return nodes;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name.compare(0, 4, "node") != 0) continue;
    const long n = parse_cpu_number(name.substr(4));
    if (n >= 0) nodes.push_back(static_cast<int>(n));
  }
  ::closedir(dir);
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

}  // namespace

std::vector<int> parse_cpulist(const std::string& text) {
  std::string t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  std::vector<int> cpus;
  if (t.empty()) return cpus;  // a memory-only node has an empty cpulist
  std::size_t pos = 0;
  while (pos <= t.size()) {
    const std::size_t comma = std::min(t.find(',', pos), t.size());
    const std::string item = t.substr(pos, comma - pos);
    const std::size_t dash = item.find('-');
    const long lo = parse_cpu_number(item.substr(0, dash));
    const long hi = dash == std::string::npos ? lo : parse_cpu_number(item.substr(dash + 1));
    if (lo < 0 || hi < lo) throw std::invalid_argument("malformed cpulist \"" + text + "\"");
    for (long c = lo; c <= hi; ++c) cpus.push_back(static_cast<int>(c));
    pos = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> node_cpus(const std::string& sysfs_root, int node) {
  if (node < 0) return {};
  std::ifstream in(sysfs_root + "/devices/system/node/node" + std::to_string(node) + "/cpulist");
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  try {
    return parse_cpulist(line);
  } catch (const std::invalid_argument&) {
    return {};
  }
}

int node_of_cpu(const std::string& sysfs_root, int cpu) {
  if (cpu < 0) return -1;
  for (int node : list_nodes(sysfs_root)) {
    const std::vector<int> cpus = node_cpus(sysfs_root, node);
    if (std::binary_search(cpus.begin(), cpus.end(), cpu)) return node;
  }
  return -1;
}

int current_cpu() { return ::sched_getcpu(); }

int nodes_with_cpus(const std::string& sysfs_root) {
  int n = 0;
  for (int node : list_nodes(sysfs_root)) n += node_cpus(sysfs_root, node).empty() ? 0 : 1;
  return n;
}

BindResult bind_to_numa_node(const std::string& sysfs_root, int node) {
  BindResult r;
  const std::string where = "NUMA node " + std::to_string(node);
  if (node < 0) {
    r.message = "cannot bind: the GPU's NUMA node is unknown (single-node machine or no sysfs entry)";
    return r;
  }
  const std::vector<int> listed = node_cpus(sysfs_root, node);
  if (listed.empty()) {
    r.message = "cannot bind: " + where + " lists no CPUs";
    return r;
  }
  // Keep only the CPUs this process may use (a container's cpuset can exclude some).
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    r.message = "cannot bind: sched_getaffinity failed";
    return r;
  }
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int c : listed) {
    if (c < CPU_SETSIZE && CPU_ISSET(c, &allowed)) {
      CPU_SET(c, &mask);
      r.cpus.push_back(c);
    }
  }
  if (r.cpus.empty()) {
    r.message = "cannot bind: none of the CPUs of " + where + " is in this process's affinity mask";
    return r;
  }
  // sched_setaffinity(0) moves only the calling thread: walk every thread of the process.
  if (::sched_setaffinity(0, sizeof mask, &mask) != 0) {
    r.cpus.clear();
    r.message = "cannot bind: sched_setaffinity failed";
    return r;
  }
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(dir)) {
      const long tid = parse_cpu_number(e->d_name);
      if (tid > 0) ::sched_setaffinity(static_cast<pid_t>(tid), sizeof mask, &mask);  // a thread may exit meanwhile
    }
    ::closedir(dir);
  }
  r.ok = true;
  r.message = "bound to " + where + " (" + std::to_string(r.cpus.size()) + " CPUs)";
  return r;
}

}  // namespace gpubench::pcie
