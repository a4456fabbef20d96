// The shared-memory launchers for the fake-runtime test: launch_smem_read computes the kernel's
// output with the host reference (reference.h; the kernel body itself is checked against that
// reference under the SIMT emulation in test_smem_emulation.cpp), enqueued like a kernel, with
// the device's rules on arguments and an H100's 227 KiB opt-in limit. `fake_smem::corrupt`
// flips one output word, as a broken kernel would.
#include <cuda_runtime_api.h>

#include <algorithm>

#include "families/smem/reference.h"
#include "families/smem/smem.h"
#include "families/smem/tests/fake_launchers.h"
#include "tests/cuda/fake_cuda_runtime.h"

namespace fake_smem {

bool corrupt = false;
int launches = 0;

}  // namespace fake_smem

namespace gpubench::kernels {

namespace {
constexpr std::size_t kOptinBytes = 227 * 1024;
}

int launch_smem_read(const std::uint32_t* in, std::uint32_t* out, int blocks, std::size_t bytes_per_block, int passes,
                     Stream stream) {
  if (in == nullptr || out == nullptr || blocks < 1 || !smem_args_ok(bytes_per_block, passes) ||
      bytes_per_block > smem_max_bytes_per_block(kOptinBytes))
    return cudaErrorInvalidValue;
  ++fake_smem::launches;
  return fake_cuda::as_kernel(stream, [=] {
    const std::size_t in_words = static_cast<std::size_t>(blocks) * bytes_per_block / 4;
    const auto want = smem_reference(in, in_words, blocks, bytes_per_block, passes);
    std::copy(want.begin(), want.end(), out);
    if (fake_smem::corrupt) out[want.size() / 2] ^= 1u;
  });
}

int smem_blocks_per_sm(std::size_t bytes_per_block, int* blocks_per_sm) {
  *blocks_per_sm = static_cast<int>(kOptinBytes / (bytes_per_block + 1024));
  return cudaSuccess;
}

int smem_device_max_bytes_per_block(std::size_t* bytes) {
  *bytes = smem_max_bytes_per_block(kOptinBytes);
  return cudaSuccess;
}

}  // namespace gpubench::kernels
