// Fiber scheduler of the host SIMT emulation (see simt.h for the execution model).
//
// One launch = clusters in order (a cluster is one block unless the launch names cluster
// dimensions); one cluster = one fiber per thread of each of its blocks, all created before any
// runs. The scheduler resumes runnable fibers in order (block rank in the cluster, then thread);
// a fiber runs until it waits at a barrier or returns. The last thread to arrive at a barrier releases the others and
// carries on, so a full pass in which no fiber was runnable while some have not returned is a deadlock. A fiber that
// polls (spin_yield) stays runnable; a full pass in which every fiber that ran only polled and nothing noted progress
// is a deadlock too (nothing can change any more).
#include "kernels/simt/simt.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define GPUBENCH_SIMT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUBENCH_SIMT_ASAN 1
#endif
#endif
#ifndef GPUBENCH_SIMT_ASAN
#define GPUBENCH_SIMT_ASAN 0
#endif
#if GPUBENCH_SIMT_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace gpubench::simt {
namespace detail {
namespace {

// Kernel frames are small, but sanitizers inflate them: leave room (the memory is reserved,
// not committed, until touched). A guard page under each stack turns an overflow into a fault.
// Under ASan every switch clears the shadow of the target stack: at 128 KiB that is a 16 KiB
// memset; from 512 KiB on ASan remaps the shadow instead, a system call per switch.
#if GPUBENCH_SIMT_ASAN
constexpr std::size_t kStackBytes = 128 * 1024;
#else
constexpr std::size_t kStackBytes = 64 * 1024;
#endif
constexpr unsigned kWarpSize = 32;
constexpr unsigned kMaxBlockThreads = 1024;

constexpr unsigned kMaxClusterBlocks = 16;  // the non-portable cluster size limit of sm_90

enum class State { kRunnable, kAtBlockBarrier, kAtWarpCollective, kAtClusterBarrier, kDone };

struct Fiber {
  ucontext_t context{};
  Index3 thread_idx{0, 0, 0};
  unsigned rank = 0;               // block rank in the cluster (%cluster_ctarank)
  unsigned local = 0;              // linear thread index in the block
  long long cluster_arrival = -1;  // the barrier.cluster phase it arrived in and has not waited for
  State state = State::kRunnable;
  unsigned char* stack = nullptr;
  void* result = nullptr;  // where warp_rendezvous delivers the warp's values
};

struct Warp {
  unsigned lanes = 0;    // existing lanes (< 32 only for the last warp of a partial block)
  unsigned arrived = 0;  // lanes waiting at the current collective
  const char* kind = nullptr;
  std::size_t bytes = 0;
  std::vector<unsigned char> slots;  // 32 x bytes, zero for lanes that did not contribute
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "gpubench::simt: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Fiber stacks, kept from launch to launch on this OS thread (mapping, guarding and faulting
/// in fresh stacks per launch would cost more than most emulated kernels).
struct StackArena {
  unsigned char* region = nullptr;
  std::size_t bytes = 0;
  unsigned threads = 0;
  std::size_t page_bytes = 0;

  ~StackArena() {
    if (region != nullptr) munmap(region, bytes);
  }

  /// Makes room for `n` stacks of kStackBytes, each above a PROT_NONE guard page.
  void reserve(unsigned n) {
    if (n <= threads) return;
    if (region != nullptr) munmap(region, bytes);
    page_bytes = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t slot_bytes = kStackBytes + page_bytes;
    bytes = slot_bytes * n;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) fail("cannot map fiber stacks");
    region = static_cast<unsigned char*>(p);
    threads = n;
    for (unsigned t = 0; t < n; ++t) {
      if (mprotect(region + t * slot_bytes, page_bytes, PROT_NONE) != 0) {
        fail("cannot protect a fiber stack guard page");
      }
    }
  }
};

thread_local StackArena g_stacks;

// One block of the running cluster.
struct Cta {
  Index3 block_idx{0, 0, 0};
  std::vector<unsigned char> dynamic_smem;  // its own, kept from cluster to cluster at its rank
  unsigned block_arrived = 0;               // threads waiting at __syncthreads
  unsigned done = 0;                        // threads that have returned
};

struct Launch {
  Index3 grid_dim{1, 1, 1};
  Index3 block_dim{1, 1, 1};
  Index3 cluster_dim{1, 1, 1};
  Index3 cluster_idx{0, 0, 0};
  unsigned threads = 0;       // per block
  unsigned cluster_size = 1;  // blocks per cluster
  unsigned warps_per_block = 0;
  const std::function<void()>* body = nullptr;

