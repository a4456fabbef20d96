// The PCIe additions to the host stand-in for the CUDA runtime (fake_cuda_runtime.cpp): pinned
// and mapped host memory, the two PCIe launchers, and their counters and fault switches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace fake_pcie {

/// What the fake PCIe runtime counted, and the faults to inject.
struct State {
  /// Live cudaHostAlloc allocations: host pointer -> (bytes, flags).
  std::map<void*, std::pair<std::size_t, unsigned>> host_allocs;
  std::size_t host_alloc_limit = std::size_t{1} << 30;  ///< larger cudaHostAlloc requests fail
  bool spin_times_out = false;                          ///< the spin kernel reports kSpinTimedOut
  bool corrupt_sm_copy = false;                         ///< the SM copy flips one byte
  /// Mapped memory's device address is its host address: for tests whose kernels run under the
  /// emulation and dereference it (the memory family's zero-copy row).
  bool device_view_is_host = false;
  bool device_view_fails = false;  ///< cudaHostGetDevicePointer fails (cudaErrorUnknown)
  int spin_launches = 0;
  std::vector<const void*> spin_flags;  ///< the release flag of each spin launch, in order
  int sm_copy_launches = 0;
  int stream_waits = 0;
};

/// The fake's state.
State& state();

/// The host address behind a mapped allocation's device address (or a host address itself).
void* host_of(const void* address);

/// The device address the fake hands out for mapped host memory: a different number from the
/// host address, so a kernel given the host pointer instead of the device one is caught.
constexpr std::uintptr_t kDeviceViewOffset = std::uintptr_t{1} << 44;

}  // namespace fake_pcie
