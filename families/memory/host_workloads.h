// The host backend's parts of the memory family (families/memory/host_*.cpp), each adding the
// workloads of its rows; host.cpp calls them all.
#pragma once

#include "harness/workload_table.h"

namespace gpubench::memory {

/// memory/alloc/{malloc,mmap,pool} and memory/alloc_loop/{malloc_each,allocated_once}.
void add_host_alloc(WorkloadTable& table);
/// memory/first_touch/{pages_4k,pages_2m,populate}.
void add_host_pages(WorkloadTable& table);
/// memory/overlap/host_threads.
void add_host_overlap(WorkloadTable& table);
/// memory/axpy/{fp64,fp32,fp16,bf16}.
void add_host_axpy(WorkloadTable& table);

}  // namespace gpubench::memory
