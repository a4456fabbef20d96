// PCIe additions to the fake CUDA runtime (see fake_runtime.h and fake_cuda_runtime.cpp):
// executed on the host, immediately, like the rest of the fake.
//
// Kept from the real runtime where the PCIe workloads depend on it:
//  - cudaHostGetDevicePointer works only on memory allocated with cudaHostAllocMapped, and the
//    device address differs from the host one; kernels (the spin kernel and the SM copy) accept
//    only device addresses (device allocations or mapped views) and fail with
//    cudaErrorIllegalAddress otherwise;
//  - the spin kernel writes its status through the mapped view.
// Not modelled: holding the stream. Work runs when it is enqueued; what is queued behind a
// spin kernel, in order, and whether its release flag was still unset at the time, is reported
// to fake_cuda::state().on_enqueue ("spin", "sm_copy", and the generic "memcpy" and "event"),
// which is how a test sees each chunk queued whole before its release. The status path (timed
// out) is tested by injecting it.
#include "families/pcie/tests/fake_runtime.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>

#include "families/pcie/pcie.h"
#include "tests/cuda/fake_cuda_runtime.h"

namespace fake_pcie {

State& state() {
  static State s;
  return s;
}

namespace {

/// The host address behind a device address: a device allocation maps to itself, a mapped view
/// to its host memory; nullptr for anything else (what would be an illegal address).
void* resolve(const void* device_address, std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(device_address);
  for (const auto& [p, size] : fake_cuda::state().sizes) {
    const auto base = reinterpret_cast<std::uintptr_t>(p);
    if (a >= base && a + bytes <= base + size) return reinterpret_cast<void*>(a);
  }
  for (const auto& [p, info] : state().host_allocs) {
    if (!(info.second & cudaHostAllocMapped)) continue;
    const auto view = reinterpret_cast<std::uintptr_t>(p) + kDeviceViewOffset;
    if (a >= view && a + bytes <= view + info.first) return reinterpret_cast<void*>(a - kDeviceViewOffset);
  }
  return nullptr;
}

}  // namespace

void* host_of(const void* address) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  for (const auto& [p, info] : state().host_allocs) {
    const auto base = reinterpret_cast<std::uintptr_t>(p);
    if (a >= base && a < base + info.first) return const_cast<void*>(address);
    if ((info.second & cudaHostAllocMapped) && a >= base + kDeviceViewOffset &&
        a < base + kDeviceViewOffset + info.first)
      return reinterpret_cast<void*>(a - kDeviceViewOffset);
  }
  return nullptr;
}
}  // namespace fake_pcie

using fake_pcie::state;

cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int flags) {
  if (bytes > state().host_alloc_limit) return cudaErrorMemoryAllocation;
  *p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!*p) return cudaErrorMemoryAllocation;
  state().host_allocs[*p] = {bytes, flags};
  fake_cuda::state().page_locked[*p] = bytes;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* p) {
  if (fake_cuda::state().hung_work_queued) ++fake_cuda::state().unbounded_waits_on_hung_work;
  auto it = state().host_allocs.find(p);
  if (it == state().host_allocs.end()) return cudaErrorInvalidValue;
  state().host_allocs.erase(it);
  fake_cuda::state().page_locked.erase(p);
  std::free(p);
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned int flags) {
  if (state().device_view_fails) return cudaErrorUnknown;
  auto it = state().host_allocs.find(host);
  if (flags != 0 || it == state().host_allocs.end() || !(it->second.second & cudaHostAllocMapped))
    return cudaErrorInvalidValue;
  *device = state().device_view_is_host
                ? host
                : reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(host) + fake_pcie::kDeviceViewOffset);
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
  if (!s || !e) return cudaErrorInvalidResourceHandle;
  ++state().stream_waits;
  return cudaSuccess;  // work runs at once here: nothing to wait for
}

namespace gpubench::kernels {

int launch_pcie_spin(const std::uint32_t* release_flag, std::uint32_t* status, std::uint64_t timeout_ns,
                     Stream stream) {
  if (!stream || timeout_ns == 0) return cudaErrorInvalidValue;
  if (!fake_pcie::resolve(release_flag, 4)) return cudaErrorIllegalAddress;
  auto* s = static_cast<std::uint32_t*>(fake_pcie::resolve(status, 4));
  if (!s) return cudaErrorIllegalAddress;
  ++state().spin_launches;
  state().spin_flags.push_back(release_flag);
  if (fake_cuda::state().on_enqueue) fake_cuda::state().on_enqueue("spin");
  *s = state().spin_times_out ? kSpinTimedOut : kSpinReleased;
  return cudaSuccess;
}

// The real rule lives in pcie.cuh (tested under the SIMT emulation); the fake's grid is
// one block per SM.
int pcie_sm_copy_blocks(std::size_t, int sm_count) { return sm_count; }

int launch_pcie_sm_copy(const void* src, void* dst, std::size_t bytes, int, Stream stream) {
  if (!stream) return cudaErrorInvalidValue;
  const void* s = fake_pcie::resolve(src, bytes);
  void* d = fake_pcie::resolve(dst, bytes);
  if (!s || !d) return cudaErrorIllegalAddress;
  ++state().sm_copy_launches;
  if (fake_cuda::state().on_enqueue) fake_cuda::state().on_enqueue("sm_copy");
  std::memmove(d, s, bytes);
  if (state().corrupt_sm_copy && bytes > 5) static_cast<unsigned char*>(d)[5] ^= 0x10;
  return cudaSuccess;
}

}  // namespace gpubench::kernels
