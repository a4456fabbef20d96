#include "families/registry.h"

namespace gpubench {

WorkloadTable cuda_workloads() {
  WorkloadTable t;
  for (AddWorkloads add : registered_cuda_workloads()) add(t);
  t.check_complete(every_row(), "cuda");
  return t;
}

}  // namespace gpubench
