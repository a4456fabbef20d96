// Host SIMT emulation: lets CUDA kernel bodies (the `*_kernels.cuh` files) compile with g++ and
// run on the CPU in tests, so their logic (tails, grid-stride loops, barriers, warp collectives)
// is verified on machines without a GPU.
//
// Under nvcc (`__CUDACC__`) this header defines nothing: the real CUDA built-ins are used.
// Under a host compiler it provides the CUDA built-ins a kernel body uses and a launcher:
//
//   gpubench::simt::launch(Dim3 grid, Dim3 block, kernel, args...)
//
// Execution model. Blocks run one after another. The threads of one block run concurrently as
// cooperative fibers (ucontext, one stack each), so a block-wide barrier really waits for every
// thread of the block: a thread switches out only at __syncthreads(), __syncwarp(), a warp
// collective (warp_exchange and everything built on it), a failed poll (spin_yield), a cluster
// barrier or when it returns.
//
// Thread-block clusters (sm_90; launch_cluster_with_smem): the blocks of one cluster are
// co-scheduled - the fibers of all its blocks run interleaved, each block with its own dynamic
// shared memory - and clusters run one after another. Each thread knows its block's rank in the
// cluster (%cluster_ctarank: x fastest), the cluster's index and dimensions; a block reaches a
// peer's shared memory through cluster_shared_memory(rank) (what mapa and the shared::cluster
// state space give a kernel; kernels/cluster.cuh builds the PTX-level wrappers on it), and
// barrier.cluster arrive/wait (cluster_arrive, cluster_wait) is strict like __syncthreads: every
// thread of every block of the cluster must arrive, a thread that returned never does, a thread
// arrives once per phase and waits only after arriving. Static __shared__ variables are one
// instance for every block of a cluster, so a cluster kernel must use dynamic shared memory only. Between those points
// a thread runs alone, so atomics are trivial and plain shared-memory accesses do not race.
// There is no preemption: a thread that spins on memory another thread of the launch must write
// (a flag, a lock) never yields and hangs the emulation; wait at a barrier instead.
//
// Strict barrier rules (they catch code that is undefined behaviour on a GPU):
//  - __syncthreads() completes only when ALL threads of the block reach it; a thread that has
//    returned never arrives (an early `return` before a barrier is a bug).
//  - a warp collective completes only when all lanes of the warp that EXIST reach the same
//    collective. The last warp of a block whose size is not a multiple of 32 is partial: its
//    missing lanes are inactive, and warp_exchange returns a zero-filled T for them. Masks
//    passed to the *_sync functions are not interpreted: every existing lane must call.
//  - a launch in which some threads wait and none can run is a deadlock: the process prints a
//    message naming the block (or cluster), the waiting threads and what they wait at, and aborts.
//
// `__shared__` becomes a function-local `static`: one instance shared by the threads of the
// running block (blocks never overlap). Shared memory keeps its contents from one block to the
// next (on a GPU it is undefined; do not rely on either). Dynamic shared memory: declare it with
// GPUBENCH_DYNAMIC_SHARED(type, name) and launch with launch_with_smem().
//
// Launches are not re-entrant: one launch at a time per process (kernels' static shared
// memory would otherwise be shared between concurrent launches).
#pragma once

#if defined(__CUDACC__)

/// Dynamic shared memory declaration that works under nvcc and under the emulation.
#define GPUBENCH_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
/// `#pragma unroll` for loops in kernel bodies (g++ would warn about the unknown pragma).
#define GPUBENCH_UNROLL _Pragma("unroll")
/// `#pragma unroll 1`: keeps the compiler from unrolling a loop further (registers).
#define GPUBENCH_NO_UNROLL _Pragma("unroll 1")

#else  // host emulation

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>

