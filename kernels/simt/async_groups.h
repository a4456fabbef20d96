// The host emulation's model of the GPU's asynchronous operations that complete in commit groups
// (cp.async with commit_group/wait_group, wgmma.mma_async with its own pair): per thread, the
// operations issued since the last commit and the committed groups in order. A wait performs the
// oldest groups until at most N remain, so an operation takes effect at the wait that covers it,
// as on the GPU, and a kernel that uses a result before that wait sees the difference.
#pragma once

#include <cstddef>
#include <deque>
#include <utility>
#include <vector>

namespace gpubench::simt {

/// One thread's operations of one kind, grouped by commit.
template <class Op>
struct AsyncGroups {
  std::vector<Op> open;                    ///< issued since the last commit
  std::deque<std::vector<Op> > committed;  ///< committed groups, oldest first

  /// commit_group: closes the open group (possibly empty, as on the GPU).
  void commit() {
    committed.push_back(std::move(open));
    open.clear();
  }
  /// wait_group n: `perform(op)` for each operation of the oldest groups, in issue order, until at
  /// most n groups remain.
  template <class Perform>
  void wait(std::size_t n, Perform perform) {
    while (committed.size() > n) {
      for (const Op& op : committed.front()) perform(op);
      committed.pop_front();
    }
  }
  /// Operations issued and not yet performed (open or committed).
  std::size_t outstanding() const {
    std::size_t count = open.size();
    for (const auto& g : committed) count += g.size();
    return count;
  }
};

/// The groups of every thread of the running block or cluster (clusters run one at a time: one
/// slot per resident thread, simt::resident_thread_slot), one table per operation kind.
template <class Op>
std::vector<AsyncGroups<Op> >& async_groups_of_block() {
  static std::vector<AsyncGroups<Op> > groups(1024);
  return groups;
}

/// The groups of the thread in `slot` (the table grows for clusters of more than 1024 threads).
template <class Op>
AsyncGroups<Op>& async_groups_of(unsigned slot) {
  auto& groups = async_groups_of_block<Op>();
  if (slot >= groups.size()) groups.resize(slot + 1);
  return groups[slot];
}

/// Operations of kind Op any thread has not had performed (tests assert 0 after a kernel).
template <class Op>
std::size_t async_outstanding() {
  std::size_t n = 0;
  for (const auto& g : async_groups_of_block<Op>()) n += g.outstanding();
  return n;
}

/// Forgets every outstanding operation of kind Op (after a deliberately broken kernel).
template <class Op>
void async_reset() {
  for (auto& g : async_groups_of_block<Op>()) g = AsyncGroups<Op>{};
}

}  // namespace gpubench::simt
