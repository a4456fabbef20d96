# CUDA: optional. GPUBENCH_CUDA=AUTO enables it when a toolkit is found; ON requires it.
# Architectures come from one variable: CMAKE_CUDA_ARCHITECTURES if the user set it, `native`
# when a GPU is visible, otherwise an explicit list that covers A100 (sm_80) and H100 (sm_90).
include(CheckLanguage)
set(GPUBENCH_HAVE_CUDA OFF)
if(NOT GPUBENCH_CUDA STREQUAL "OFF")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(GPUBENCH_HAVE_CUDA ON)
  elseif(GPUBENCH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GPUBENCH_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
  else()
    message(STATUS "No CUDA toolkit: building the host backend only")
  endif()
endif()

if(GPUBENCH_HAVE_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(_gpu_visible OFF)
    find_program(NVIDIA_SMI nvidia-smi)
    if(NVIDIA_SMI)
      execute_process(COMMAND ${NVIDIA_SMI} -L RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_QUIET)
      if(_rc EQUAL 0 AND _out MATCHES "GPU 0")
        set(_gpu_visible ON)
      endif()
    endif()
    if(_gpu_visible)
      set(CMAKE_CUDA_ARCHITECTURES native)
    else()
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
  endif()
  message(STATUS "CUDA architectures: ${CMAKE_CUDA_ARCHITECTURES}")
  # One CUDA runtime in the process: the shared one that CUDA::cudart names too (nvcc's
  # default would add the static runtime beside it).
  if(NOT DEFINED CMAKE_CUDA_RUNTIME_LIBRARY)
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  endif()
  enable_language(CUDA)
  include(CudaToolkitVersion)
  gpubench_require_cuda_version("${CMAKE_CUDA_COMPILER_VERSION}" "${CMAKE_CUDA_COMPILER}")
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)

  # Device code: every nvcc warning is an error, and ptxas spills or local-memory use fail the
  # build (a spilling bandwidth kernel is a slow kernel).
  add_library(gpubench_cuda_warnings INTERFACE)
  target_compile_options(gpubench_cuda_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror
      -Xptxas=-warn-spills,-warn-lmem-usage,-Werror --expt-relaxed-constexpr>)
endif()
