// The CUDA backend's rows of the memory family (families/memory/cases.cpp), each part in its own
// file (cuda_workloads.h). The host's analogues are never listed on a GPU run (cases.cpp lists
// each backend's own rows), but the table still names them.
#include "families/memory/cuda_workloads.h"
#include "harness/family.h"

GPUBENCH_FAMILY(memory)

namespace gpubench {

void families::memory::add_cuda_workloads(WorkloadTable& table) {
  gpubench::memory::add_cuda_alloc(table);
  gpubench::memory::add_cuda_managed(table);
  gpubench::memory::add_cuda_overlap(table);
  gpubench::memory::add_cuda_axpy(table);
  for (const char* key : {"memory/alloc/malloc", "memory/alloc/mmap", "memory/alloc/pool",
                          "memory/alloc_loop/malloc_each", "memory/first_touch/pages_4k", "memory/first_touch/pages_2m",
                          "memory/first_touch/populate", "memory/overlap/host_threads"})
    table.not_here(key, "the host backend's analogue");
}

}  // namespace gpubench
