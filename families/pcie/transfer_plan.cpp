#include "families/pcie/transfer_plan.h"

#include <algorithm>

namespace gpubench::pcie {

TransferTimer transfer_timer(bool pageable) { return pageable ? TransferTimer::host_clock : TransferTimer::spin_held; }

int counter_transfers(int n) { return 2 * n + 1; }

std::vector<int> spin_chunks(int batch, int ops_per_transfer, int max_held_ops) {
  // The chunk leaves room for the trailing opposite transfer of a bidirectional chunk.
  const int per_chunk = std::max(1, (max_held_ops - 1) / std::max(1, ops_per_transfer));
  std::vector<int> chunks;
  for (int done = 0; done < batch; done += per_chunk) chunks.push_back(std::min(per_chunk, batch - done));
  return chunks;
}

}  // namespace gpubench::pcie
