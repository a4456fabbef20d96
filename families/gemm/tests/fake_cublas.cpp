// A host stand-in for the few cuBLAS and cuBLASLt entry points the GEMM workloads call
// (families/gemm/cuda.cpp): cublasGemmEx and cublasLtMatmul compute the product on the host - FP32,
// FP16, BF16 or FP8 E4M3 inputs, FP32 accumulation in order, the column-major convention cuBLAS
// has - as work on the fake runtime's stream (so it is captured into graphs like a kernel).
// cuBLASLt's FP8 rules are enforced as its documentation states them, so a workload that asks for
// what the real library refuses fails here too: FP8 only as "TN" (A transposed, B not), FP32
// compute and scale type, 16-byte aligned leading dimensions, C and D of one of the listed types
// (FP32 among them), an algorithm from the heuristic, and a workspace no smaller than it needs.
// Switches: fake_cublas.h.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <cstring>
#include <map>

#include "families/gemm/low_precision.h"
#include "families/gemm/tests/fake_cublas.h"
#include "kernels/half_bits.h"
#include "tests/cuda/fake_cuda_runtime.h"

struct cublasContext {
  cudaStream_t stream = nullptr;
  bool own_workspace = false;  // cublasSetWorkspace since the last cublasSetStream
};

namespace fake_cublas {

State& state() {
  static State s;
  return s;
}

}  // namespace fake_cublas

namespace {

using gpubench::kernels::bf16_bits_to_float;
using gpubench::kernels::e4m3_bits_to_float;
using gpubench::kernels::half_bits_to_float;

float value(const void* p, cudaDataType_t type, std::size_t i) {
  switch (type) {
    case CUDA_R_32F: return static_cast<const float*>(p)[i];
    case CUDA_R_16F: return half_bits_to_float(static_cast<const std::uint16_t*>(p)[i]);
    case CUDA_R_16BF: return bf16_bits_to_float(static_cast<const std::uint16_t*>(p)[i]);
    case CUDA_R_8F_E4M3: return e4m3_bits_to_float(static_cast<const std::uint8_t*>(p)[i]);
    default: return 0.0f;
  }
}

bool input_type(cudaDataType_t t) {
  return t == CUDA_R_32F || t == CUDA_R_16F || t == CUDA_R_16BF || t == CUDA_R_8F_E4M3;
}

// Column-major C (m x n, ld ldc) = scale x op(A) (m x k) * op(B) (k x n), op = transpose where
// asked: A stored m x k (lda) or, transposed, k x m; B stored k x n (ldb) or n x k.
void gemm(int m, int n, int k, const void* a, cudaDataType_t ta, int lda, bool trans_a, const void* b,
          cudaDataType_t tb, int ldb, bool trans_b, float scale, float* c, int ldc) {
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      float sum = 0.0f;
      for (int p = 0; p < k; ++p) {
        const std::size_t ai = trans_a ? static_cast<std::size_t>(i) * lda + p : static_cast<std::size_t>(p) * lda + i;
        const std::size_t bi = trans_b ? static_cast<std::size_t>(p) * ldb + j : static_cast<std::size_t>(j) * ldb + p;
        sum += value(a, ta, ai) * value(b, tb, bi);
      }
      c[static_cast<std::size_t>(j) * ldc + i] = scale * sum;
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
// As documented: setting the stream puts the handle back on cuBLAS's default workspace pool.
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  handle->stream = stream;
  handle->own_workspace = false;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes) {
  handle->own_workspace = workspace != nullptr && bytes > 0;
  return CUBLAS_STATUS_SUCCESS;
}
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
  if (atype != btype || atype == CUDA_R_8F_E4M3 || !input_type(atype)) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (fake_cublas::state().fail) return CUBLAS_STATUS_EXECUTION_FAILED;
  ++fake_cublas::state().calls;
  if (!handle->own_workspace) ++fake_cublas::state().default_pool_calls;
  const int e = fake_cuda::as_kernel(handle->stream, [=] {
    gemm(m, n, k, a, atype, lda, false, b, btype, ldb, false, 1.0f, static_cast<float*>(c), ldc);
  });
  return e == 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // extern "C"

// ---- cuBLASLt ----

struct cublasLtContext {};

namespace {

struct FakeDesc {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale_type = CUDA_R_32F;
  std::int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  const float* a_scale = nullptr;  // device pointers (host memory in the fake runtime)
  const float* b_scale = nullptr;
  std::int8_t fast_accum = 0;
};
struct FakeLayout {
  cudaDataType_t type = CUDA_R_32F;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
};
// What each opaque object the fake handed out stands for.
std::map<const void*, FakeDesc>& descs() {
  static std::map<const void*, FakeDesc> m;
  return m;
}
std::map<const void*, FakeLayout>& layouts() {
  static std::map<const void*, FakeLayout> m;
  return m;
}
std::map<const void*, std::uint64_t>& preferences() {  // -> max workspace bytes
  static std::map<const void*, std::uint64_t> m;
  return m;
}
// The workspace every algorithm the fake returns claims to need (as the real heuristic's
// workspaceSize): a matmul given less fails as the real one would.
constexpr std::size_t kFakeAlgoWorkspace = 1u << 20;

std::size_t type_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_32F: return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    case CUDA_R_8F_E4M3: return 1;
    default: return 0;
  }
}

