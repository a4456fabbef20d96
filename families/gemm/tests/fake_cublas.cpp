// A host stand-in for the few cuBLAS entry points the GEMM workloads call (families/gemm/cuda.cpp):
// cublasGemmEx computes the product on the host - FP32 or FP16 inputs, FP32 accumulation in
// order, the column-major convention cuBLAS has - as work on the fake runtime's stream (so it is
// captured into graphs like a kernel). Switches: fake_cublas.h.
#include <cublas_v2.h>

#include <cstdint>

#include "families/gemm/tests/fake_cublas.h"
#include "kernels/half_bits.h"
#include "tests/cuda/fake_cuda_runtime.h"

struct cublasContext {
  cudaStream_t stream = nullptr;
};

namespace fake_cublas {

State& state() {
  static State s;
  return s;
}

}  // namespace fake_cublas

namespace {

float value(const void* p, cudaDataType_t type, std::size_t i) {
  if (type == CUDA_R_32F) return static_cast<const float*>(p)[i];
  return gpubench::kernels::half_bits_to_float(static_cast<const std::uint16_t*>(p)[i]);
}

// Column-major C (m x n, ld ldc) = A (m x k, lda) * B (k x n, ldb), no transposes.
void gemm(int m, int n, int k, const void* a, cudaDataType_t ta, int lda, const void* b, cudaDataType_t tb, int ldb,
          float* c, int ldc) {
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      float sum = 0.0f;
      for (int p = 0; p < k; ++p)
        sum +=
            value(a, ta, static_cast<std::size_t>(p) * lda + i) * value(b, tb, static_cast<std::size_t>(j) * ldb + p);
      c[static_cast<std::size_t>(j) * ldc + i] = sum;
    }
  }
}

}  // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t, void*, size_t) { return CUBLAS_STATUS_SUCCESS; }
const char* cublasGetStatusName(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_EXECUTION_FAILED";
}
const char* cublasGetStatusString(cublasStatus_t) { return "fake cuBLAS"; }

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void* alpha, const void* a, cudaDataType_t atype, int lda, const void* b,
                            cudaDataType_t btype, int ldb, const void* beta, void* c, cudaDataType_t ctype, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t) {
  if (transa != CUBLAS_OP_N || transb != CUBLAS_OP_N || ctype != CUDA_R_32F || compute != CUBLAS_COMPUTE_32F ||
      *static_cast<const float*>(alpha) != 1.0f || *static_cast<const float*>(beta) != 0.0f)
    return CUBLAS_STATUS_NOT_SUPPORTED;  // what the workloads never ask for
  if (fake_cublas::state().fail) return CUBLAS_STATUS_EXECUTION_FAILED;
  ++fake_cublas::state().calls;
  const int e = fake_cuda::as_kernel(handle->stream,
                                     [=] { gemm(m, n, k, a, atype, lda, b, btype, ldb, static_cast<float*>(c), ldc); });
  return e == 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // extern "C"
