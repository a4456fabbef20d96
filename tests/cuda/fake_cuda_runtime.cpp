// A stand-in for the CUDA runtime and the memory launchers, executed on the host, so the CUDA
// backend's workload logic (allocation, poisoning, graph capture and replay, L2 flushing,
// event timing, copy-back and verification) runs end to end on a machine without a GPU.
//
// Semantics kept from the real runtime where the workloads depend on them:
//  - work is enqueued on a stream in order; outside capture it runs immediately (the host is
//    "the device"), so synchronize calls have nothing to wait for;
//  - while a stream is capturing, enqueued work is recorded into the graph and not run;
//    synchronizing a capturing stream fails with cudaErrorStreamCaptureUnsupported and
//    invalidates the capture; recording an event into a capturing stream is refused here
//    (the timer must record its events outside the graph);
//  - a graph launch replays the recorded work in order;
//  - events carry a timestamp of the host clock when "executed";
//  - several devices (State::device_count): allocations, streams and events belong to the device
//    current when they were made; a kernel launch needs its stream's device current, an event
//    record needs the event and the stream on one device, cudaEventElapsedTime both events on
//    one; peer access is enabled per (device, peer) pair, a second time is
//    cudaErrorPeerAccessAlreadyEnabled.
// Faults can be injected (fake_cuda::state()) to test the error paths.
#include "tests/cuda/fake_cuda_runtime.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>

#include "families/global_memory/global_memory.h"
#include "harness/random.h"
#include "harness/verify.h"

struct CUstream_st {
  int device = 0;
  bool capturing = false;
  bool invalidated = false;
  std::vector<std::function<void()>> captured;
};
struct CUevent_st {
  int device = 0;
  double t = 0;
  bool recorded = false;
};
struct CUgraph_st {
  std::vector<std::function<void()>> ops;
};
struct CUgraphExec_st {
  std::vector<std::function<void()>> ops;
};

namespace fake_cuda {

State& state() {
  static State s;
  return s;
}

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

cudaError_t fail(cudaError_t e) {
  state().last_error = e;
  return e;
}

bool valid_device(int device) { return device >= 0 && device < state().device_count; }

// Runs `op` now, or records it when the stream is capturing.
cudaError_t enqueue(cudaStream_t s, std::function<void()> op) {
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);  // the workloads never use stream 0
  if (s->capturing) {
    s->captured.push_back(std::move(op));
  } else {
    if (state().work_never_finishes) state().hung_work_queued = true;
    op();
  }
  return cudaSuccess;
}

}  // namespace
}  // namespace fake_cuda

using fake_cuda::enqueue;
using fake_cuda::fail;
using fake_cuda::state;

// ---- errors ----
const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated: return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorPeerAccessAlreadyEnabled: return "cudaErrorPeerAccessAlreadyEnabled";
    case cudaErrorPeerAccessUnsupported: return "cudaErrorPeerAccessUnsupported";
    default: return "cudaErrorFake";
  }
}
const char* cudaGetErrorString(cudaError_t) { return "fake runtime error"; }
cudaError_t cudaGetLastError() {
  const cudaError_t e = state().last_error;
  if (state().sticky != cudaSuccess) return state().sticky;  // sticky errors stay
  state().last_error = cudaSuccess;
  return e;
}