namespace gpubench::simt {

/// A grid or block shape (CUDA's dim3 without the implicit conversions).
struct Dim3 {
  unsigned x = 1;  ///< extent in x
  unsigned y = 1;  ///< extent in y
  unsigned z = 1;  ///< extent in z
};

namespace detail {

/// The index triple CUDA exposes as threadIdx/blockIdx/blockDim/gridDim.
struct Index3 {
  unsigned x;  ///< x component
  unsigned y;  ///< y component
  unsigned z;  ///< z component
};

/// threadIdx of the running fiber (aborts when called outside a launch).
const Index3& thread_idx();
/// blockIdx of the running block.
const Index3& block_idx();
/// blockDim of the running launch.
const Index3& block_dim();
/// gridDim of the running launch.
const Index3& grid_dim();
/// Base of the dynamic shared memory of the running launch (nullptr when none was requested).
void* dynamic_shared_memory();

/// Runs `body` once per thread of every block, blocks one at a time, threads as fibers.
void run_launch(Dim3 grid, Dim3 block, std::size_t dynamic_smem_bytes, const std::function<void()>& body);
/// Like run_launch, the grid in clusters of `cluster` blocks (dividing it in every dimension, 1..16
/// blocks): the blocks of one cluster run together, clusters one at a time.
void run_launch(Dim3 grid, Dim3 block, Dim3 cluster, std::size_t dynamic_smem_bytes, const std::function<void()>& body);

/// Cluster dimensions of the running launch (%cluster_nctaid; 1 x 1 x 1 without clusters).
const Index3& cluster_dim();
/// Index of the running cluster in the grid (%clusterid).
const Index3& cluster_idx();
/// Rank of the calling thread's block in its cluster (%cluster_ctarank).
unsigned cluster_rank();
/// Blocks per cluster of the running launch (%cluster_nctarank).
unsigned cluster_blocks();
/// Base of the dynamic shared memory of the block of rank `rank` in the running cluster (aborts
/// for a rank outside it; nullptr when no dynamic shared memory was requested).
void* cluster_shared_memory(unsigned rank);
/// True once every thread of the block of rank `rank` in the running cluster has returned.
bool cluster_block_exited(unsigned rank);
/// Index of the calling thread among the threads of the running cluster (rank-major): the slot of
/// its per-thread emulation state (kernels/simt/async_groups.h).
unsigned resident_thread_slot();
/// A number that differs for every cluster (or block, without clusters) run by this process's
/// thread: state kept per running block (which mbarriers were initialised) is keyed by it.
unsigned long long cluster_serial();

/// Warp rendezvous: copies `bytes` from `mine` into the warp's slot of the calling lane, waits
/// for every existing lane of the warp to arrive at a collective of the same `kind`, then
/// writes all 32 slots (zero for inactive lanes) to `all` (32 x bytes).
void warp_rendezvous(const char* kind, const void* mine, std::size_t bytes, void* all);

}  // namespace detail

/// Launches `kernel(args...)` on a grid of `grid` blocks of `block` threads.
template <class K, class... A>
void launch(Dim3 grid, Dim3 block, K kernel, A... args) {
  detail::run_launch(grid, block, 0, [&]() { kernel(args...); });
}

/// Like launch(), with `dynamic_smem_bytes` of dynamic shared memory per block
/// (see GPUBENCH_DYNAMIC_SHARED); the memory is 16-byte aligned and zero-filled per launch.
template <class K, class... A>
void launch_with_smem(Dim3 grid, Dim3 block, std::size_t dynamic_smem_bytes, K kernel, A... args) {
  detail::run_launch(grid, block, dynamic_smem_bytes, [&]() { kernel(args...); });
}

/// Like launch_with_smem(), in thread-block clusters of `cluster` blocks (cudaLaunchKernelEx with
/// cudaLaunchAttributeClusterDimension): each block of a cluster has its own dynamic shared memory.
template <class K, class... A>
void launch_cluster_with_smem(Dim3 grid, Dim3 block, Dim3 cluster, std::size_t dynamic_smem_bytes, K kernel,
                              A... args) {
  detail::run_launch(grid, block, cluster, dynamic_smem_bytes, [&]() { kernel(args...); });
}

/// Linear index of the calling thread within its block (x fastest, as on a GPU).
unsigned linear_thread_id();
/// Lane of the calling thread within its warp (linear thread index mod 32).
unsigned lane_id();
/// Warp of the calling thread within its block (linear thread index / 32).
unsigned warp_id();
/// Block-wide barrier (__syncthreads).
void syncthreads();
/// A failed poll: the calling thread stays runnable and lets the other threads of its block run.
void spin_yield();
/// Called by an emulated synchronisation object whose state a thread just changed (an mbarrier
/// arrival, a landed copy): a pass over the block that saw one is not a spinning deadlock.
void note_progress();
/// Warp-wide barrier (__syncwarp): every existing lane of the warp must call it.
void syncwarp();
/// barrier.cluster.arrive: the calling thread arrives on the cluster barrier's current phase
/// (once per phase; never blocks).
void cluster_arrive();
/// barrier.cluster.wait: waits until every thread of every block of the cluster has arrived on
/// the phase the calling thread arrived on.
void cluster_wait();

/// Warp collective: every existing lane of the calling warp calls it with its value and gets
/// the 32 values of its warp, indexed by lane (zero-filled for inactive lanes of a partial
/// warp). The building block of all emulated warp collectives (shuffles, mma.sync, ldmatrix).
template <class T>
std::array<T, 32> warp_exchange(const T& mine) {
  static_assert(std::is_trivially_copyable_v<T>, "warp_exchange needs a trivially copyable type");
  std::array<T, 32> all;
  detail::warp_rendezvous("warp_exchange", &mine, sizeof(T), all.data());
  return all;
}

}  // namespace gpubench::simt

