// The host backend: the same benchmark families on host memory and CPU cores. Real
// measurements of this machine, so the whole pipeline runs and is tested where no GPU exists.
#pragma once

#include <memory>

#include "harness/backend.h"
#include "harness/workload_table.h"

namespace gpubench {

/// The host backend running the workloads in `table` (host_workloads(): every family's).
std::unique_ptr<Backend> make_host_backend(WorkloadTable table);

}  // namespace gpubench