// ---- device and streams ----
cudaError_t cudaGetDeviceCount(int* count) {
  *count = state().device_count;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  if (!fake_cuda::valid_device(device)) return fail(cudaErrorInvalidDevice);
  state().current_device = device;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  *device = state().current_device;
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) {
  *s = new CUstream_st;
  (*s)->device = state().current_device;
  ++state().live_streams;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete s;
  --state().live_streams;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  if (state().work_never_finishes) ++state().unbounded_waits_on_hung_work;
  if (s && s->capturing) {
    s->invalidated = true;
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  // The host has seen the pool's frees complete; the pool gives back what it holds above its
  // release threshold.
  fake_cuda::State& st = state();
  st.pool_unobserved = 0;
  if (st.pool_reserved > st.pool_release_threshold) {
    st.free_bytes += st.pool_reserved - static_cast<std::size_t>(st.pool_release_threshold);
    st.pool_reserved = static_cast<std::size_t>(st.pool_release_threshold);
  }
  return st.sticky;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!fake_cuda::valid_device(device)) return fail(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::strcpy(prop->name, "NVIDIA H100 80GB HBM3");
  prop->totalGlobalMem = std::size_t{85045182464ull};
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (!fake_cuda::valid_device(device)) return fail(cudaErrorInvalidDevice);
  // What an H100 SXM 80GB reports.
  switch (attr) {
    case cudaDevAttrComputeCapabilityMajor: *value = state().cc_major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = state().cc_minor; break;
    case cudaDevAttrMultiProcessorCount: *value = 132; break;
    case cudaDevAttrClockRate: *value = 1980000; break;
    case cudaDevAttrMemoryClockRate: *value = 2619000; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = 5120; break;
    case cudaDevAttrL2CacheSize: *value = 52428800; break;
    case cudaDevAttrEccEnabled: *value = 1; break;
    case cudaDevAttrCanMapHostMemory: *value = state().can_map_host_memory ? 1 : 0; break;
    case cudaDevAttrManagedMemory: *value = 1; break;
    case cudaDevAttrConcurrentManagedAccess: *value = state().concurrent_managed_access ? 1 : 0; break;
    case cudaDevAttrMemoryPoolsSupported: *value = state().memory_pools ? 1 : 0; break;
    case cudaDevAttrAsyncEngineCount: *value = state().copy_engines; break;
    default: return fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}
cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
  if (limit != cudaLimitMaxL2FetchGranularity) return fail(cudaErrorUnsupportedLimit);
  *value = 64;  // what an H100 reports
  return cudaSuccess;
}
cudaError_t cudaDeviceGetPCIBusId(char* out, int len, int device) {
  if (!fake_cuda::valid_device(device) || len < 13) return fail(cudaErrorInvalidValue);
  std::strcpy(out, fake_cuda::bus_id(device));
  return cudaSuccess;
}
cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  if (!fake_cuda::valid_device(device) || !fake_cuda::valid_device(peer)) return fail(cudaErrorInvalidDevice);
  *can = device != peer && state().peer_access_supported ? 1 : 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
  fake_cuda::State& st = state();
  if (flags != 0) return fail(cudaErrorInvalidValue);
  if (!fake_cuda::valid_device(peer) || peer == st.current_device) return fail(cudaErrorInvalidDevice);
  if (!st.peer_access_supported) return fail(cudaErrorPeerAccessUnsupported);
  // Like the real runtime: an error, also left as the last error, on the second call.
  if (st.peer_access.count({st.current_device, peer}) != 0) return fail(cudaErrorPeerAccessAlreadyEnabled);
  const auto mapped = std::count_if(st.peer_access.begin(), st.peer_access.end(),
                                    [&](const std::pair<int, int>& a) { return a.first == st.current_device; });
  if (st.peer_mappings > 0 && mapped >= st.peer_mappings) return fail(cudaErrorTooManyPeers);
  st.peer_access.insert({st.current_device, peer});
  return cudaSuccess;
}

// ---- memory ----
namespace {
// contiguous_malloc: the offset of the first gap of at least `bytes`, or the arena's size if none.
std::size_t first_fit(const fake_cuda::State& st, std::size_t bytes) {
  std::size_t at = 0;
  for (const auto& [offset, size] : st.placed) {
    if (offset - at >= bytes) return at;
    at = offset + size;
  }
  return st.arena_bytes - at >= bytes ? at : st.arena_bytes;
}
}  // namespace

