// Force-included by scripts/cuda12_api_check.py into clang 16's host-only CUDA compile of the
// family launchers. clang 16 declares __ldg but not the other cache-hint loads that CUDA's
// headers give nvcc (sm_32_intrinsics.h: __ldcg, ...); the host-only pass parses the kernels and
// generates no device code, so a declaration is all it needs. Overloads a later clang declares
// win over this template.
#pragma once

#if defined(__clang__) && defined(__CUDA__) && !defined(__CUDA_ARCH__)
template <class T>
__device__ T __ldcg(const T* p);
#endif
