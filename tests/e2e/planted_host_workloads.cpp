#include "tests/e2e/planted_host_workloads.h"

#include <set>
#include <string>

#include "harness/family.h"

namespace gpubench::e2e {

const WorkloadTable& real_host_workloads() {
  static const WorkloadTable table = host_workloads();
  return table;
}

WorkloadTable host_workloads_through(WorkloadFactory factory) {
  WorkloadTable table;
  std::set<std::string> keys;
  for (const BenchCase& c : every_row()) {
    if (!keys.insert(c.key()).second) continue;
    const std::string why = real_host_workloads().unavailable_reason(c, 0);
    if (why.empty()) {
      table.add(c.key(), factory);
    } else {
      table.not_here(c.key(), why);
    }
  }
  table.check_complete(every_row(), "host");
  return table;
}

}  // namespace gpubench::e2e