  std::vector<Cta> ctas;      // cluster_size blocks, by rank
  std::vector<Fiber> fibers;  // cluster_size x threads, rank-major
  std::vector<Warp> warps;    // cluster_size x warps_per_block, rank-major
  unsigned current = 0;
  unsigned cluster_arrived = 0;  // threads arrived in the current barrier.cluster phase
  long long cluster_phase = 0;   // barrier.cluster phases completed in this cluster
  bool yielded = false;          // the fiber that just ran came back through spin_yield
  bool progress = false;         // something changed during the current pass (note_progress, or a fiber
                                 // that did more than poll)
  ucontext_t scheduler{};
  std::exception_ptr error;

  unsigned char* stack_region = nullptr;
  std::size_t page_bytes = 0;

#if GPUBENCH_SIMT_ASAN
  const void* scheduler_stack_bottom = nullptr;
  std::size_t scheduler_stack_size = 0;
#endif
};

thread_local Launch* g_launch = nullptr;
thread_local unsigned long long g_cluster_serial = 0;  // clusters (or blocks) started on this thread

Launch& active() {
  if (g_launch == nullptr) fail("a CUDA built-in was used outside gpubench::simt::launch");
  return *g_launch;
}

std::string idx_str(const Index3& i) {
  return "(" + std::to_string(i.x) + "," + std::to_string(i.y) + "," + std::to_string(i.z) + ")";
}

// ---- context switches (annotated so AddressSanitizer follows the stack changes) ----

void switch_to_scheduler(Launch& l, Fiber& f, bool finished) {
#if GPUBENCH_SIMT_ASAN
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(finished ? nullptr : &fake_stack, l.scheduler_stack_bottom, l.scheduler_stack_size);
#endif
  if (finished) {
    setcontext(&l.scheduler);
    fail("setcontext to the scheduler returned");
  }
  swapcontext(&f.context, &l.scheduler);
#if GPUBENCH_SIMT_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, &l.scheduler_stack_bottom, &l.scheduler_stack_size);
#endif
}

void switch_to_fiber(Launch& l, Fiber& f) {
#if GPUBENCH_SIMT_ASAN
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, f.stack, kStackBytes);
#endif
  swapcontext(&l.scheduler, &f.context);
#if GPUBENCH_SIMT_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}

void fiber_main() {
  Launch& l = *g_launch;
#if GPUBENCH_SIMT_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &l.scheduler_stack_bottom, &l.scheduler_stack_size);
#endif
  Fiber& f = l.fibers[l.current];
  try {
    (*l.body)();
  } catch (...) {
    if (!l.error) l.error = std::current_exception();
  }
  f.state = State::kDone;
  ++l.ctas[f.rank].done;
  switch_to_scheduler(l, f, true);
}

// Waits until released by the last arriving thread.
void block_until_released(Launch& l) {
  Fiber& f = l.fibers[l.current];
  switch_to_scheduler(l, f, false);
}

// "block (x,y,z)", or for a cluster of several blocks "cluster (x,y,z) of blocks (..) (..)".
std::string where(const Launch& l) {
  if (l.cluster_size == 1) return "block " + idx_str(l.ctas[0].block_idx);
  std::string s = "cluster " + idx_str(l.cluster_idx) + " of blocks";
  for (const Cta& c : l.ctas) s += " " + idx_str(c.block_idx);
  return s;
}

[[noreturn]] void report_spin_deadlock(const Launch& l) {
  unsigned spinning = 0;
  for (const Fiber& f : l.fibers) spinning += f.state == State::kRunnable ? 1u : 0u;
  fail("deadlock in " + where(l) + ": " + std::to_string(spinning) +
       " threads poll (an mbarrier wait) and nothing they wait for can change any more");
}

[[noreturn]] void report_deadlock(const Launch& l) {
  unsigned at_block = 0, at_cluster = 0, done = 0;
  for (const Fiber& f : l.fibers) {
    at_block += f.state == State::kAtBlockBarrier ? 1u : 0u;
    at_cluster += f.state == State::kAtClusterBarrier ? 1u : 0u;
    done += f.state == State::kDone ? 1u : 0u;
  }
  std::string msg = "deadlock in " + where(l) + " of a launch with " + std::to_string(l.threads) +
                    " threads per block: " + std::to_string(at_block) + " wait at __syncthreads, ";
  if (l.cluster_size > 1) msg += std::to_string(at_cluster) + " wait at barrier.cluster, ";
  msg += std::to_string(done) + " have returned";
  for (std::size_t w = 0; w < l.warps.size(); ++w) {
    const Warp& warp = l.warps[w];
    if (warp.arrived == 0) continue;
    const std::size_t local = w % l.warps_per_block;
    msg += "; warp " + std::to_string(local);
    if (l.cluster_size > 1) msg += " of block " + idx_str(l.ctas[w / l.warps_per_block].block_idx);
    msg += ": " + std::to_string(warp.arrived) + " of " + std::to_string(warp.lanes) + " lanes wait at " + warp.kind;
  }
  msg += l.cluster_size > 1
             ? " (a barrier or warp collective must be reached by every thread of the block/cluster/warp)"
             : " (a barrier or warp collective must be reached by every thread of the block/warp)";
  fail(msg);
}

// Separate (and not inlined) because getcontext returns twice: locals of its caller could be
// clobbered, so the caller keeps none live across it.
__attribute__((noinline)) void prepare_fiber(Launch& l, unsigned i) {
  const std::size_t slot_bytes = kStackBytes + l.page_bytes;
  Fiber& f = l.fibers[i];
  const unsigned t = i % l.threads;
  f.state = State::kRunnable;
  f.result = nullptr;
  f.rank = i / l.threads;
  f.local = t;
  f.cluster_arrival = -1;
  f.thread_idx = Index3{t % l.block_dim.x, (t / l.block_dim.x) % l.block_dim.y, t / (l.block_dim.x * l.block_dim.y)};
  f.stack = l.stack_region + i * slot_bytes + l.page_bytes;  // guard page below the stack
#if GPUBENCH_SIMT_ASAN
  __asan_unpoison_memory_region(f.stack, kStackBytes);
#endif
  if (getcontext(&f.context) != 0) fail("getcontext failed");
  f.context.uc_stack.ss_sp = f.stack;
  f.context.uc_stack.ss_size = kStackBytes;
  f.context.uc_link = nullptr;
  makecontext(&f.context, fiber_main, 0);
}

// Runs the blocks of the cluster at l.cluster_idx (their block_idx set) together.
//
// The blocks of a cluster do not run in lockstep on a GPU, and a kernel whose blocks only agree
// when they do (one that refills a peer's stage before the peer has read it, say) must fail here
// too. So one block of each cluster of several is slow: its threads get a turn in the last pass
// of each round of kSlowRound (so it also starts late, after its peers have run ahead); which
// block it is rotates from cluster to cluster (the linear cluster index modulo the cluster size).
// Deadlocks are judged over a round of passes, in which every thread had a turn.
void run_cluster(Launch& l) {
  for (unsigned i = 0; i < static_cast<unsigned>(l.fibers.size()); ++i) prepare_fiber(l, i);
  for (Cta& c : l.ctas) {
    c.block_arrived = 0;
    c.done = 0;
  }
  for (Warp& w : l.warps) w.arrived = 0;
  l.cluster_arrived = 0;
  l.cluster_phase = 0;
  ++g_cluster_serial;

  constexpr unsigned kSlowRound = 4;
  const unsigned round = l.cluster_size > 1 ? kSlowRound : 1;
  const unsigned clusters_x = l.grid_dim.x / l.cluster_dim.x, clusters_y = l.grid_dim.y / l.cluster_dim.y;
  const unsigned slow =
      (l.cluster_idx.x + clusters_x * (l.cluster_idx.y + clusters_y * l.cluster_idx.z)) % l.cluster_size;
  bool round_ran = false, round_progress = false;
  for (unsigned pass = 0;; ++pass) {
    const bool slow_turn = pass % round == round - 1;
    bool ran = false;
    l.progress = false;
    for (unsigned t = 0; t < static_cast<unsigned>(l.fibers.size()); ++t) {
      Fiber& f = l.fibers[t];
      if (f.state != State::kRunnable) continue;
      if (round > 1 && f.rank == slow && !slow_turn) continue;
      l.current = t;
      l.yielded = false;
      switch_to_fiber(l, f);
      ran = true;
      if (!l.yielded) l.progress = true;
      if (l.error) return;  // a kernel threw: abandon the launch, rethrown by run_launch
    }
    bool all_done = true;
    for (const Fiber& f : l.fibers) all_done = all_done && f.state == State::kDone;
    if (all_done) return;
    round_ran = round_ran || ran;
    round_progress = round_progress || l.progress;
    if (pass % round == round - 1) {
      if (!round_ran) report_deadlock(l);
      if (!round_progress) report_spin_deadlock(l);
      round_ran = false;
      round_progress = false;
    }
  }
}

}  // namespace

const Index3& thread_idx() {
  Launch& l = active();
  return l.fibers[l.current].thread_idx;
}
const Index3& block_idx() {
  Launch& l = active();
  return l.ctas[l.fibers[l.current].rank].block_idx;
}
const Index3& block_dim() { return active().block_dim; }
const Index3& grid_dim() { return active().grid_dim; }
void* dynamic_shared_memory() {
  Launch& l = active();
  Cta& c = l.ctas[l.fibers[l.current].rank];
  return c.dynamic_smem.empty() ? nullptr : c.dynamic_smem.data();
}

const Index3& cluster_dim() { return active().cluster_dim; }
const Index3& cluster_idx() { return active().cluster_idx; }
unsigned cluster_rank() {
  Launch& l = active();
  return l.fibers[l.current].rank;
}
unsigned cluster_blocks() { return active().cluster_size; }
void* cluster_shared_memory(unsigned rank) {
  Launch& l = active();
  if (rank >= l.cluster_size) {
    fail("shared memory of block rank " + std::to_string(rank) + " of a cluster of " + std::to_string(l.cluster_size));
  }
  Cta& c = l.ctas[rank];
  return c.dynamic_smem.empty() ? nullptr : c.dynamic_smem.data();
}
bool cluster_block_exited(unsigned rank) {
  Launch& l = active();
  return rank < l.cluster_size && l.ctas[rank].done == l.threads;
}
unsigned resident_thread_slot() { return active().current; }
unsigned long long cluster_serial() {
  (void)active();
  return g_cluster_serial;
}

void run_launch(Dim3 grid, Dim3 block, std::size_t dynamic_smem_bytes, const std::function<void()>& body) {
  run_launch(grid, block, Dim3{1, 1, 1}, dynamic_smem_bytes, body);
}

void run_launch(Dim3 grid, Dim3 block, Dim3 cluster, std::size_t dynamic_smem_bytes,
                const std::function<void()>& body) {
  if (g_launch != nullptr) fail("launch() called from inside a kernel (no dynamic parallelism)");
  const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > kMaxBlockThreads) {
    fail("invalid launch configuration: grid " + idx_str({grid.x, grid.y, grid.z}) + ", block " +
         idx_str({block.x, block.y, block.z}) + " (1..1024 threads per block)");
  }
  const unsigned long long cluster_size = static_cast<unsigned long long>(cluster.x) * cluster.y * cluster.z;
  if (cluster_size == 0 || cluster_size > kMaxClusterBlocks || grid.x % cluster.x != 0 || grid.y % cluster.y != 0 ||
      grid.z % cluster.z != 0) {
    fail("invalid cluster dimensions " + idx_str({cluster.x, cluster.y, cluster.z}) + " for grid " +
         idx_str({grid.x, grid.y, grid.z}) + " (1..16 blocks, dividing the grid in every dimension)");
  }
  Launch l;
  l.grid_dim = {grid.x, grid.y, grid.z};
  l.block_dim = {block.x, block.y, block.z};
  l.cluster_dim = {cluster.x, cluster.y, cluster.z};
  l.threads = static_cast<unsigned>(threads);
  l.cluster_size = static_cast<unsigned>(cluster_size);
  l.warps_per_block = (l.threads + kWarpSize - 1) / kWarpSize;
  l.body = &body;
  l.ctas.resize(l.cluster_size);
  l.fibers.resize(static_cast<std::size_t>(l.threads) * l.cluster_size);
  l.warps.resize(static_cast<std::size_t>(l.warps_per_block) * l.cluster_size);
  for (std::size_t w = 0; w < l.warps.size(); ++w) {
    const auto local = static_cast<unsigned>(w % l.warps_per_block);
    l.warps[w].lanes = std::min<unsigned>(kWarpSize, l.threads - local * kWarpSize);
  }
  // 16-byte aligned (std::vector<unsigned char> storage comes from operator new, which is
  // aligned to __STDCPP_DEFAULT_NEW_ALIGNMENT__ = 16 on x86-64).
  for (Cta& c : l.ctas) c.dynamic_smem.assign(dynamic_smem_bytes, 0);

