// How a batch of host<->device transfers is timed and queued (families/pcie/cuda.cpp
// follows this plan; pure C++ so the rules are unit tested without a GPU).
#pragma once

#include <cstddef>
#include <vector>

namespace gpubench::pcie {

/// Operations (transfers, events excluded) queued behind one spin kernel: far below the depth
/// at which enqueueing blocks the host, which would deadlock against the held stream until the
/// spin kernel's timeout. Only one chunk is ever held: the chunk queued before it has been
/// released (it runs while the next is queued), so a host blocked on queue depth waits for
/// released work only.
constexpr int kMaxHeldOps = 128;

/// How one batch is timed.
enum class TransferTimer {
  host_clock,  ///< pageable: synchronous with the host, cannot be queued behind anything
  spin_held    ///< pinned, write-combined, mapped: queued in chunks behind the spin kernel,
               ///< events after its release (as nvbandwidth holds its copies behind a kernel)
};

/// The timer for transfers from or to pageable (or page-locked) host memory, whatever their
/// size: an event recorded on an idle stream before a large batch would time the first
/// transfer's submission too (a few microseconds of a 2 ms sample).
TransferTimer transfer_timer(bool pageable);

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
