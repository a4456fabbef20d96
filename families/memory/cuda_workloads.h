// The CUDA backend's parts of the memory family (families/memory/cuda_*.cpp), each adding the
// workloads of its rows; cuda.cpp calls them all.
#pragma once

#include "harness/workload_table.h"

namespace gpubench::memory {

/// memory/alloc/*, memory/alloc_loop/*, memory/fragmentation/*.
void add_cuda_alloc(WorkloadTable& table);
/// memory/managed/*.
void add_cuda_managed(WorkloadTable& table);
/// memory/overlap/cuda_streams.
void add_cuda_overlap(WorkloadTable& table);
/// memory/axpy/{fp64,fp32,fp16,bf16}.
void add_cuda_axpy(WorkloadTable& table);

}  // namespace gpubench::memory
