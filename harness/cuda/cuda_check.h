// Error checking for every CUDA runtime call and kernel launch in the CUDA backend and the
// CUDA workloads. One macro, one message format, and one rule for what an error means:
//
//   GPUBENCH_CUDA_CHECK(cudaMalloc(&p, bytes));                // runtime call
//   GPUBENCH_CUDA_CHECK(kernels::launch_copy(a, b, n, sms, s)); // launcher returning int
//
// - a sticky error (illegal address, launch failure, hardware exception ...) leaves the CUDA
//   context unusable: DeviceLost, so the runner reports it once and skips the rest;
// - cudaErrorMemoryAllocation: SkipCase (a size that does not fit is skipped, not a failure);
// - anything else: std::runtime_error, which fails this one benchmark.
// The message names the error, the failing call and file:line.
#pragma once

#include <string>

namespace gpubench {

/// True when `code` (a cudaError_t) leaves the process's CUDA context unusable: the CUDA
/// headers document these as "any further CUDA work will return the same error".
bool is_sticky_cuda_error(int code);

/// "cudaErrorIllegalAddress (700: an illegal memory access was encountered) in
/// `cudaEventSynchronize(stop)` at harness/cuda/timing.cpp:42".
std::string cuda_error_message(int code, const char* call, const char* file, int line);

/// Throws as described at the top of this file when `code` != 0 (cudaSuccess). For
/// non-sticky errors it also clears the runtime's last-error slot, so a later
/// cudaGetLastError() (which launchers use) does not report the same error again.
void check_cuda(int code, const char* call, const char* file, int line);

/// For destructors and cleanup paths: never throws; prints non-sticky errors to stderr (a
/// sticky error was already reported by the call that hit it).
void check_cuda_noexcept(int code, const char* call, const char* file, int line) noexcept;

}  // namespace gpubench

/// Checks a cudaError_t (or a launcher's int) and throws DeviceLost / SkipCase / runtime_error.
#define GPUBENCH_CUDA_CHECK(call) ::gpubench::check_cuda(static_cast<int>(call), #call, __FILE__, __LINE__)
/// The never-throwing twin of GPUBENCH_CUDA_CHECK, for destructors.
#define GPUBENCH_CUDA_CHECK_NOEXCEPT(call) \
  ::gpubench::check_cuda_noexcept(static_cast<int>(call), #call, __FILE__, __LINE__)
