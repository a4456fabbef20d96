// The stand-in behind the host build of the real launchers (kernels/launch.cuh): a one-device
// "runtime" in host memory, just enough for gpubench_kernel_check's checks to run every
// launcher's own code - argument rules, grid sizing, shared-memory opt-in, dispatch - with the
// kernels under the SIMT emulation. Launches run at once, in order (the checks use the null
// stream and synchronize after each launch). Device memory is host memory; mapped pinned memory
// has the same address on both sides (as with unified virtual addressing on a GPU).
//
// The device it pretends to be: compute capability 9.0, 4 SMs, 2 resident blocks per SM whatever the kernel (so grids
// are small and grid-stride loops wrap), as many resident clusters as those blocks make, 227 KiB of opt-in shared
// memory per block (an H100).
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <functional>

#include "kernels/launch_host.h"

namespace {

constexpr int kSmCount = 4;
constexpr int kBlocksPerSm = 2;
constexpr std::size_t kOptinSmemBytes = 227 * 1024;

cudaError_t g_last = cudaSuccess;

cudaError_t record(cudaError_t e) {
  if (e != cudaSuccess) g_last = e;
  return e;
}

}  // namespace

namespace gpubench::kernels::rt::host {

int current_device(int* device) {
  *device = 0;
  return 0;
}

int blocks_per_sm(int* per_sm, int threads, std::size_t smem) {
  if (threads < 1 || threads > 1024 || smem > kOptinSmemBytes) return record(cudaErrorInvalidValue);
  *per_sm = kBlocksPerSm;
  return 0;
}

int clusters_resident(int* clusters, int cluster, int threads, std::size_t smem) {
  int per_sm = 0;
  const int e = blocks_per_sm(&per_sm, threads, smem);
  if (e != 0) return e;
  if (cluster < 1 || cluster > 8) return record(cudaErrorInvalidValue);  // 8: the portable cluster size limit
  *clusters = kSmCount * per_sm / cluster;
  return 0;
}

int optin_smem_per_block(std::size_t* bytes) {
  *bytes = kOptinSmemBytes;
  return 0;
}

int kernel_registers(int* registers) {
  *registers = 0;  // the emulation's kernels hold no registers: unknown
  return 0;
}

int device_shape(int* cc_major, int* cc_minor, int* sms) {
  cudaDeviceGetAttribute(cc_major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(cc_minor, cudaDevAttrComputeCapabilityMinor, 0);
  return cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, 0);
}

int enqueue(CUstream_st* /*stream*/, std::function<void()> work) {
  work();
  return 0;
}

}  // namespace gpubench::kernels::rt::host

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int /*device*/) {
  switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = kSmCount; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; return cudaSuccess;
    default: return record(cudaErrorInvalidValue);
  }
}
cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  return *p ? cudaSuccess : record(cudaErrorMemoryAllocation);
}
cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int /*flags*/) { return cudaMalloc(p, bytes); }
cudaError_t cudaFreeHost(void* p) { return cudaFree(p); }
cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned int /*flags*/) {
  *device = host;
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind /*kind*/) {
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaGetLastError() {
  const cudaError_t e = g_last;
  g_last = cudaSuccess;
  return e;
}
const char* cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaErrorEmulated"; }
const char* cudaGetErrorString(cudaError_t) { return "emulated runtime error"; }

}  // extern "C"
