// The host stand-in for the CUDA runtime used by test_cuda_fake (see fake_cuda_runtime.cpp):
// its counters and fault switches.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace fake_cuda {

/// Where a planted wrong value goes in a read-back (State::plant).
enum class Plant { none, first, middle, last };

/// Counters and fault injection of the fake runtime.
struct State {
  std::size_t total_bytes = std::size_t{80} << 30;
  std::size_t free_bytes = std::size_t{4} << 30;  ///< what cudaMalloc may still hand out
  std::map<void*, std::size_t> sizes;             ///< live allocations
  /// cudaMalloc as an allocator that needs contiguous memory (no virtual mapping): each block
  /// takes the first gap that holds it in an address range of the free_bytes at the first such
  /// call. Off: any block up to free_bytes fits, as GPUs map pages into one virtual range.
  bool contiguous_malloc = false;
  std::map<std::size_t, std::size_t> placed;  ///< contiguous_malloc: offset -> bytes of live blocks
  std::map<void*, std::size_t> offset_of;     ///< contiguous_malloc: each live block's offset
  std::size_t arena_bytes = 0;                ///< contiguous_malloc: the address range
  cudaError_t last_error = cudaSuccess;
  cudaError_t sticky = cudaSuccess;   ///< returned by synchronizing calls once set
  int failing_memsets = 0;            ///< the next N cudaMemsetAsync fail (cudaErrorInvalidValue, not sticky)
  bool thrust_synchronizes = false;   ///< thrust_copy synchronizes its stream (not capturable)
  bool break_write = false;           ///< the write launcher corrupts one element
  bool break_block_set_read = false;  ///< the last block of block_set_read skips the set's last word
  bool break_seeded_fill = false;     ///< launch_seeded_fill writes its middle word wrong
  bool break_chase_ring = false;      ///< launch_chase_ring_fill's ring skips every other entry
  bool can_map_host_memory = true;    ///< cudaDevAttrCanMapHostMemory (PCIe SM-driven transfers)
  /// cudaFuncGetAttributes' numRegs of every kernel the real launchers ask about (what nvcc 13
  /// gives the wgmma kernel at entry: 168).
  int kernel_registers = 168;
  int cc_major = 9;  ///< compute capability (an H100: 9.0)
  int cc_minor = 0;
  /// What a kernel boundary costs on the device (spent before each copy/read/write/thrust
  /// kernel runs, also when replayed from a graph): 0 by default; ~2-3 us on an H100.
  double launch_cost_seconds = 0;
  int live_streams = 0;
  int live_graphs = 0;
  int captures = 0;
  int graph_launches = 0;
  int kernel_launches = 0;
  int d2d_copies = 0;
  /// The input of every device-to-device cudaMemcpyAsync, thrust_copy and cub_reduce_sum call
  /// (not its size query), in the order they were queued or captured.
  std::vector<const void*> library_sources;
  /// A wrong value planted in what the device returns: the next device-to-host copy of at least
  /// plant_min_bytes has its element (of plant_elem_bytes) at the first, middle or last index
  /// flipped in one bit of its most significant byte, as if the kernel had written it wrong;
  /// planted_index says which.
  Plant plant = Plant::none;
  std::size_t plant_elem_bytes = 4;
  std::size_t plant_min_bytes = 64;
  std::size_t planted_index = 0;
  bool planted = false;

  // Unified memory, pools and page-locked host memory (the memory family's rows).
  std::map<void*, std::size_t> managed;   ///< live cudaMallocManaged allocations (not device memory)
  std::map<void*, int> managed_location;  ///< where each managed allocation was last prefetched: -1 host, 0 device
  bool concurrent_managed_access = true;  ///< cudaDevAttrConcurrentManagedAccess (ManagedMemory is always 1)
  bool memory_pools = true;               ///< cudaDevAttrMemoryPoolsSupported
  int copy_engines = 2;                   ///< cudaDevAttrAsyncEngineCount
  int prefetches = 0;                     ///< cudaMemPrefetchAsync calls
  int read_mostly_advices = 0;            ///< cudaMemAdvise(cudaMemAdviseSetReadMostly) calls
  /// A driver that never drops the device's read-only copies: kernels see each read-mostly
  /// range as it was at the first kernel after the advice, whatever the CPU wrote since.
  bool stale_read_mostly_copies = false;
  std::map<void*, std::size_t> read_mostly;                      ///< advised ranges
  std::map<void*, std::vector<unsigned char>> read_mostly_copy;  ///< stale_read_mostly_copies: the device's copy
  /// The default pool: bytes freed by cudaFreeAsync stay reserved (still used device memory)
  /// until a synchronize releases what exceeds the threshold, or cudaMemPoolTrimTo.
  std::uint64_t pool_release_threshold = 0;
  std::size_t pool_reserved = 0;  ///< held by the pool, unused
  std::size_t pool_used = 0;      ///< held by the pool's live allocations
  /// Of pool_reserved, what cudaFreeAsync returned since the last cudaStreamSynchronize: a trim
  /// keeps it ("freed asynchronously but not observed complete on the host can count as
  /// outstanding", cudaMemPoolTrimTo), a synchronize or a reuse in stream order clears it.
  std::size_t pool_unobserved = 0;
  int pool_hits = 0;                        ///< cudaMallocAsync served from the reserve
  int pool_misses = 0;                      ///< cudaMallocAsync that needed new device memory
  std::map<void*, std::size_t> registered;  ///< cudaHostRegister'ed ranges
  /// cudaMallocHost and cudaHostRegister succeed without page-locking anything: what
  /// cudaPointerGetAttributes then says of their blocks (unregistered, pageable memory).
  bool pinning_has_no_effect = false;