cudaError_t cudaMalloc(void** p, size_t bytes) {
  fake_cuda::State& st = state();
  if (bytes > st.free_bytes) return fail(cudaErrorMemoryAllocation);
  std::size_t offset = 0;
  if (st.contiguous_malloc) {
    if (st.arena_bytes == 0) st.arena_bytes = st.free_bytes;
    offset = first_fit(st, bytes);
    if (offset == st.arena_bytes) return fail(cudaErrorMemoryAllocation);
  }
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!*p) return fail(cudaErrorMemoryAllocation);
  if (st.contiguous_malloc) {
    st.placed[offset] = bytes;
    st.offset_of[*p] = offset;
  }
  state().free_bytes -= bytes;
  state().sizes[*p] = bytes;
  state().device_of[*p] = state().current_device;
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  if (state().hung_work_queued) ++state().unbounded_waits_on_hung_work;
  if (auto m = state().managed.find(p); m != state().managed.end()) {
    state().read_mostly.erase(p);
    state().read_mostly_copy.erase(p);
    state().managed.erase(m);
    state().managed_location.erase(p);
    std::free(p);
    return cudaSuccess;
  }
  auto it = state().sizes.find(p);
  if (it == state().sizes.end()) return fail(cudaErrorInvalidValue);
  if (auto o = state().offset_of.find(p); o != state().offset_of.end()) {
    state().placed.erase(o->second);
    state().offset_of.erase(o);
  }
  state().free_bytes += it->second;
  state().sizes.erase(it);
  state().device_of.erase(p);
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  *free_bytes = state().free_bytes;
  *total = state().total_bytes;
  return cudaSuccess;
}
namespace {
// Whether `p` lies in one of `ranges` (start -> bytes).
bool in_any(const std::map<void*, std::size_t>& ranges, const void* p) {
  auto it = ranges.upper_bound(const_cast<void*>(p));
  if (it == ranges.begin()) return false;
  --it;
  return static_cast<const char*>(p) < static_cast<const char*>(it->first) + it->second;
}
}  // namespace

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  if (kind == cudaMemcpyDeviceToDevice) {
    ++state().d2d_copies;
    state().library_sources.push_back(src);
  }
  // Into pageable memory the copy returns only once done: after everything before it.
  const fake_cuda::State& now = state();
  if (now.work_never_finishes && kind == cudaMemcpyDeviceToHost && !in_any(now.page_locked, dst) &&
      !in_any(now.registered, dst) && !in_any(now.managed, dst))
    ++state().unbounded_waits_on_hung_work;
  if (state().on_enqueue) state().on_enqueue("memcpy");
  return enqueue(s, [=] {
    std::memmove(dst, src, bytes);
    fake_cuda::State& st = state();
    if (kind != cudaMemcpyDeviceToHost || st.plant == fake_cuda::Plant::none || st.planted ||
        bytes < st.plant_min_bytes)
      return;
    const std::size_t count = bytes / st.plant_elem_bytes;
    st.planted_index = st.plant == fake_cuda::Plant::first    ? 0
                       : st.plant == fake_cuda::Plant::middle ? count / 2
                                                              : count - 1;
    // In the element's most significant byte (little-endian): far outside any tolerance.
    static_cast<unsigned char*>(dst)[st.planted_index * st.plant_elem_bytes + st.plant_elem_bytes - 1] ^= 0x04;
    st.planted = true;
  });
}
cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                                cudaStream_t s) {
  // Both ends must be memory of the devices named (the real runtime would misroute the copy).
  if (fake_cuda::device_holding(dst, bytes) != dst_device || fake_cuda::device_holding(src, bytes) != src_device)
    return fail(cudaErrorInvalidValue);
  ++state().peer_copies;
  state().last_peer_copy = {src_device, dst_device, s != nullptr ? s->device : state().current_device};
  return enqueue(s, [=] { std::memmove(dst, src, bytes); });
}
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t s) {
  if (state().failing_memsets > 0) {
    --state().failing_memsets;
    return fail(cudaErrorInvalidValue);
  }
  return enqueue(s, [=] { std::memset(dst, value, bytes); });
}

// ---- events ----
cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = new CUevent_st;
  (*e)->device = state().current_device;
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  if (s && s->device != e->device) return fail(cudaErrorInvalidResourceHandle);
  if (state().on_enqueue) state().on_enqueue("event");
  if (s && s->capturing) {
    s->invalidated = true;
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  e->t = fake_cuda::now_seconds();
  e->recorded = true;
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { return cudaEventCreate(e); }
cudaError_t cudaEventQuery(cudaEvent_t e) {
  if (state().hang_at_first_query) state().work_never_finishes = true;
  if (state().sticky != cudaSuccess) return fail(state().sticky);
  if (!e->recorded) return fail(cudaErrorInvalidResourceHandle);
  return state().work_never_finishes ? cudaErrorNotReady : cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (state().work_never_finishes) ++state().unbounded_waits_on_hung_work;
  if (state().sticky != cudaSuccess) return fail(state().sticky);
  return e->recorded ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) {
  if (!start->recorded || !stop->recorded || start->device != stop->device) return fail(cudaErrorInvalidResourceHandle);
  *ms = static_cast<float>((stop->t - start->t) * 1e3);
  return cudaSuccess;
}

// ---- graphs ----
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode) {
  if (s->capturing) return fail(cudaErrorIllegalState);
  s->capturing = true;
  s->invalidated = false;
  s->captured.clear();
  ++state().captures;
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g) {
  if (!s->capturing) return fail(cudaErrorIllegalState);
  s->capturing = false;
  if (s->invalidated) {
    *g = nullptr;
    return fail(cudaErrorStreamCaptureInvalidated);
  }
  *g = new CUgraph_st{std::move(s->captured)};
  s->captured.clear();
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  delete g;
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t g, unsigned long long) {
  *exec = new CUgraphExec_st{g->ops};
  ++state().live_graphs;
  return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  --state().live_graphs;
  return cudaSuccess;
}
cudaError_t cudaGraphUpload(cudaGraphExec_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  if (s->capturing) return fail(cudaErrorStreamCaptureUnsupported);
  ++state().graph_launches;
  if (state().work_never_finishes) state().hung_work_queued = true;
  for (auto& op : exec->ops) op();
  return cudaSuccess;
}

