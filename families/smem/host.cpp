// The shared-memory family on the host backend: a CPU has no software-managed shared memory
// (its nearest analogue, an L1-resident read, is the 4 KiB row of bandwidth/read), so the row is
// declared unavailable with that reason.
#include "harness/family.h"

GPUBENCH_FAMILY(smem)

namespace gpubench {

void families::smem::add_host_workloads(WorkloadTable& table) {
  table.not_here("bandwidth/smem/kernel", "a CPU has no shared memory (bandwidth/read at 4KiB is its L1)");
}

}  // namespace gpubench
