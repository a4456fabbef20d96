# The oldest CUDA toolkit gpubench builds with: 12.0 (the Hopper kernel's wgmma, setmaxnreg and
# TMA need PTX ISA 8.0; cudaLaunchKernelEx and the cluster attributes came with 12.0).
# scripts/cuda12_api_check.py and scripts/cuda12_device_check.py check the code against 12.0.
set(GPUBENCH_MIN_CUDA_VERSION 12.0)

# Stops the configure with one message when `version` (CMAKE_CUDA_COMPILER_VERSION) is older
# than GPUBENCH_MIN_CUDA_VERSION, saying what to do instead. A toolkit older than that is an
# error, not a host-only build: the GPU is there and the user meant to measure it.
function(gpubench_require_cuda_version version compiler)
  if(version VERSION_LESS GPUBENCH_MIN_CUDA_VERSION)
    message(FATAL_ERROR
      "gpubench needs CUDA ${GPUBENCH_MIN_CUDA_VERSION} or newer; ${compiler} is CUDA ${version}. "
      "Point CMake at a CUDA 12 toolkit (drivers R525 to R575) or CUDA 13 (R580 and newer) with "
      "-DCMAKE_CUDA_COMPILER=<toolkit>/bin/nvcc in a fresh build folder, or build the host backend "
      "alone with -DGPUBENCH_CUDA=OFF.")
  endif()
endfunction()

# cmake -DVERSION=11.8 -P cmake/CudaToolkitVersion.cmake: the check alone (its test).
if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE AND DEFINED VERSION)
  gpubench_require_cuda_version("${VERSION}" "nvcc")
endif()
