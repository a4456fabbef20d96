// The host backend: the same benchmark families on host memory and CPU cores. Real
// measurements of this machine, so the whole pipeline runs and is tested where no GPU exists.
#pragma once

#include <memory>

#include "harness/backend.h"
#include "harness/workload_table.h"

namespace gpubench {

std::unique_ptr<Backend> make_host_backend();

/// bandwidth/{copy,read,write,strided,gather,chase}/{kernel,memcpy} on the host.
void add_host_memory_workloads(WorkloadTable& table);
/// bandwidth/pcie_{h2d,d2h}/pageable_memcpy: a pageable-to-pageable host copy (pcie_workloads.cpp).
void add_host_pcie_workloads(WorkloadTable& table);

}  // namespace gpubench
