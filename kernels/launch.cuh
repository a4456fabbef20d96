// How the launchers (families/*/<name>.cu) launch kernels and ask the runtime, written for two
// worlds. Under nvcc: <<<>>> and the CUDA runtime. Under the host compiler: the same launcher
// source runs its kernels under the SIMT emulation (kernels/simt) and asks a host stand-in for
// the runtime's answers (kernels/launch_host.h: tests/cuda/emulated_launch.cpp for the emulated
// kernel check, tests/cuda/fake_launch_runtime.cpp for the fake-runtime workload tests), so the
// launchers' own logic - argument rules, grid sizing, shared-memory opt-in, dispatch tables -
// runs in ctest through the same checks gpubench_kernel_check runs on a GPU
// (harness/cuda/kernel_check.cpp).
//
// A launcher uses only the names in gpubench::kernels::rt: no CUDA runtime call of its own, and
// no CUDA header (the host build of a launcher must not see one: the CUDA headers and simt.h
// both define the CUDA keywords and vector types).
#pragma once

#include <cstddef>

#include "kernels/simt/simt.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#include "kernels/launch_host.h"
#endif

struct CUstream_st;

namespace gpubench::kernels::rt {

using Stream = CUstream_st*;

#if defined(__CUDACC__)

using Error = cudaError_t;
using Grid = dim3;
constexpr Error kSuccess = cudaSuccess;
constexpr Error kInvalidValue = cudaErrorInvalidValue;

inline Error current_device(int* device) { return cudaGetDevice(device); }
/// Resident blocks per SM of `kernel` at `threads` threads and `smem` bytes of dynamic shared memory.
template <class Kernel>
Error max_active_blocks(int* per_sm, Kernel kernel, int threads, std::size_t smem) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernel, threads, smem);
}
/// Lets `kernel` launch with up to `bytes` of dynamic shared memory (above the default 48 KiB).
template <class Kernel>
Error allow_dynamic_smem(Kernel kernel, std::size_t bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}
/// Registers per thread the compiled `kernel` holds (cudaFuncGetAttributes numRegs).
template <class Kernel>
Error kernel_registers(int* registers, Kernel kernel) {
  cudaFuncAttributes a{};
  const Error e = cudaFuncGetAttributes(&a, kernel);
  if (e == cudaSuccess) *registers = a.numRegs;
  return e;
}
/// The current device's opt-in limit of shared memory per block.
inline Error optin_smem_per_block(std::size_t* bytes) {
  int device = 0;
  Error e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  int v = 0;
  e = cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (e == cudaSuccess) *bytes = static_cast<std::size_t>(v);
  return e;
}
/// The current device's compute capability and SM count.
inline Error device_shape(int* cc_major, int* cc_minor, int* sms) {
  int device = 0;
  Error e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(cc_major, cudaDevAttrComputeCapabilityMajor, device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(cc_minor, cudaDevAttrComputeCapabilityMinor, device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
  return e;
}
/// Enqueues kernel<<<grid, block, smem, stream>>>(args...) and returns the launch's error.
template <class... P, class... A>
Error launch(void (*kernel)(P...), Grid grid, Grid block, std::size_t smem, Stream stream, A... args) {
  kernel<<<grid, block, smem, stream>>>(static_cast<P>(args)...);
  return cudaGetLastError();
}

namespace detail {
/// A launch configuration with one attribute: clusters of cluster_x x 1 x 1 blocks.
struct ClusterConfig {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};
  ClusterConfig(Grid grid, Grid block, unsigned cluster_x, std::size_t smem, Stream stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = cluster_x;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterConfig(const ClusterConfig&) = delete;  // config.attrs points into this object
  ClusterConfig& operator=(const ClusterConfig&) = delete;
};
}  // namespace detail

/// Clusters of `cluster_x` x 1 x 1 blocks of `kernel` (`threads` threads and `smem` bytes of
/// dynamic shared memory each, the dynamic limit raised first) that can be resident at once on
/// the current device (cudaOccupancyMaxActiveClusters, CUDA 12.0). On an error the runtime's last
/// error is cleared (the caller may fall back; the next launch must not report it).
template <class Kernel>
Error max_active_clusters(int* clusters, Kernel kernel, unsigned cluster_x, int threads, std::size_t smem) {
  const detail::ClusterConfig c(Grid(cluster_x), Grid(static_cast<unsigned>(threads)), cluster_x, smem, nullptr);
  const Error e = cudaOccupancyMaxActiveClusters(clusters, kernel, &c.config);
  if (e != cudaSuccess) (void)cudaGetLastError();
  return e;
}
/// Enqueues kernel(args...) on grid x block in clusters of cluster_x x 1 x 1 blocks
/// (cudaLaunchKernelEx with cudaLaunchAttributeClusterDimension, CUDA 12.0; grid.x a multiple of
/// cluster_x) and returns the launch's error.
template <class... P, class... A>
Error launch_cluster(void (*kernel)(P...), Grid grid, Grid block, unsigned cluster_x, std::size_t smem, Stream stream,
                     A... args) {
  const detail::ClusterConfig c(grid, block, cluster_x, smem, stream);
  const Error e = cudaLaunchKernelEx(&c.config, kernel, static_cast<P>(args)...);
  const Error last = cudaGetLastError();
  return e != cudaSuccess ? e : last;
}

#else  // the host build: the SIMT emulation and the stand-in (tests/cuda/emulated_launch.cpp)

using Error = int;
/// dim3 as the launchers use it: implicit from one extent, or x, y (z).
struct Grid {
  Grid(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}  // NOLINT: implicit, like dim3
  operator ::gpubench::simt::Dim3() const { return {x, y, z}; }                     // NOLINT
  unsigned x, y, z;
};
constexpr Error kSuccess = 0;
constexpr Error kInvalidValue = 1;  // cudaErrorInvalidValue

inline Error current_device(int* device) { return host::current_device(device); }
template <class Kernel>
Error max_active_blocks(int* per_sm, Kernel, int threads, std::size_t smem) {
  return host::blocks_per_sm(per_sm, threads, smem);
}
template <class Kernel>
Error allow_dynamic_smem(Kernel, std::size_t bytes) {
  std::size_t limit = 0;
  const Error e = host::optin_smem_per_block(&limit);
  return e != kSuccess ? e : (bytes <= limit ? kSuccess : kInvalidValue);
}
inline Error optin_smem_per_block(std::size_t* bytes) { return host::optin_smem_per_block(bytes); }
template <class Kernel>
Error kernel_registers(int* registers, Kernel) {
  return host::kernel_registers(registers);
}
inline Error device_shape(int* cc_major, int* cc_minor, int* sms) {
  return host::device_shape(cc_major, cc_minor, sms);
}
template <class... P, class... A>
Error launch(void (*kernel)(P...), Grid grid, Grid block, std::size_t smem, Stream stream, A... args) {
  return host::enqueue(stream, [=] {
    ::gpubench::simt::detail::run_launch(grid, block, smem, [&] { kernel(static_cast<P>(args)...); });
  });
}
template <class Kernel>
Error max_active_clusters(int* clusters, Kernel, unsigned cluster_x, int threads, std::size_t smem) {
  return host::clusters_resident(clusters, static_cast<int>(cluster_x), threads, smem);
}
/// The emulated cluster launch: the grid must be a multiple of the cluster (as cudaLaunchKernelEx
/// requires); the blocks of each cluster run co-scheduled under the SIMT emulation.
template <class... P, class... A>
Error launch_cluster(void (*kernel)(P...), Grid grid, Grid block, unsigned cluster_x, std::size_t smem, Stream stream,
                     A... args) {
  if (cluster_x == 0 || grid.x % cluster_x != 0) return kInvalidValue;
  return host::enqueue(stream, [=] {
    ::gpubench::simt::detail::run_launch(grid, block, ::gpubench::simt::Dim3{cluster_x, 1, 1}, smem,
                                         [&] { kernel(static_cast<P>(args)...); });
  });
}

#endif

}  // namespace gpubench::kernels::rt
