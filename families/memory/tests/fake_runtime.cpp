// The memory family's additions to the fake CUDA runtime (tests/cuda/fake_cuda_runtime.cpp, whose
// State holds their counters): managed memory with prefetch and advice, the default
// stream-ordered pool, page-locked registration and cudaMallocHost. Executed on the host at once,
// like the rest of the fake.
//
// Kept from the real runtime where the workloads depend on it:
//  - managed memory is not device memory: cudaMallocManaged does not lower cudaMemGetInfo's free
//    figure; cudaFree releases it; prefetch and advice only accept whole managed ranges;
//  - the pool keeps what cudaFreeAsync returns as reserved (still used device memory) until a
//    synchronize releases what exceeds the release threshold, or cudaMemPoolTrimTo; a
//    cudaMallocAsync the reserve can hold is a hit, any other takes new device memory (a miss);
//  - cudaHostRegister refuses a range registered twice, cudaHostUnregister one never registered;
//  - cudaPointerGetAttributes tells device, managed, page-locked (cudaHostAlloc, cudaMallocHost,
//    cudaHostRegister) and other (unregistered) host memory apart, as CUDA 11 and newer do.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "families/pcie/tests/fake_runtime.h"
#include "tests/cuda/fake_cuda_runtime.h"

using fake_cuda::state;

namespace {

// The one default pool's handle (never dereferenced).
int pool_token = 0;
cudaMemPool_t default_pool() { return reinterpret_cast<cudaMemPool_t>(&pool_token); }

/// Whether `p` lies in one of the ranges of `ranges` (base -> bytes).
template <class Map, class Bytes>
bool in_ranges(const Map& ranges, const void* p, Bytes bytes_of) {
  auto it = ranges.upper_bound(const_cast<void*>(p));
  if (it == ranges.begin()) return false;
  --it;
  const auto offset = static_cast<const unsigned char*>(p) - static_cast<const unsigned char*>(it->first);
  return offset >= 0 && static_cast<std::size_t>(offset) < bytes_of(it->second);
}

bool whole_managed_range(const void* p, std::size_t bytes) {
  auto it = state().managed.find(const_cast<void*>(p));
  return it != state().managed.end() && bytes <= it->second;
}

}  // namespace

cudaError_t cudaMallocManaged(void** p, size_t bytes, unsigned int flags) {
  if (flags != cudaMemAttachGlobal || bytes == 0) return cudaErrorInvalidValue;
  *p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!*p) return cudaErrorMemoryAllocation;
  state().managed[*p] = bytes;
  state().managed_location[*p] = -1;
  return cudaSuccess;
}

cudaError_t cudaMemPrefetchAsync(const void* p, size_t bytes, cudaMemLocation where, unsigned int flags,
                                 cudaStream_t s) {
  if (!s || flags != 0 || !whole_managed_range(p, bytes)) return cudaErrorInvalidValue;
  if (where.type != cudaMemLocationTypeHost && !(where.type == cudaMemLocationTypeDevice && where.id == 0))
    return cudaErrorInvalidDevice;
  ++state().prefetches;
  state().managed_location[const_cast<void*>(p)] = where.type == cudaMemLocationTypeHost ? -1 : 0;
  return cudaSuccess;
}

