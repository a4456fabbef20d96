// The CUDA backend's parts of the memory family (families/memory/cuda_*.cpp), each adding the
// workloads of its rows with the factory they share; cuda.cpp calls them all.
#pragma once

#include <memory>

#include "harness/cuda/cuda_device.h"
#include "harness/workload_table.h"

namespace gpubench::memory {

/// The factory of a row whose workload W is built from the case, the backend's CudaDevice and the
/// row's constant: make_cuda_workload<ManagedWorkload, Route::prefetch>.
template <class W, auto kVariant>
std::unique_ptr<Workload> make_cuda_workload(const BenchCase& c, Backend& b) {
  return std::make_unique<W>(c, cuda_device_of(b), kVariant);
}

/// memory/alloc/*, memory/alloc_loop/*, memory/fragmentation/*.
void add_cuda_alloc(WorkloadTable& table);
/// memory/managed/*.
void add_cuda_managed(WorkloadTable& table);
/// memory/overlap/cuda_streams.
void add_cuda_overlap(WorkloadTable& table);
/// memory/axpy/{fp64,fp32,fp16,bf16}.
void add_cuda_axpy(WorkloadTable& table);

}  // namespace gpubench::memory
