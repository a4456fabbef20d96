// A backend's map from family/kernel/variant to the factory of its workload, with the minimum
// compute capability each needs, and the rows it deliberately does not run (with the reason the
// result file shows). Each family folder fills one per backend (families/<name>/host.cpp,
// cuda.cpp); check_complete() makes a row that a backend neither runs nor declares unavailable
// a start-up error, never a benchmark that silently vanishes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/backend.h"

namespace gpubench {

class WorkloadTable {
 public:
  /// Registers `factory` for `key` ("bandwidth/copy/kernel"); min_cc like 80 for sm_80.
  void add(const std::string& key, WorkloadFactory factory, int min_cc = 0);
  /// Declares that this backend does not run `key`, and why ("cuBLAS needs a GPU"): the row is
  /// reported as skipped with this reason.
  void not_here(const std::string& key, const std::string& reason);

  /// The factory for the case's key, or nullptr when the backend lacks it or the device's
  /// compute capability (x10) is below what it or the case needs.
  WorkloadFactory find(const BenchCase& c, int device_cc) const;
  /// Why the case cannot run on a device of compute capability `device_cc` (x10; 0 for the
  /// host), "" when it can.
  std::string unavailable_reason(const BenchCase& c, int device_cc) const;

  /// Throws std::logic_error naming the first row of `rows` whose key this table neither runs
  /// nor declares unavailable, and the first key registered that no row uses (a misspelling).
  /// `backend` ("host", "cuda") goes into the message.
  void check_complete(const std::vector<BenchCase>& rows, const std::string& backend) const;

 private:
  struct Entry {
    WorkloadFactory factory = nullptr;
    int min_cc = 0;
    std::string not_here;  ///< the reason, for a row declared unavailable
  };
  std::map<std::string, Entry> entries_;
};

}  // namespace gpubench