cudaError_t cudaMemAdvise(const void* p, size_t bytes, cudaMemoryAdvise advice, cudaMemLocation) {
  if (!whole_managed_range(p, bytes)) return cudaErrorInvalidValue;
  if (advice == cudaMemAdviseSetReadMostly) {
    ++state().read_mostly_advices;
    state().read_mostly[const_cast<void*>(p)] = bytes;
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  if (!state().memory_pools) return cudaErrorNotSupported;
  *pool = default_pool();
  return cudaSuccess;
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) { return cudaDeviceGetDefaultMemPool(pool, device); }

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  if (pool != default_pool()) return cudaErrorInvalidValue;
  const fake_cuda::State& st = state();
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold: *static_cast<std::uint64_t*>(value) = st.pool_release_threshold; break;
    case cudaMemPoolAttrReservedMemCurrent:
      *static_cast<std::uint64_t*>(value) = st.pool_reserved + st.pool_used;
      break;
    case cudaMemPoolAttrUsedMemCurrent: *static_cast<std::uint64_t*>(value) = st.pool_used; break;
    default: return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  if (pool != default_pool() || attr != cudaMemPoolAttrReleaseThreshold) return cudaErrorInvalidValue;
  state().pool_release_threshold = *static_cast<std::uint64_t*>(value);
  return cudaSuccess;
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep) {
  if (pool != default_pool()) return cudaErrorInvalidValue;
  fake_cuda::State& st = state();
  const std::size_t kept = std::max(keep, std::min(st.pool_unobserved, st.pool_reserved));
  if (st.pool_reserved > kept) {
    st.free_bytes += st.pool_reserved - kept;
    st.pool_reserved = kept;
  }
  return cudaSuccess;
}

cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t s) {
  if (!s) return cudaErrorInvalidResourceHandle;
  fake_cuda::State& st = state();
  const bool hit = st.pool_reserved >= bytes;
  if (!hit && bytes > st.free_bytes) return cudaErrorMemoryAllocation;
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!*p) return cudaErrorMemoryAllocation;
  if (hit) {
    st.pool_reserved -= bytes;
    st.pool_unobserved -= std::min(st.pool_unobserved, bytes);
    ++st.pool_hits;
  } else {
    st.free_bytes -= bytes;
    ++st.pool_misses;
  }
  st.sizes[*p] = bytes;
  st.pool_used += bytes;
  return cudaSuccess;
}

cudaError_t cudaFreeAsync(void* p, cudaStream_t s) {
  if (!s) return cudaErrorInvalidResourceHandle;
  auto it = state().sizes.find(p);
  if (it == state().sizes.end()) return cudaErrorInvalidValue;
  state().pool_used -= it->second;
  state().pool_reserved += it->second;  // kept by the pool until a synchronize or a trim
  state().pool_unobserved += it->second;
  state().sizes.erase(it);
  std::free(p);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** p, size_t bytes) { return cudaHostAlloc(p, bytes, cudaHostAllocDefault); }

cudaError_t cudaHostRegister(void* p, size_t bytes, unsigned int) {
  if (!p || bytes == 0) return cudaErrorInvalidValue;
  if (state().registered.count(p) != 0) return cudaErrorHostMemoryAlreadyRegistered;
  state().registered[p] = bytes;
  return cudaSuccess;
}

cudaError_t cudaHostUnregister(void* p) {
  if (state().registered.erase(p) == 0) return cudaErrorHostMemoryNotRegistered;
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* p) {
  if (!attributes) return cudaErrorInvalidValue;
  *attributes = cudaPointerAttributes{};
  const auto bytes = [](std::size_t b) { return b; };
  const fake_cuda::State& st = state();
  if (in_ranges(st.sizes, p, bytes)) {
    attributes->type = cudaMemoryTypeDevice;
    const auto owner = st.device_of.find(const_cast<void*>(p));
    attributes->device = owner != st.device_of.end() ? owner->second : st.current_device;
    attributes->devicePointer = const_cast<void*>(p);
  } else if (in_ranges(st.managed, p, bytes)) {
    attributes->type = cudaMemoryTypeManaged;
    attributes->device = st.current_device;
    attributes->devicePointer = attributes->hostPointer = const_cast<void*>(p);
  } else if (!st.pinning_has_no_effect &&
             (in_ranges(st.registered, p, bytes) ||
              in_ranges(fake_pcie::state().host_allocs, p, [](const auto& a) { return a.first; }))) {
    attributes->type = cudaMemoryTypeHost;
    attributes->device = st.current_device;
    attributes->devicePointer = attributes->hostPointer = const_cast<void*>(p);
  } else {
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->device = -2;  // what CUDA reports for memory it does not know
  }
  return cudaSuccess;
}
