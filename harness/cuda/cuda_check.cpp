#include "harness/cuda/cuda_check.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <stdexcept>

#include "harness/backend.h"

namespace gpubench {

bool is_sticky_cuda_error(int code) {
  // The errors whose documentation in driver_types.h (CUDA 12 and 13) says the process is
  // left in an inconsistent state, plus uncorrectable ECC/NVLink errors (hardware faults).
  // Codes added during CUDA 11.x/12.x are written as numbers so the file compiles with every
  // CUDA 12 toolkit.
  switch (code) {
    case 226:  // cudaErrorContained
    case 721:  // cudaErrorTensorMemoryLeak
    case 810:  // cudaErrorMpsClientTerminated
    case 911:  // cudaErrorExternalDevice
      return true;
    default: break;
  }
  switch (static_cast<cudaError_t>(code)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable: return true;
    default: return false;
  }
}

std::string cuda_error_message(int code, const char* call, const char* file, int line) {
  const auto e = static_cast<cudaError_t>(code);
  std::string msg = cudaGetErrorName(e);
  msg += " (" + std::to_string(code) + ": " + cudaGetErrorString(e) + ") in `";
  msg += call ? call : "?";
  msg += "` at ";
  msg += file ? file : "?";
  msg += ":" + std::to_string(line);
  return msg;
}

void check_cuda(int code, const char* call, const char* file, int line) {
  if (code == 0) return;
  std::string msg = cuda_error_message(code, call, file, line);
  if (is_sticky_cuda_error(code)) throw DeviceLost(msg);
  (void)cudaGetLastError();  // non-sticky: clear it so the next launch check starts clean
  if (code == static_cast<int>(cudaErrorMemoryAllocation)) throw SkipCase("out of device memory: " + msg);
  throw std::runtime_error(msg);
}

void check_cuda_noexcept(int code, const char* call, const char* file, int line) noexcept {
  if (code == 0 || is_sticky_cuda_error(code)) return;
  (void)cudaGetLastError();
  try {
    std::fprintf(stderr, "gpubench: %s\n", cuda_error_message(code, call, file, line).c_str());
  } catch (...) {
    // deliberately swallowed: noexcept, and a message that cannot be built is only not printed
  }
}

}  // namespace gpubench
