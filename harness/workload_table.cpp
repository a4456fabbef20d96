#include "harness/workload_table.h"

#include <set>
#include <stdexcept>

namespace gpubench {

void WorkloadTable::add(const std::string& key, WorkloadFactory factory, int min_cc) {
  if (entries_.count(key) != 0) throw std::logic_error("workload " + key + " registered twice");
  entries_[key] = Entry{factory, min_cc, {}};
}

void WorkloadTable::not_here(const std::string& key, const std::string& reason) {
  if (entries_.count(key) != 0) throw std::logic_error("workload " + key + " registered twice");
  if (reason.empty()) throw std::logic_error("workload " + key + " declared unavailable without a reason");
  entries_[key] = Entry{nullptr, 0, reason};
}

WorkloadFactory WorkloadTable::find(const BenchCase& c, int device_cc) const {
  return unavailable_reason(c, device_cc).empty() ? entries_.at(c.key()).factory : nullptr;
}

std::string WorkloadTable::unavailable_reason(const BenchCase& c, int device_cc) const {
  const auto it = entries_.find(c.key());
  if (it == entries_.end()) return "no workload for " + c.key();
  if (!it->second.factory) return it->second.not_here;
  const int need = std::max(it->second.min_cc, c.min_cc);
  if (device_cc < need)
    return "needs compute capability " + std::to_string(need / 10) + "." + std::to_string(need % 10) +
           " or newer; this device is " + std::to_string(device_cc / 10) + "." + std::to_string(device_cc % 10);
  return {};
}

void WorkloadTable::check_complete(const std::vector<BenchCase>& rows, const std::string& backend) const {
  std::set<std::string> used;
  for (const auto& c : rows) {
    used.insert(c.key());
    if (entries_.count(c.key()) == 0)
      throw std::logic_error("benchmark " + c.name() + ": the " + backend +
                             " backend neither runs it nor declares it unavailable (WorkloadTable::not_here)");
  }
  for (const auto& [key, entry] : entries_) {
    if (used.count(key) != 0) continue;
    std::string what = "the " + backend;
    what += " backend registers " + key;
    what += ", which no case table has";
    throw std::logic_error(what);
  }
}

}  // namespace gpubench
