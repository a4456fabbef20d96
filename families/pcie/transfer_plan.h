// How a batch of host<->device transfers is timed and queued (families/pcie/cuda.cpp
// follows this plan; pure C++ so the rules are unit tested without a GPU).
#pragma once

#include <cstddef>
#include <vector>

namespace gpubench::pcie {

/// Transfers below this are queued behind the spin kernel; from here up, events around the
/// batch (a 4 MiB transfer lasts ~70 us on Gen5 x16, far longer than queueing the next one).
constexpr std::size_t kSpinBelowBytes = std::size_t{4} << 20;

/// Operations (transfers, events excluded) queued behind one spin kernel: far below the depth
/// at which enqueueing blocks the host, which would deadlock against the held stream until the
/// spin kernel's timeout. Only one chunk is ever held: the chunk queued before it has been
/// released (it runs while the next is queued), so a host blocked on queue depth waits for
/// released work only.
constexpr int kMaxHeldOps = 128;

/// How one batch is timed.
enum class TransferTimer {
  host_clock,   ///< pageable: synchronous with the host, cannot be queued behind anything
  spin_held,    ///< small: queued in chunks behind the spin kernel, events after its release
  batch_events  ///< large: an event pair around the whole batch
};

/// The timer for transfers of `bytes` from or to pageable (or pinned) host memory.
TransferTimer transfer_timer(bool pageable, std::size_t bytes);

/// Opposite-direction transfers queued with `n` measured ones in a bidirectional run: twice as
/// many plus one, so the measured transfers never run alone unless the other direction is
/// more than twice as fast.
int counter_transfers(int n);

/// Splits `batch` measured transfers into chunks held behind one spin kernel each, where every
/// measured transfer brings `ops_per_transfer` queued operations (1; 3 when bidirectional: the
/// measured one and two opposite ones). Each chunk has at least one transfer and the chunks
/// sum to `batch` (empty for batch <= 0).
std::vector<int> spin_chunks(int batch, int ops_per_transfer, int max_held_ops = kMaxHeldOps);

}  // namespace gpubench::pcie
