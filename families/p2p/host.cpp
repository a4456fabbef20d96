// The host backend has no peer-to-peer rows: the table (cases.cpp) gives the host none, and the
// CUDA rows are declared unavailable here so that the workload table covers every row a sweep
// can produce.
#include "harness/family.h"

GPUBENCH_FAMILY(p2p)

namespace gpubench {

void families::p2p::add_host_workloads(WorkloadTable& table) {
  for (const char* key : {"bandwidth/p2p_ce/write", "bandwidth/p2p_ce/read", "bandwidth/p2p_ce/bidir",
                          "bandwidth/p2p_sm/write", "bandwidth/p2p_sm/read", "bandwidth/p2p_sm/bidir"})
    table.not_here(key, "a copy between two GPUs");
}

}  // namespace gpubench