template <class T>
bool set_attr(T& field, const void* buf, std::size_t size) {
  if (buf == nullptr || size != sizeof(T)) return false;
  std::memcpy(&field, buf, sizeof(T));
  return true;
}

// Whether cuBLASLt takes this problem, by the rules of the documentation the workloads follow.
cublasStatus_t lt_supported(const FakeDesc& d, const FakeLayout& a, const FakeLayout& b, const FakeLayout& c,
                            const FakeLayout& dd) {
  if (d.compute != CUBLAS_COMPUTE_32F || d.scale_type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (!input_type(a.type) || a.type != b.type) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (c.type != dd.type || c.rows != dd.rows || c.cols != dd.cols || c.ld != dd.ld) return CUBLAS_STATUS_NOT_SUPPORTED;
  // op(A) is m x k, op(B) k x n, C and D m x n.
  const std::uint64_t m = d.transa == CUBLAS_OP_T ? a.cols : a.rows;
  const std::uint64_t ka = d.transa == CUBLAS_OP_T ? a.rows : a.cols;
  const std::uint64_t kb = d.transb == CUBLAS_OP_T ? b.cols : b.rows;
  const std::uint64_t n = d.transb == CUBLAS_OP_T ? b.rows : b.cols;
  if (ka != kb || c.rows != m || c.cols != n) return CUBLAS_STATUS_INVALID_VALUE;
  for (const FakeLayout* l : {&a, &b, &c}) {
    if (l->ld < static_cast<std::int64_t>(l->rows)) return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (a.type == CUDA_R_8F_E4M3) {
    if (d.transa != CUBLAS_OP_T || d.transb != CUBLAS_OP_N) return CUBLAS_STATUS_NOT_SUPPORTED;  // "TN" only
    // C/D types listed for E4M3 x E4M3: BF16, FP16 or FP32 (FP8 D not modelled here).
    if (c.type != CUDA_R_32F && c.type != CUDA_R_16BF && c.type != CUDA_R_16F) return CUBLAS_STATUS_NOT_SUPPORTED;
    for (const FakeLayout* l : {&a, &b, &c}) {
      if ((static_cast<std::uint64_t>(l->ld) * type_bytes(l->type)) % 16 != 0 || (l->rows * type_bytes(l->type)) % 16)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
  } else if (c.type != CUDA_R_32F) {
    return CUBLAS_STATUS_NOT_SUPPORTED;  // what the workloads never ask for
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  *handle = new cublasLtContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
const char* cublasLtGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    default: return "CUBLAS_STATUS_EXECUTION_FAILED";
  }
}
const char* cublasLtGetStatusString(cublasStatus_t) { return "fake cuBLASLt"; }

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale_type) {
  *desc = new cublasLtMatmulDescOpaque_t{};
  FakeDesc d;
  d.compute = compute;
  d.scale_type = scale_type;
  descs()[*desc] = d;
  ++fake_cublas::state().lt_live_objects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  if (descs().erase(desc) == 0) return CUBLAS_STATUS_INVALID_VALUE;
  delete desc;
  --fake_cublas::state().lt_live_objects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
  auto it = descs().find(desc);
  if (it == descs().end()) return CUBLAS_STATUS_INVALID_VALUE;
  FakeDesc& d = it->second;
  bool ok = false;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA: ok = set_attr(d.transa, buf, size); break;
    case CUBLASLT_MATMUL_DESC_TRANSB: ok = set_attr(d.transb, buf, size); break;
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER: ok = set_attr(d.a_scale, buf, size); break;
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER: ok = set_attr(d.b_scale, buf, size); break;
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM: ok = set_attr(d.fast_accum, buf, size); break;
    default: return CUBLAS_STATUS_NOT_SUPPORTED;  // what the workloads never set
  }
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  *layout = new cublasLtMatrixLayoutOpaque_t{};
  layouts()[*layout] = FakeLayout{type, rows, cols, ld};
  ++fake_cublas::state().lt_live_objects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  if (layouts().erase(layout) == 0) return CUBLAS_STATUS_INVALID_VALUE;
  delete layout;
  --fake_cublas::state().lt_live_objects;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  *pref = new cublasLtMatmulPreferenceOpaque_t{};
  preferences()[*pref] = 0;
  ++fake_cublas::state().lt_live_objects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  if (preferences().erase(pref) == 0) return CUBLAS_STATUS_INVALID_VALUE;
  delete pref;
  --fake_cublas::state().lt_live_objects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t size) {
  auto it = preferences().find(pref);
  if (it == preferences().end() || attr != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) return CUBLAS_STATUS_INVALID_VALUE;
  return set_attr(it->second, buf, size) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                                              cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                                              cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
  ++fake_cublas::state().lt_heuristic_calls;
  if (requested <= 0) return CUBLAS_STATUS_INVALID_VALUE;
  if (!descs().count(desc) || !layouts().count(a) || !layouts().count(b) || !layouts().count(c) ||
      !layouts().count(d) || !preferences().count(pref))
    return CUBLAS_STATUS_INVALID_VALUE;
  *returned = 0;
  if (fake_cublas::state().lt_no_algo) return CUBLAS_STATUS_NOT_SUPPORTED;
  const cublasStatus_t st = lt_supported(descs()[desc], layouts()[a], layouts()[b], layouts()[c], layouts()[d]);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  if (preferences()[pref] < kFakeAlgoWorkspace) return CUBLAS_STATUS_SUCCESS;  // none fits: zero results
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].algo.data[0] = 0x5eed;  // what a later cublasLtMatmul checks it was given
  results[0].workspaceSize = kFakeAlgoWorkspace;
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t desc, const void* alpha, const void* a,
                              cublasLtMatrixLayout_t adesc, const void* b, cublasLtMatrixLayout_t bdesc,
                              const void* beta, const void* c, cublasLtMatrixLayout_t cdesc, void* d,
                              cublasLtMatrixLayout_t ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
                              size_t workspace_bytes, cudaStream_t stream) {
  if (!descs().count(desc) || !layouts().count(adesc) || !layouts().count(bdesc) || !layouts().count(cdesc) ||
      !layouts().count(ddesc))
    return CUBLAS_STATUS_INVALID_VALUE;
  const FakeDesc dsc = descs()[desc];
  const FakeLayout la = layouts()[adesc], lb = layouts()[bdesc], lc = layouts()[cdesc];
  const cublasStatus_t st = lt_supported(dsc, la, lb, lc, layouts()[ddesc]);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  // The workloads run an algorithm from the heuristic with its workspace (never one chosen
  // inside the call, which could allocate during a graph capture), alpha 1 and beta 0 with
  // C = D (C is never read: it holds the poison).
  if (algo == nullptr || algo->data[0] != 0x5eed || workspace == nullptr || workspace_bytes < kFakeAlgoWorkspace)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (*static_cast<const float*>(alpha) != 1.0f || *static_cast<const float*>(beta) != 0.0f || c != d ||
      lc.type != CUDA_R_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED;  // what the workloads never ask for
  if (fake_cublas::state().fail) return CUBLAS_STATUS_EXECUTION_FAILED;
  ++fake_cublas::state().lt_calls;
  const int m = static_cast<int>(lc.rows), n = static_cast<int>(lc.cols);
  const int k = static_cast<int>(dsc.transa == CUBLAS_OP_T ? la.rows : la.cols);
  const int e = fake_cuda::as_kernel(stream, [=] {
    // The scales are read when the work runs, as the device reads them.
    const float scale = (dsc.a_scale ? *dsc.a_scale : 1.0f) * (dsc.b_scale ? *dsc.b_scale : 1.0f);
    gemm(m, n, k, a, la.type, static_cast<int>(la.ld), dsc.transa == CUBLAS_OP_T, b, lb.type, static_cast<int>(lb.ld),
         dsc.transb == CUBLAS_OP_T, scale, static_cast<float*>(d), static_cast<int>(lc.ld));
  });
  return e == 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // extern "C"
