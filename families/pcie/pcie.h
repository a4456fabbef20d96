// Launchers of the PCIe kernels (families/pcie/pcie.cu): the spin kernel that holds a stream while
// small transfers are queued behind it, and the SM-driven copy that moves data across the link
// by reading or writing mapped pinned host memory. A plain C++ header (no CUDA syntax or
// include); conventions as in families/global_memory/global_memory.h: each launcher returns the cudaError_t of the
// launch as an int (0 = success), enqueues on `stream` and does not synchronize.
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;  // cudaStream_t is `CUstream_st*`

namespace gpubench::kernels {

using Stream = CUstream_st*;

/// What the spin kernel writes to *status when it ends.
constexpr std::uint32_t kSpinRunning = 0;   ///< the host's value before the launch
constexpr std::uint32_t kSpinReleased = 1;  ///< the host wrote a non-zero *release_flag in time
constexpr std::uint32_t kSpinTimedOut = 2;  ///< gave up after the timeout: queueing was not hidden

/// One thread that polls *release_flag (mapped pinned host memory, written by the host) until it
/// is non-zero, then writes kSpinReleased to *status (mapped pinned memory too) and exits, so
/// the work queued behind it in `stream` starts at once. After `timeout_ns` of the GPU's global
/// timer it writes kSpinTimedOut and exits anyway: a host-side bug can delay a benchmark, never
/// hang it. Both pointers are device pointers from cudaHostGetDevicePointer.
int launch_pcie_spin(const std::uint32_t* release_flag, std::uint32_t* status, std::uint64_t timeout_ns, Stream stream);

/// dst[0..bytes) = src[0..bytes) by the SMs with 16-byte loads and stores (several in flight
/// per thread), byte-wise tail. One side is mapped pinned host memory (its device pointer), the
/// other device memory: every access of the host side is a PCIe read or write. Both pointers
/// 16-byte aligned (cudaHostAlloc and cudaMalloc give far more). Any byte count.
int launch_pcie_sm_copy(const void* src, void* dst, std::size_t bytes, int sm_count, Stream stream);

/// Blocks launch_pcie_sm_copy uses for `bytes` on `sm_count` SMs (at most enough to give each
/// thread one tile, at least one).
int pcie_sm_copy_blocks(std::size_t bytes, int sm_count);

}  // namespace gpubench::kernels
