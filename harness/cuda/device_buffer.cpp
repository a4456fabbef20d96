#include "harness/cuda/device_buffer.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "families/global_memory/global_memory.h"
#include "harness/backend.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/timing.h"
#include "harness/verify.h"

namespace gpubench {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) GPUBENCH_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() { reset(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reset() noexcept {
  if (ptr_ && !device_hang_seen()) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaFree(ptr_));  // a hung device: left
  ptr_ = nullptr;
  bytes_ = 0;
}

void require_device_memory(std::size_t bytes, const std::string& what) {
  std::size_t free_bytes = 0, total_bytes = 0;
  GPUBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Leave room for the context's own growth (library workspaces, graph uploads).
  constexpr std::size_t kMarginBytes = std::size_t{256} << 20;
  if (bytes + kMarginBytes > free_bytes) {
    constexpr std::size_t MiB = std::size_t{1} << 20;
    throw SkipCase(what + " needs " + std::to_string((bytes + MiB - 1) / MiB) + " MiB of device memory, " +
                   std::to_string(free_bytes / MiB) + " MiB free of " + std::to_string(total_bytes / MiB) + " MiB");
  }
}

void copy_to_device(void* dst, const void* src, std::size_t bytes, CUstream_st* stream) {
  if (bytes == 0) return;
  GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
  wait_for_stream(stream, "a copy to the device");  // `src` may be freed right after
}

void copy_to_host(void* dst, const void* src, std::size_t bytes, CUstream_st* stream) {
  if (bytes == 0) {
    wait_for_stream(stream, "the stream before an empty copy to the host");
    return;
  }
  // Into pageable memory the copy returns only once it is done, after the work queued before it:
  // that work first, within the limit, so only the copy itself is waited for without one.
  wait_for_stream(stream, "the work before a copy to the host");
  GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
  wait_for_stream(stream, "a copy to the host");
}

const void* fetch_to_host(const void* src, std::size_t bytes, CUstream_st* stream, StagingSlot slot) {
  struct Staging {
    std::unique_ptr<unsigned char[]> data;
    std::size_t bytes = 0;
  };
  static Staging slots[2];  // verification runs on the benchmark thread only
  Staging& staging = slots[slot == StagingSlot::second ? 1 : 0];
  if (bytes > staging.bytes) {
    staging.data.reset();  // free first: the old and the new buffer need not coexist
    staging.data.reset(new unsigned char[bytes]);
    staging.bytes = bytes;
  }
  copy_to_host(staging.data.get(), src, bytes, stream);
  return staging.data.get();
}

void fill_seeded_device(void* dst, std::size_t bytes, SeededWords in, int sm_count, CUstream_st* stream) {
  if (bytes == 0) return;
  GPUBENCH_CUDA_CHECK(kernels::launch_seeded_fill(dst, bytes, in.seed, kernels::SeededData::words, sm_count, stream));
  wait_for_stream(stream, "a seeded fill");
}

void fill_seeded_device(float* dst, std::size_t n, SeededFloats in, int sm_count, CUstream_st* stream) {
  if (n == 0) return;
  GPUBENCH_CUDA_CHECK(
      kernels::launch_seeded_fill(dst, n * sizeof(float), in.seed, kernels::SeededData::floats, sm_count, stream));
  wait_for_stream(stream, "a seeded fill");
}

void poison_device(void* dst, std::size_t bytes, CUstream_st* stream) {
  if (bytes == 0) return;
  // A 1 MiB seed (a multiple of 4 bytes, so every doubling keeps the word phase), then copies
  // of the poisoned prefix onto the rest: log2(bytes / 1 MiB) device-to-device copies instead
  // of a host buffer as large as the output.
  constexpr std::size_t kSeedBytes = std::size_t{1} << 20;
  static const std::vector<unsigned char> seed = [] {
    std::vector<unsigned char> v(kSeedBytes);
    poison_fill(v.data(), v.size());
    return v;
  }();
  auto* d = static_cast<unsigned char*>(dst);
  std::size_t done = std::min(bytes, kSeedBytes);
  GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(d, seed.data(), done, cudaMemcpyHostToDevice, stream));
  while (done < bytes) {
    const std::size_t n = std::min(done, bytes - done);
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(d + done, d, n, cudaMemcpyDeviceToDevice, stream));
    done += n;
  }
  wait_for_stream(stream, "poisoning an output");
}

}  // namespace gpubench
