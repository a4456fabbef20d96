// The host backend's rows of the memory family: the real analogues of the GPU's questions
// (families/memory/cases.cpp), each part in its own file (host_workloads.h). The CUDA rows are
// never listed on the host (cases.cpp lists each backend's own), but the table still names them.
#include "families/memory/host_workloads.h"
#include "harness/family.h"

GPUBENCH_FAMILY(memory)

namespace gpubench {

void families::memory::add_host_workloads(WorkloadTable& table) {
  gpubench::memory::add_host_alloc(table);
  gpubench::memory::add_host_pages(table);
  gpubench::memory::add_host_overlap(table);
  gpubench::memory::add_host_axpy(table);
  for (const char* key :
       {"memory/alloc/cuda_malloc", "memory/alloc/async_pool_miss", "memory/alloc/async_pool_hit",
        "memory/alloc/preallocated", "memory/alloc/pinned_host", "memory/alloc/host_register",
        "memory/alloc_loop/cuda_malloc_each", "memory/alloc_loop/async_pool_each", "memory/fragmentation/cuda_malloc",
        "memory/fragmentation/async_pool", "memory/managed/demand_fault", "memory/managed/prefetch",
        "memory/managed/explicit_copy", "memory/managed/zero_copy", "memory/managed/read_mostly",
        "memory/managed/device_resident", "memory/managed/to_host", "memory/overlap/cuda_streams"})
    table.not_here(key, "a CUDA device's memory management");
}

}  // namespace gpubench
