// The peer-to-peer SM copy on the fake CUDA runtime (see fake_runtime.h and
// tests/cuda/fake_cuda_runtime.cpp): executed on the host, as a kernel of the current device.
//
// Kept from the real runtime where the workloads depend on it: the kernel runs on the current
// device and must be launched into one of its streams (fake_cuda::as_kernel refuses another
// device's stream), and it may touch only that device's memory or a peer's to which peer access
// is enabled; anything else is cudaErrorIllegalAddress, as on a GPU without the mapping.
// The kernel body itself runs under the SIMT emulation in test_emulation.cpp.
#include "families/p2p/tests/fake_runtime.h"

#include <cuda_runtime_api.h>

#include <cstring>

#include "families/p2p/p2p.h"
#include "tests/cuda/fake_cuda_runtime.h"

namespace fake_p2p {

State& state() {
  static State s;
  return s;
}

}  // namespace fake_p2p

namespace gpubench::kernels {

// The real rule lives in p2p.cuh (tested under the SIMT emulation); the fake's grid is one block
// per SM.
int p2p_copy_blocks(std::size_t, int sm_count) { return sm_count; }

int launch_p2p_copy(const void* src, void* dst, std::size_t bytes, int sm_count, Stream stream) {
  if (!stream || sm_count < 1) return cudaErrorInvalidValue;
  if (bytes == 0) return cudaSuccess;
  const int device = fake_cuda::state().current_device;
  if (!fake_cuda::reachable_from(device, src, bytes) || !fake_cuda::reachable_from(device, dst, bytes))
    return cudaErrorIllegalAddress;
  ++fake_p2p::state().sm_copy_launches;
  fake_p2p::state().last_sm_count = sm_count;
  const bool dropped = fake_p2p::state().drop_on_device == device;
  return fake_cuda::as_kernel(stream, [=] {
    if (!dropped) std::memmove(dst, src, bytes);
  });
}

}  // namespace gpubench::kernels