// ---- CUDA built-ins under the emulation ----

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __shared__ static
#define __launch_bounds__(...)
#define __grid_constant__
#define GPUBENCH_UNROLL
#define GPUBENCH_NO_UNROLL
#define GPUBENCH_DYNAMIC_SHARED(type, name) \
  type* name = static_cast<type*>(::gpubench::simt::detail::dynamic_shared_memory())

#define threadIdx (::gpubench::simt::detail::thread_idx())
#define blockIdx (::gpubench::simt::detail::block_idx())
#define blockDim (::gpubench::simt::detail::block_dim())
#define gridDim (::gpubench::simt::detail::grid_dim())

/// CUDA's warp size.
constexpr int warpSize = 32;

/// CUDA vector types (same layout and alignment as on the device).
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(8) int2 {
  int x, y;
};
struct alignas(8) float2 {
  float x, y;
};
struct uint3 {
  unsigned x, y, z;
};

inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline float2 make_float2(float x, float y) { return {x, y}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }

inline void __syncthreads() { ::gpubench::simt::syncthreads(); }
inline void __syncwarp(unsigned /*mask*/ = 0xffffffffu) { ::gpubench::simt::syncwarp(); }
inline void __threadfence() {}
inline void __threadfence_block() {}

/// SM clock: here a steady host clock in nanoseconds (monotonic, so differences are >= 0).
inline long long clock64() {
  return static_cast<long long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

template <class T>
inline T __ldg(const T* p) {
  return *p;
}
/// ld.global.cg (cached in the L2 only): a plain load here, as __ldg.
template <class T>
inline T __ldcg(const T* p) {
  return *p;
}

/// Atomics are plain read-modify-writes: fibers of a block never interleave inside them.
template <class T>
inline T atomicAdd(T* address, T value) {
  T old = *address;
  *address = static_cast<T>(old + value);
  return old;
}
template <class T>
inline T atomicMax(T* address, T value) {
  T old = *address;
  *address = old < value ? value : old;
  return old;
}
template <class T>
inline T atomicMin(T* address, T value) {
  T old = *address;
  *address = value < old ? value : old;
  return old;
}

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline unsigned __float_as_uint(float f) {
  unsigned u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float __uint_as_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// Value of `var` from lane `src_lane` (mod width) of the caller's width-sized segment.
template <class T>
inline T __shfl_sync(unsigned /*mask*/, T var, int src_lane, int width = warpSize) {
  const auto all = ::gpubench::simt::warp_exchange(var);
  const unsigned lane = ::gpubench::simt::lane_id();
  const unsigned w = static_cast<unsigned>(width);
  const unsigned base = lane & ~(w - 1);
  return all[base + (static_cast<unsigned>(src_lane) & (w - 1))];
}

/// Value of `var` from lane (lane ^ lane_mask); a source beyond the caller's segment yields the
/// caller's own value, as documented for __shfl_xor_sync.
template <class T>
inline T __shfl_xor_sync(unsigned /*mask*/, T var, int lane_mask, int width = warpSize) {
  const auto all = ::gpubench::simt::warp_exchange(var);
  const unsigned lane = ::gpubench::simt::lane_id();
  const unsigned w = static_cast<unsigned>(width);
  const unsigned src = lane ^ static_cast<unsigned>(lane_mask);
  const unsigned base = lane & ~(w - 1);
  return src >= base + w ? var : all[src];
}

/// Value of `var` from lane (lane - delta) within the segment; lanes below delta keep theirs.
template <class T>
inline T __shfl_up_sync(unsigned /*mask*/, T var, unsigned delta, int width = warpSize) {
  const auto all = ::gpubench::simt::warp_exchange(var);
  const unsigned lane = ::gpubench::simt::lane_id();
  const unsigned w = static_cast<unsigned>(width);
  return (lane & (w - 1)) < delta ? var : all[lane - delta];
}

/// Value of `var` from lane (lane + delta) within the segment; lanes past its end keep theirs.
template <class T>
inline T __shfl_down_sync(unsigned /*mask*/, T var, unsigned delta, int width = warpSize) {
  const auto all = ::gpubench::simt::warp_exchange(var);
  const unsigned lane = ::gpubench::simt::lane_id();
  const unsigned w = static_cast<unsigned>(width);
  return (lane & (w - 1)) + delta >= w ? var : all[lane + delta];
}

/// Bit i set when lane i's predicate is non-zero (inactive lanes contribute 0).
inline unsigned __ballot_sync(unsigned /*mask*/, int predicate) {
  const auto all = ::gpubench::simt::warp_exchange(predicate != 0 ? 1 : 0);
  unsigned bits = 0;
  for (unsigned i = 0; i < 32; ++i) bits |= all[i] != 0 ? (1u << i) : 0u;
  return bits;
}
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }

#endif  // __CUDACC__