  // Several devices (the peer-to-peer rows): device_count alike devices (each what an H100
  // reports, PCI bus ids kBusIds[i]) and one current device for the process (cudaSetDevice).
  // Allocations, streams and events belong to the device current when they were made; as on
  // the real runtime, a kernel launch on a stream of another device than the current one fails,
  // and so does recording an event into a stream of another device (cudaStreamWaitEvent and
  // copies accept any device's stream). All devices draw on the one free_bytes above.
  int device_count = 1;
  int current_device = 0;
  std::map<void*, int> device_of;  ///< live cudaMalloc allocations -> their device
  /// cudaDeviceCanAccessPeer between any two distinct devices (false: no pair can).
  bool peer_access_supported = true;
  /// Peers a device can map at once (0: no limit); one more is cudaErrorTooManyPeers.
  long peer_mappings = 0;
  std::set<std::pair<int, int>> peer_access;  ///< (device, peer) enabled by cudaDeviceEnablePeerAccess
  int peer_copies = 0;                        ///< cudaMemcpyPeerAsync calls
  /// A hung kernel: cudaEventQuery answers cudaErrorNotReady for ever (the work itself ran).
  bool work_never_finishes = false;
  /// work_never_finishes from the first cudaEventQuery on (the first bounded wait, in a row's
  /// preparation): what was queued before it finished.
  bool hang_at_first_query = false;
  /// Calls made meanwhile that on a GPU would have waited for ever: cudaStreamSynchronize,
  /// cudaEventSynchronize, a cudaMemcpyAsync into pageable host memory (it returns once the copy
  /// is done), and cudaFree and cudaFreeHost once work was queued while hung (they wait for it).
  int unbounded_waits_on_hung_work = 0;
  bool hung_work_queued = false;  ///< work was queued (or a graph launched) while work_never_finishes
  /// Page-locked host allocations (cudaHostAlloc, in the PCIe fake): a copy into them is
  /// asynchronous.
  std::map<void*, std::size_t> page_locked;
  /// Called as work is queued: "memcpy" (cudaMemcpyAsync), "event" (cudaEventRecord), and what a
  /// family's fake launchers name; a test that checks the order of what is queued sets it.
  std::function<void(const char* what)> on_enqueue;
  /// The last cudaMemcpyPeerAsync: source device, destination device and the device of the
  /// stream it was issued on (whose copy engine does the work).
  struct PeerCopy {
    int src = -1, dst = -1, issuer = -1;
  } last_peer_copy;
};

/// The fake runtime's state.
State& state();

/// cudaDeviceGetPCIBusId of fake device i (device 0: "0000:3B:00.0", what NVML's stand-in knows).
const char* bus_id(int device);

/// The device whose live allocation holds [p, p + bytes); -1 when none does.
int device_holding(const void* p, std::size_t bytes);

/// Whether work on `device` may touch [p, p + bytes): it is that device's memory, or a peer's to
/// which the device has peer access enabled (what a fake kernel checks before it runs).
bool reachable_from(int device, const void* p, std::size_t bytes);

/// A kernel launch on the host: enqueued on `s` like any work (recorded while capturing), it
/// spends state().launch_cost_seconds (busy-waited, as the device would be busy), then runs
/// `op`. Counts a kernel launch. What the fake launchers of every family use.
int as_kernel(cudaStream_t s, std::function<void()> op);

}  // namespace fake_cuda
