// A backend's map from family/kernel/variant to the factory of its workload, with the minimum
// compute capability each needs. Each backend fills one from per-family files
// (harness/host/*_workloads.cpp, harness/cuda/*_workloads.cpp).
#pragma once

#include <map>
#include <string>

#include "harness/backend.h"

namespace gpubench {

class WorkloadTable {
 public:
  /// Registers `factory` for `key` ("bandwidth/copy/kernel"); min_cc like 80 for sm_80.
  void add(const std::string& key, WorkloadFactory factory, int min_cc = 0) { entries_[key] = Entry{factory, min_cc}; }
  /// The factory for the case's key, or nullptr when the backend lacks it or the device's
  /// compute capability (x10) is below what it or the case needs.
  WorkloadFactory find(const BenchCase& c, int device_cc) const {
    auto it = entries_.find(c.key());
    if (it == entries_.end()) return nullptr;
    if (device_cc < it->second.min_cc || device_cc < c.min_cc) return nullptr;
    return it->second.factory;
  }

 private:
  struct Entry {
    WorkloadFactory factory;
    int min_cc;
  };
  std::map<std::string, Entry> entries_;
};

}  // namespace gpubench
