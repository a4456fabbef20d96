// Launchers of the shared-memory bandwidth kernel (body and bytes model in
// families/smem/smem.cuh, declarations in families/smem/smem.h).
//
// Shared memory opt-in: a kernel gets 48 KiB of dynamic shared memory per block unless
// cudaFuncAttributeMaxDynamicSharedMemorySize allows more. The attribute is per device; the
// launcher sets it (once per device and size: the largest size set so far is cached) before
// launching with more than 48 KiB.
#include <atomic>
#include <cstdint>

#include "families/smem/smem.cuh"
#include "families/smem/smem.h"
#include "kernels/launch.cuh"

namespace gpubench::kernels {
namespace {

constexpr int kMaxDevices = 64;

/// Largest dynamic shared memory per block the kernel was opted in to, per device (0 = none).
std::atomic<std::size_t> opted_in_bytes[kMaxDevices] = {};

/// The one kernel instantiation every launcher here uses.
constexpr auto kKernel = smem_read_kernel<kSmemUnroll>;

/// Lets kKernel launch with `bytes` of dynamic shared memory on the current device.
rt::Error allow_dynamic_smem(std::size_t bytes) {
  if (bytes <= kSmemDefaultLimitBytes) return rt::kSuccess;
  int device = 0;
  rt::Error err = rt::current_device(&device);
  if (err != rt::kSuccess) return err;
  const bool cached = device >= 0 && device < kMaxDevices;
  if (cached && opted_in_bytes[device].load() >= bytes) return rt::kSuccess;
  err = rt::allow_dynamic_smem(kKernel, bytes);
  if (err != rt::kSuccess) return err;
  if (cached) {
    std::size_t seen = opted_in_bytes[device].load();
    while (seen < bytes && !opted_in_bytes[device].compare_exchange_weak(seen, bytes)) {
    }
  }
  return rt::kSuccess;
}

/// smem_args_ok plus a size the attribute (an int) can hold.
bool bytes_ok(std::size_t bytes_per_block, int passes) {
  return smem_args_ok(bytes_per_block, passes) && bytes_per_block <= static_cast<std::size_t>(INT32_MAX);
}

}  // namespace

int launch_smem_read(const std::uint32_t* in, std::uint32_t* out, int blocks, std::size_t bytes_per_block, int passes,
                     Stream stream) {
  if (in == nullptr || out == nullptr || blocks < 1 || !bytes_ok(bytes_per_block, passes) ||
      reinterpret_cast<std::uintptr_t>(in) % kSmemVectorBytes != 0) {
    return static_cast<int>(rt::kInvalidValue);
  }
  const rt::Error err = allow_dynamic_smem(bytes_per_block);
  if (err != rt::kSuccess) return static_cast<int>(err);
  return rt::launch(kKernel, blocks, kSmemBlockThreads, bytes_per_block, stream, in, out, smem_rows(bytes_per_block),
                    passes);
}

int smem_blocks_per_sm(std::size_t bytes_per_block, int* blocks_per_sm) {
  if (blocks_per_sm == nullptr || !bytes_ok(bytes_per_block, 1)) return static_cast<int>(rt::kInvalidValue);
  *blocks_per_sm = 0;
  rt::Error err = allow_dynamic_smem(bytes_per_block);
  if (err != rt::kSuccess) return static_cast<int>(err);
  err = rt::max_active_blocks(blocks_per_sm, kKernel, kSmemBlockThreads, bytes_per_block);
  return static_cast<int>(err);
}

int smem_device_max_bytes_per_block(std::size_t* bytes) {
  if (bytes == nullptr) return static_cast<int>(rt::kInvalidValue);
  *bytes = 0;
  std::size_t optin = 0;
  const rt::Error err = rt::optin_smem_per_block(&optin);
  if (err != rt::kSuccess) return static_cast<int>(err);
  *bytes = smem_max_bytes_per_block(optin);
  return static_cast<int>(rt::kSuccess);
}

}  // namespace gpubench::kernels