  g_stacks.reserve(l.threads * l.cluster_size);
  l.stack_region = g_stacks.region;
  l.page_bytes = g_stacks.page_bytes;

  g_launch = &l;
  for (unsigned z = 0; z < grid.z / cluster.z && !l.error; ++z) {
    for (unsigned y = 0; y < grid.y / cluster.y && !l.error; ++y) {
      for (unsigned x = 0; x < grid.x / cluster.x && !l.error; ++x) {
        l.cluster_idx = {x, y, z};
        for (unsigned r = 0; r < l.cluster_size; ++r) {  // rank = x + y * cx + z * cx * cy within the cluster
          const unsigned cx = r % cluster.x, cy = (r / cluster.x) % cluster.y, cz = r / (cluster.x * cluster.y);
          l.ctas[r].block_idx = {x * cluster.x + cx, y * cluster.y + cy, z * cluster.z + cz};
        }
        run_cluster(l);
      }
    }
  }
  g_launch = nullptr;
  if (l.error) std::rethrow_exception(l.error);
}

void warp_rendezvous(const char* kind, const void* mine, std::size_t bytes, void* all) {
  Launch& l = active();
  const unsigned t = l.current;
  const Fiber& me = l.fibers[t];
  const unsigned warp_index = me.rank * l.warps_per_block + me.local / kWarpSize;
  Warp& w = l.warps[warp_index];
  const unsigned lane = me.local % kWarpSize;
  if (w.arrived == 0) {
    w.kind = kind;
    w.bytes = bytes;
    w.slots.assign(kWarpSize * bytes, 0);
  } else if (std::string(w.kind) != kind || w.bytes != bytes) {
    fail("lanes of warp " + std::to_string(me.local / kWarpSize) + " of block " + idx_str(l.ctas[me.rank].block_idx) +
         " reached different warp collectives: " + w.kind + " (" + std::to_string(w.bytes) + " bytes) and " + kind +
         " (" + std::to_string(bytes) + " bytes)");
  }
  if (bytes != 0) std::memcpy(w.slots.data() + lane * bytes, mine, bytes);
  Fiber& self = l.fibers[t];
  self.result = all;
  ++w.arrived;
  if (w.arrived == w.lanes) {
    const unsigned first = t - lane;
    for (unsigned i = first; i < first + w.lanes; ++i) {
      Fiber& f = l.fibers[i];
      if (bytes != 0) std::memcpy(f.result, w.slots.data(), kWarpSize * bytes);
      f.state = State::kRunnable;
    }
    w.arrived = 0;
    return;
  }
  self.state = State::kAtWarpCollective;
  block_until_released(l);
}

}  // namespace detail

