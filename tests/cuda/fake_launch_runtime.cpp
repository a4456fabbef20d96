// kernels/launch.cuh's host side over the fake CUDA runtime: a family's real launchers (a host
// copy of its .cu file, see gpubench_host_launchers in tests/CMakeLists.txt) enqueue their
// kernels, run under the SIMT emulation, on the fake runtime's streams like any fake kernel
// (recorded while a stream captures a graph, replayed by the graph). The device: 2 resident
// blocks per SM for any kernel (and as many resident clusters as they make), 227 KiB of opt-in
// shared memory per block (an H100).
#include <utility>

#include "kernels/launch_host.h"
#include "tests/cuda/fake_cuda_runtime.h"

namespace gpubench::kernels::rt::host {

int current_device(int* device) {
  *device = 0;
  return 0;
}

int blocks_per_sm(int* per_sm, int threads, std::size_t smem) {
  if (threads < 1 || threads > 1024 || smem > std::size_t{227} * 1024) return cudaErrorInvalidValue;
  *per_sm = 2;
  return 0;
}

int clusters_resident(int* clusters, int cluster, int threads, std::size_t smem) {
  int per_sm = 0;
  const int e = blocks_per_sm(&per_sm, threads, smem);
  if (e != 0) return e;
  if (cluster < 1 || cluster > 8) return cudaErrorInvalidValue;  // 8: the portable cluster size limit
  int sms = 0;
  const cudaError_t a = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  if (a != cudaSuccess) return a;
  *clusters = sms * per_sm / cluster;
  return 0;
}

int optin_smem_per_block(std::size_t* bytes) {
  *bytes = std::size_t{227} * 1024;
  return 0;
}

int kernel_registers(int* registers) {
  *registers = fake_cuda::state().kernel_registers;
  return 0;
}

int device_shape(int* cc_major, int* cc_minor, int* sms) {
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(cc_major, cudaDevAttrComputeCapabilityMajor, device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(cc_minor, cudaDevAttrComputeCapabilityMinor, device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
  return e;
}

int enqueue(CUstream_st* stream, std::function<void()> work) { return fake_cuda::as_kernel(stream, std::move(work)); }

}  // namespace gpubench::kernels::rt::host
