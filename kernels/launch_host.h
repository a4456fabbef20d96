// The host stand-in's side of kernels/launch.cuh: what the host build of a launcher asks it
// (defined in tests/cuda/emulated_launch.cpp, or over the fake runtime in
// tests/cuda/fake_launch_runtime.cpp). Plain C++, no CUDA or SIMT header, so the stand-in can
// include the CUDA runtime API beside it.
#pragma once

#include <cstddef>
#include <functional>

struct CUstream_st;

namespace gpubench::kernels::rt::host {

/// cudaGetDevice.
int current_device(int* device);
/// cudaOccupancyMaxActiveBlocksPerMultiprocessor for a kernel of `threads` threads and `smem`
/// bytes of dynamic shared memory.
int blocks_per_sm(int* per_sm, int threads, std::size_t smem);
/// cudaOccupancyMaxActiveClusters for clusters of `cluster` blocks of `threads` threads and `smem`
/// bytes of dynamic shared memory.
int clusters_resident(int* clusters, int cluster, int threads, std::size_t smem);
/// cudaDevAttrMaxSharedMemoryPerBlockOptin.
int optin_smem_per_block(std::size_t* bytes);
/// cudaFuncGetAttributes' numRegs, the same for every kernel of the stand-in (0: it has none to say).
int kernel_registers(int* registers);
/// cudaDevAttrComputeCapabilityMajor/Minor and cudaDevAttrMultiProcessorCount.
int device_shape(int* cc_major, int* cc_minor, int* sms);
/// Runs `work` (one launch, under the SIMT emulation) on `stream`, in stream order; returns the
/// launch's error.
int enqueue(CUstream_st* stream, std::function<void()> work);

}  // namespace gpubench::kernels::rt::host