unsigned linear_thread_id() {
  const detail::Index3& t = detail::thread_idx();
  const detail::Index3& b = detail::block_dim();
  return t.x + b.x * (t.y + b.y * t.z);
}
unsigned lane_id() { return linear_thread_id() % detail::kWarpSize; }
unsigned warp_id() { return linear_thread_id() / detail::kWarpSize; }

void syncthreads() {
  detail::Launch& l = detail::active();
  const unsigned rank = l.fibers[l.current].rank;
  detail::Cta& c = l.ctas[rank];
  ++c.block_arrived;
  if (c.block_arrived == l.threads) {
    for (detail::Fiber& f : l.fibers) {
      if (f.rank == rank && f.state == detail::State::kAtBlockBarrier) f.state = detail::State::kRunnable;
    }
    c.block_arrived = 0;
    return;
  }
  l.fibers[l.current].state = detail::State::kAtBlockBarrier;
  detail::block_until_released(l);
}

void cluster_arrive() {
  detail::Launch& l = detail::active();
  detail::Fiber& me = l.fibers[l.current];
  if (me.cluster_arrival >= 0) {
    detail::fail("thread " + std::to_string(me.local) + " of block " + detail::idx_str(l.ctas[me.rank].block_idx) +
                 " arrived at barrier.cluster twice without waiting in between");
  }
  me.cluster_arrival = l.cluster_phase;
  l.progress = true;
  if (++l.cluster_arrived == l.threads * l.cluster_size) {
    l.cluster_arrived = 0;
    ++l.cluster_phase;
    for (detail::Fiber& f : l.fibers) {
      if (f.state == detail::State::kAtClusterBarrier) f.state = detail::State::kRunnable;
    }
  }
}

void cluster_wait() {
  detail::Launch& l = detail::active();
  detail::Fiber& me = l.fibers[l.current];
  if (me.cluster_arrival < 0) {
    detail::fail("thread " + std::to_string(me.local) + " of block " + detail::idx_str(l.ctas[me.rank].block_idx) +
                 " waits at barrier.cluster without having arrived");
  }
  if (l.cluster_phase <= me.cluster_arrival) {
    me.state = detail::State::kAtClusterBarrier;
    detail::block_until_released(l);
  }
  l.fibers[l.current].cluster_arrival = -1;
}

void spin_yield() {
  detail::Launch& l = detail::active();
  l.yielded = true;
  detail::switch_to_scheduler(l, l.fibers[l.current], false);
}

void note_progress() { detail::active().progress = true; }

void syncwarp() { detail::warp_rendezvous("__syncwarp", nullptr, 0, nullptr); }

}  // namespace gpubench::simt