namespace fake_cuda {

const char* bus_id(int device) {
  static const char* const kBusIds[] = {"0000:3B:00.0", "0000:5E:00.0", "0000:86:00.0", "0000:AF:00.0",
                                        "0000:18:00.0", "0000:3C:00.0", "0000:87:00.0", "0000:B0:00.0"};
  constexpr int kKnown = static_cast<int>(sizeof kBusIds / sizeof kBusIds[0]);
  return device >= 0 && device < kKnown ? kBusIds[device] : "0000:FF:00.0";
}

int device_holding(const void* p, std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (const auto& [base_ptr, size] : state().sizes) {
    const auto base = reinterpret_cast<std::uintptr_t>(base_ptr);
    if (a >= base && a + bytes <= base + size) return state().device_of.at(base_ptr);
  }
  return -1;
}

bool reachable_from(int device, const void* p, std::size_t bytes) {
  const int owner = device_holding(p, bytes);
  return owner >= 0 && (owner == device || state().peer_access.count({device, owner}) != 0);
}

int as_kernel(cudaStream_t s, std::function<void()> op) {
  // A kernel runs on the current device: launching into another device's stream is an error.
  if (s && s->device != state().current_device) return fail(cudaErrorInvalidResourceHandle);
  ++state().kernel_launches;
  return enqueue(s, [op = std::move(op)] {
    const double cost = state().launch_cost_seconds;
    if (cost > 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(cost);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    // stale_read_mostly_copies: the kernel reads the device's old copy of each read-mostly range.
    std::vector<std::pair<void*, std::vector<unsigned char>>> live;
    if (state().stale_read_mostly_copies) {
      for (const auto& [p, bytes] : state().read_mostly) {
        auto* b = static_cast<unsigned char*>(p);
        auto& copy = state().read_mostly_copy[p];
        if (copy.empty()) copy.assign(b, b + bytes);
        live.emplace_back(p, std::vector<unsigned char>(b, b + bytes));
        std::copy(copy.begin(), copy.end(), b);
      }
    }
    op();
    for (const auto& [p, bytes] : live) std::copy(bytes.begin(), bytes.end(), static_cast<unsigned char*>(p));
  });
}

}  // namespace fake_cuda

// ---- the memory launchers, on the host ----
namespace gpubench::kernels {

using fake_cuda::as_kernel;

// The Passes plan as the kernels apply it: pass p on slot p mod slots.
int launch_copy(const void* src, void* dst, std::size_t bytes, int, Stream s, Passes passes) {
  if (!passes_ok(passes, bytes)) return fail(cudaErrorInvalidValue);
  return as_kernel(s, [=] {
    for (int p = 0; p < passes.count; ++p) {
      const std::size_t off = static_cast<std::size_t>(p % passes.slots) * passes.slot_stride;
      std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, bytes);
    }
  });
}
int launch_read(const std::uint32_t* in, std::size_t n, std::uint32_t* partial, int max_blocks, int* blocks, int,
                Stream s, Passes passes) {
  if (!passes_ok(passes, n * 4)) return fail(cudaErrorInvalidValue);
  const int grid = std::max(1, std::min(max_blocks, 7));  // an odd block count
  *blocks = grid;
  return as_kernel(s, [=] {
    for (int b = 0; b < grid; ++b) partial[b] = 0;
    for (int p = 0; p < passes.count; ++p) {
      const std::uint32_t* slot = in + static_cast<std::size_t>(p % passes.slots) * (passes.slot_stride / 4);
      for (std::size_t i = 0; i < n; ++i) partial[i % grid] += slot[i];
    }
  });
}
int launch_block_set_read(const std::uint32_t* in, std::size_t n, std::uint32_t* partial, int blocks, Stream s,
                          Passes passes) {
  if (blocks < 1 || n % 4 != 0 || passes.count < 1 || passes.slots != 1) return fail(cudaErrorInvalidValue);
  return as_kernel(s, [=] {
    for (int b = 0; b < blocks; ++b) {
      const bool short_one = state().break_block_set_read && b == blocks - 1 && n > 0;
      std::uint32_t sum = 0;
      for (int p = 0; p < passes.count; ++p)
        for (std::size_t i = 0; i < n - (short_one ? 1 : 0); ++i) sum += in[i];
      partial[b] = sum;
    }
  });
}
int launch_write(std::uint32_t* out, std::size_t n, std::uint32_t seed, int, Stream s, Passes passes) {
  if (!passes_ok(passes, n * 4)) return fail(cudaErrorInvalidValue);
  return as_kernel(s, [=] {
    for (int p = 0; p < passes.count; ++p) {
      std::uint32_t* slot = out + static_cast<std::size_t>(p % passes.slots) * (passes.slot_stride / 4);
      for (std::size_t i = 0; i < n; ++i) slot[i] = seed + static_cast<std::uint32_t>(i);
      // broken in the last slot only (every pass when there is one slot)
      if (state().break_write && n > 3 && p % passes.slots == passes.slots - 1) slot[3] ^= 1u;
    }
  });
}
int launch_strided_copy(const float* in, float* out, std::size_t n, int stride, int, Stream s) {
  ++state().kernel_launches;
  return enqueue(s, [=] {
    for (std::size_t i = 0; i < n; i += static_cast<std::size_t>(stride)) out[i] = in[i];
  });
}
int launch_gather(const float* in, const std::uint32_t* idx, float* out, std::size_t n, int, Stream s) {
  ++state().kernel_launches;
  return enqueue(s, [=] {
    for (std::size_t i = 0; i < n; ++i) out[i] = in[idx[i]];
  });
}
int launch_pointer_chase(const std::uint32_t* next, std::size_t steps, std::uint32_t start, std::uint32_t* sink,
                         long long* cycles, Stream s) {
  ++state().kernel_launches;
  return enqueue(s, [=] {
    std::uint32_t p = start;
    for (std::size_t i = 0; i < steps; ++i) p = next[p];
    *sink = p;
    *cycles = static_cast<long long>(steps) * 300;  // a pretend 300 cycles per load
  });
}
// The chase ring from the host's formula; a planted fault makes every entry skip one.
int launch_chase_ring_fill(std::uint32_t* next, std::size_t n, std::uint64_t seed, int, Stream s) {
  if (next == nullptr || n == 0 || n > 0xffffffffull) return fail(cudaErrorInvalidValue);
  ++state().kernel_launches;
  return enqueue(s, [=] {
    const std::vector<std::uint32_t> ring = gpubench::make_chase_ring(n, seed);
    for (std::size_t e = 0; e < n; ++e) next[e] = state().break_chase_ring ? ring[ring[e]] : ring[e];
  });
}
// The seeded inputs from the formula the host checks use (the kernel itself is checked under the
// SIMT emulation and by gpubench_kernel_check); a planted fault makes it write one word wrong.
int launch_seeded_fill(void* dst, std::size_t bytes, std::uint64_t seed, SeededData data, int, Stream s) {
  if (dst == nullptr || reinterpret_cast<std::uintptr_t>(dst) % 4 != 0 ||
      (data == SeededData::floats && bytes % 4 != 0))
    return fail(cudaErrorInvalidValue);
  return as_kernel(s, [=] {
    if (data == SeededData::floats) {
      gpubench::fill_seeded(static_cast<float*>(dst), bytes / 4, gpubench::SeededFloats{seed});
    } else {
      gpubench::fill_seeded(dst, bytes, gpubench::SeededWords{seed});
    }
    if (state().break_seeded_fill && bytes >= 8) static_cast<std::uint32_t*>(dst)[bytes / 8] ^= 0x00010000u;
  });
}
int thrust_copy(const float* in, float* out, std::size_t n, Stream s) {
  if (state().thrust_synchronizes) {
    // What thrust::cuda::par (not par_nosync) does after each algorithm.
    const cudaError_t e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return e;
  }
  state().library_sources.push_back(in);
  return as_kernel(s, [=] { std::memcpy(out, in, n * sizeof(float)); });
}
int thrust_gather(const float* in, const std::uint32_t* idx, float* out, std::size_t n, Stream s) {
  return launch_gather(in, idx, out, n, 1, s);
}
int cub_reduce_sum(const std::uint32_t* in, std::size_t n, std::uint32_t* out, void* temp, std::size_t* temp_bytes,
                   Stream s) {
  if (temp == nullptr) {
    *temp_bytes = 1000;
    return cudaSuccess;
  }
  if (*temp_bytes < 1000) return cudaErrorInvalidValue;
  ++state().kernel_launches;
  state().library_sources.push_back(in);
  return enqueue(s, [=] { *out = std::accumulate(in, in + n, std::uint32_t{0}); });
}
int random_permutation(std::uint32_t* idx, std::size_t n, std::uint64_t seed, Stream s) {
  return enqueue(s, [=] {
    std::iota(idx, idx + n, std::uint32_t{0});
    std::shuffle(idx, idx + n, std::mt19937_64(seed));
  });
}

}  // namespace gpubench::kernels
