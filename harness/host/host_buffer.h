// Host memory for the host backend's workloads: 2 MiB-aligned, huge pages where the kernel
// gives them, and a size that does not fit is a skipped case rather than a bad_alloc.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "harness/backend.h"

namespace gpubench {

/// A 2 MiB-aligned host allocation of `bytes` (rounded up to whole 2 MiB) with
/// MADV_HUGEPAGE; throws SkipCase when the memory cannot be had.
struct HostBuffer {
  void* p = nullptr;      ///< the allocation (never null once constructed)
  std::size_t bytes = 0;  ///< the size asked for
  /// Allocates `n` bytes (at least one 2 MiB page).
  explicit HostBuffer(std::size_t n) : bytes(n) {
    const std::size_t align = 2u << 20;
    const std::size_t rounded = (std::max<std::size_t>(n, 1) + align - 1) / align * align;
    p = std::aligned_alloc(align, rounded);
    if (!p) throw SkipCase("cannot allocate " + std::to_string(n) + " bytes of host memory");
    // Huge pages where the kernel allows them on request: a bandwidth sweep should measure
    // the memory system, not 4 KiB page walks (GPUs map device memory with large pages too).
    (void)madvise(p, rounded, MADV_HUGEPAGE);
  }
  ~HostBuffer() { std::free(p); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  /// The allocation as a T*.
  template <class T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

}  // namespace gpubench
