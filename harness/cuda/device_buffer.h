// Device memory for CUDA workloads: an RAII buffer, transfers to and from the host for inputs
// and verification, device-side poisoning, and the free-memory check that turns a size that
// does not fit into SkipCase before anything is allocated.
//
//   require_device_memory(3 * bytes, "gather");       // SkipCase with the reason if it won't fit
//   DeviceBuffer in(bytes), out(bytes);                // cudaMalloc; cudaFree on destruction
//   copy_to_device(in.get(), host.data(), bytes, s);   // returns after the copy completed
//   poison_device(out.get(), bytes, s);                // kPoisonU32 words, like poison_fill()
//   auto got = copy_to_host<float>(out.as<float>(), n, s);  // synchronizes `s` first
//   const float* big = fetch_to_host(out.as<float>(), n, s);  // into a reused host buffer
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/verify.h"

struct CUstream_st;

namespace gpubench {

/// An owning device allocation (cudaMalloc / cudaFree). Move-only. A zero-byte buffer holds
/// nullptr. Allocation failure throws SkipCase (via GPUBENCH_CUDA_CHECK).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  /// The device pointer (256-byte aligned, as cudaMalloc returns it).
  void* get() const { return ptr_; }
  /// The device pointer as T*.
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  /// Size in bytes.
  std::size_t bytes() const { return bytes_; }

 private:
  void reset() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Throws SkipCase("<what> needs X MiB of device memory, Y MiB free of Z MiB") when `bytes`
/// plus a safety margin exceed cudaMemGetInfo's free memory.
void require_device_memory(std::size_t bytes, const std::string& what);

/// Host -> device copy on `stream`; returns once it has completed.
void copy_to_device(void* dst, const void* src, std::size_t bytes, CUstream_st* stream);
/// Device -> host copy on `stream` after the work already queued there; returns once done.
void copy_to_host(void* dst, const void* src, std::size_t bytes, CUstream_st* stream);

/// Device results as a host vector, for the verify.h checkers.
template <class T>
std::vector<T> copy_to_host(const T* src, std::size_t n, CUstream_st* stream) {
  std::vector<T> out(n);
  copy_to_host(out.data(), src, n * sizeof(T), stream);
  return out;
}

/// Which of the two staging buffers fetch_to_host uses: a check that needs two device arrays on
/// the host at once (an output and its gather indices) takes one each.
enum class StagingSlot { first, second };
/// Device results copied into a host buffer that the process keeps and reuses (grown to the
/// largest size asked for), for checking large outputs: a fresh std::vector for each check of a
/// 1 GiB output is zeroed and faulted in page by page, which made verification most of a DRAM
/// row's cost outside its timed samples. The pointer is valid until the next fetch_to_host into
/// the same slot.
const void* fetch_to_host(const void* src, std::size_t bytes, CUstream_st* stream,
                          StagingSlot slot = StagingSlot::first);
template <class T>
const T* fetch_to_host(const T* src, std::size_t n, CUstream_st* stream, StagingSlot slot = StagingSlot::first) {
  return static_cast<const T*>(fetch_to_host(static_cast<const void*>(src), n * sizeof(T), stream, slot));
}

/// Fills dst[0..bytes) on the device with the seeded words of `in` (kernels::launch_seeded_fill),
/// the inputs harness/verify.h's SeededWords checks recompute on the host, so no host copy of
/// them is made or kept; returns once done. `dst` 4-byte aligned.
void fill_seeded_device(void* dst, std::size_t bytes, SeededWords in, int sm_count, CUstream_st* stream);
/// The same with the seeded floats of `in` (SeededFloats), n of them.
void fill_seeded_device(float* dst, std::size_t n, SeededFloats in, int sm_count, CUstream_st* stream);

/// Fills device memory with the kPoisonU32 pattern of poison_fill() (one small host->device
/// copy, then device-to-device doubling); returns once done.
void poison_device(void* dst, std::size_t bytes, CUstream_st* stream);

}  // namespace gpubench
