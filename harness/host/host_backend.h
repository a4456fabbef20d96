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
/// roofline/intensity_{fp32,fp16x2}/kernel and compute/peak_{fp32_fma,fp16x2_hfma2}/kernel on the
/// host (roofline_workloads.cpp; FP16x2 only where the CPU has native binary16 FMA).
void add_host_roofline_workloads(WorkloadTable& table);

}  // namespace gpubench
