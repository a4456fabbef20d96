// The GEMM family on a CUDA device: compute/sgemm/{kernel,naive,cublas},
// compute/hgemm/{kernel,wmma,wgmma,wgmma_unclustered,wgmma_direct_store,cublas},
// compute/bf16gemm/{wgmma,cublas} and compute/fp8gemm/cublaslt (wgmma: the Hopper kernel in 2 x 1
// clusters sharing B by TMA multicast, C stored through shared memory by the TMA;
// wgmma_unclustered: the same kernel one block per tile; wgmma_direct_store: clusters, C stored
// by every thread itself; compute capability 9.0 only; rows
// from families/gemm/cases.cpp, kernels from families/gemm/gemm.h). C = A * B, row-major, FP32 C;
// FP16 rows take binary16 A and B and accumulate in FP32 (cuBLAS: cublasGemmEx with
// CUBLAS_COMPUTE_32F, so no TF32 shortcut for the FP32 reference and the same FP32 accumulation as
// the kernels). BF16: cublasGemmEx on CUDA_R_16BF inputs, CUBLAS_COMPUTE_32F. FP8: cuBLASLt
// (cublasGemmEx has no FP8 path) on E4M3 inputs, FP32 compute, scale factors 1 and FP32 C; see
// Fp8LtGemm for the layout cuBLASLt's FP8 kernels require.
//
// Inputs are seeded uniform [-1, 1) values (zeros replaced; BF16 rounded to nearest even, FP8
// on the exact grid k/8 of families/gemm/low_precision.h), C is poisoned before the timed runs
// and verified after them against the double-precision reference of families/gemm/reference.h:
// every element at small sizes, at large ones the first/last two and 12 seeded rows and columns
// in full, with a tolerance that scales with sqrt(K) and FP32 rounding. The hand-written
// kernels also report pct_of_cublas: cuBLAS timed right after each repetition, for as long as its
// samples ran, on the same inputs (paired_cublas_seconds), as 100 x cuBLAS time / kernel time.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "families/gemm/gemm.h"
#include "families/gemm/low_precision.h"
#include "families/gemm/reference.h"
#include "harness/cuda/cuda_backend.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/cuda_workload.h"
#include "harness/cuda/device_buffer.h"
#include "harness/cuda/timing.h"
#include "harness/family.h"
#include "harness/host/parallel.h"
#include "harness/runner.h"
#include "harness/verify.h"
#include "kernels/half_bits.h"

GPUBENCH_FAMILY(gemm)

namespace gpubench {

namespace {

/// Input precision of a GEMM row; FP32 accumulation and FP32 C throughout. Each precision's
/// library reference (pct_of_cublas of a hand-written kernel of that precision) is cuBLAS's
/// cublasGemmEx on the same inputs: FP32, FP16 or BF16 (a Hopper BF16 kernel is compared with
/// cuBLAS BF16, not FP16); FP8 has only the cuBLASLt row itself.
enum class Precision { fp32, fp16, bf16, fp8 };
enum class GemmVariant { kernel, naive, wmma, wgmma, wgmma_unclustered, wgmma_direct_store, cublas, cublaslt };

/// The Hopper kernel's variants (sm_90a code: clusters of 2 or single blocks, TMA or direct stores).
constexpr bool is_wgmma(GemmVariant v) {
  return v == GemmVariant::wgmma || v == GemmVariant::wgmma_unclustered || v == GemmVariant::wgmma_direct_store;
}

/// The host type of an input element of each precision.
template <Precision P>
using InputOf =
    std::conditional_t<P == Precision::fp32, float,
                       std::conditional_t<P == Precision::fp16, std::uint16_t,
                                          std::conditional_t<P == Precision::bf16, kernels::Bf16, kernels::E4m3>>>;

constexpr bool is_library(GemmVariant v) { return v == GemmVariant::cublas || v == GemmVariant::cublaslt; }

// Full verification up to this many multiply-adds (512^3 = 2^27 runs in well under a second).
constexpr double kFullCheckMacs = 268435456.0;  // 2^28
// Seeded rows and columns checked in full beyond that (plus the first and last two of each).
constexpr int kSampledLines = 12;
// cuBLAS workspace per handle, set explicitly so graph capture never makes cuBLAS allocate.
constexpr std::size_t kCublasWorkspaceBytes = 32u << 20;

int dim_arg(const BenchCase& c, const char* key) {
  const double v = c.arg(key);
  if (!(v >= 1) || v > std::numeric_limits<int>::max() || v != std::floor(v)) {
    throw SkipCase(std::string("argument ") + key + " is not a positive integer: " + std::to_string(v));
  }
  return static_cast<int>(v);
}

std::string cublas_error(cublasStatus_t st, const char* what) {
  return std::string("cuBLAS ") + what + ": " + cublasGetStatusName(st) + " (" + cublasGetStatusString(st) + ")";
}

// A library handle (cuBLAS or cuBLASLt) and the workspace it works in.
template <class Handle>
struct LibraryContext {
  Handle handle = nullptr;
  void* workspace = nullptr;  ///< kCublasWorkspaceBytes of device memory
};

// One handle per library and device, created on first use with its workspace and kept for the
// process: destroying it from a static destructor could run after the CUDA runtime has shut
// down. The workspace is allocated here, never during a GEMM, so the timed calls can be captured
// into a graph. `create`, `destroy`: cublasCreate/cublasDestroy or the cuBLASLt pair; `error`
// words a failure of `create_name`.
template <class Handle>
const LibraryContext<Handle>& library_context(int device, cublasStatus_t (*create)(Handle*),
                                              cublasStatus_t (*destroy)(Handle),
                                              std::string (*error)(cublasStatus_t, const char*),
                                              const char* create_name) {
  static std::mutex mu;
  static std::map<int, LibraryContext<Handle>> contexts;
  std::lock_guard<std::mutex> lock(mu);
  auto it = contexts.find(device);
  if (it != contexts.end()) return it->second;
  LibraryContext<Handle> ctx;
  const cublasStatus_t st = create(&ctx.handle);
  if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(error(st, create_name));
  const cudaError_t e = cudaMalloc(&ctx.workspace, kCublasWorkspaceBytes);  // lives as long as the handle
  if (e != cudaSuccess) {
    destroy(ctx.handle);
    GPUBENCH_CUDA_CHECK(e);
  }
  return contexts[device] = ctx;
}

using CublasContext = LibraryContext<cublasHandle_t>;

const CublasContext& cublas_context(int device) {
  return library_context<cublasHandle_t>(device, cublasCreate, cublasDestroy, cublas_error, "cublasCreate");
}

// Row-major C = A * B through column-major cuBLAS: C^T = B^T * A^T, i.e. the column-major
// product of B (n x k, ld n) and A (k x m, ld k) into C (n x m, ld n), no transposes. FP32, FP16
// or BF16 inputs (cublasGemmEx has no FP8 inputs: Fp8LtGemm).
cublasStatus_t cublas_gemm(const CublasContext& ctx, Precision p, const void* a, const void* b, float* c, int m, int n,
                           int k, CUstream_st* stream) {
  if (p == Precision::fp8) return CUBLAS_STATUS_NOT_SUPPORTED;
  cublasHandle_t h = ctx.handle;
  cublasStatus_t st = cublasSetStream(h, stream);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  // cublasSetStream puts the handle back on cuBLAS's default workspace pool (cuBLAS docs), which
  // it may allocate from while a graph is captured: ours again, every time (a host-only call).
  st = cublasSetWorkspace(h, ctx.workspace, kCublasWorkspaceBytes);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cudaDataType_t in = p == Precision::fp32 ? CUDA_R_32F : p == Precision::fp16 ? CUDA_R_16F : CUDA_R_16BF;
  return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, in, n, a, in, k, &beta, c, CUDA_R_32F, n,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

// The longest a pct_of_cublas reference is timed after one repetition (a slow kernel's repetition
// can last seconds; the comparison needs the same state, not the same length, past this).
constexpr double kMostReferenceSeconds = 2.0;

// cuBLAS seconds per GEMM (the mean over its samples), timed right after a hand-written kernel's
// repetition (before its verification) for at least as long as the kernel ran in that call to
// the runner (`kernel_seconds`: its samples, and its batch sizing or warm-up sample where the
// call had one; up to kMostReferenceSeconds), on the same inputs, in samples of kMinSampleSeconds or more like the
// runner's: cublasGemmEx on inputs of precision `p` (FP32, FP16 or BF16), so every hand-written
// kernel of a precision - SIMT, mma.sync, WMMA, wgmma - is compared with cuBLAS on its input type.
// Timed once per process instead, in a 0.1 s burst after the first kernel of a shape, the reference
// read 744 TFLOPS at 8192^3 on an H100 where the run's own cuBLAS row read 689.5 (700 against 679
// at 4096^3; the row ran at the power cap, the burst likely before the cap took hold), so every
// FP16 kernel's pct_of_cublas was 3-8 % low. Beside each repetition, both run in one power and
// thermal state.
double paired_cublas_seconds(BatchTimer& timer, const CublasContext& ctx, Precision p, int m, int n, int k,
                             const void* a, const void* b, float* c, double kernel_seconds) {
  cublasStatus_t last = CUBLAS_STATUS_SUCCESS;
  const EnqueueFn enqueue = [&](CUstream_st* s, int) {
    last = cublas_gemm(ctx, p, a, b, c, m, n, k, s);
    return last == CUBLAS_STATUS_SUCCESS ? 0 : static_cast<int>(cudaErrorUnknown);
  };
  try {
    const double first = timer.time(1, enqueue, nullptr);  // warm-up, and the batch size from it
    const int batch =
        static_cast<int>(std::clamp(std::ceil(kMinSampleSeconds / std::max(first, 1e-9)), 1.0, double{kMaxBatch}));
    const double want = std::min(kernel_seconds, kMostReferenceSeconds);
    double seconds = 0;
    long long ops = 0;
    do {  // at least one sample; whole samples, as the kernel's repetition ran them
      seconds += timer.time(batch, enqueue, nullptr);
      ops += batch;
    } while (seconds < want);
    return seconds / static_cast<double>(ops);
  } catch (const DeviceLost&) {
    throw;
  } catch (const std::runtime_error&) {
    if (last != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(cublas_error(last, "cublasGemmEx"));
    throw;
  }
}

std::string cublaslt_error(cublasStatus_t st, const char* what) {
  return std::string("cuBLASLt ") + what + ": " + cublasLtGetStatusName(st) + " (" + cublasLtGetStatusString(st) + ")";
}

// A library status that means "this device or configuration cannot do it" rather than a failure.
bool not_supported(cublasStatus_t st) { return st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH; }

using LtContext = LibraryContext<cublasLtHandle_t>;

// cublasLtMatmul with the workspace it is given allocates nothing.
const LtContext& cublaslt_context(int device) {
  return library_context<cublasLtHandle_t>(device, cublasLtCreate, cublasLtDestroy, cublaslt_error, "cublasLtCreate");
}

// One FP8 GEMM as cuBLASLt runs it, planned once (descriptors, layouts and the heuristic's
// algorithm) so that each timed call is one cublasLtMatmul that allocates nothing.
//
// Types, from the cuBLAS documentation of cublasLtMatmul (its table of supported FP8 type
// combinations, CUDA 12 and 13): A and B CUDA_R_8F_E4M3, compute CUBLAS_COMPUTE_32F, scale type
// CUDA_R_32F, and C and D CUDA_R_32F is one of the listed combinations (beside BF16, FP16 and FP8
// outputs), so the row writes FP32 C like every other GEMM row and is verified the same way.
// Layout: the same documentation requires, for FP8 on Ada (sm_89), Hopper (sm_90) and GeForce
// Blackwell, that A be transposed and B not ("TN": both operands K-major), and 16-byte aligned
// dimensions (fp8_gemm_shape_error). Row-major C = A * B is the column-major C^T (n x m) =
// B^T * A^T; with cuBLASLt's A := B^T stored K-major - the row-major N x K transpose Bt of B,
// built on the host - and cuBLASLt's B := A (row-major M x K is column-major K x M, already
// K-major), that is D (n x m, ld n) = op(Bt) * A with op(Bt) = transpose of the column-major
// K x N (ld K) Bt: TRANSA = T, TRANSB = N. Scale factors: A's and B's per-tensor scales point to
// device floats of 1.0 (the production FP8 path, scales applied in the epilogue); D's scale only
// applies to FP8 outputs and is not set. FAST_ACCUM stays 0: cuBLASLt promotes partial sums to
// FP32 periodically, which the verification relies on at deep K (families/gemm/reference.h).
class Fp8LtGemm {
 public:
  Fp8LtGemm() = default;
  Fp8LtGemm(const Fp8LtGemm&) = delete;
  Fp8LtGemm& operator=(const Fp8LtGemm&) = delete;
  ~Fp8LtGemm() {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    if (cd_) cublasLtMatrixLayoutDestroy(cd_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
  }

  /// Plans C (m x n) = A (m x k) * B (k x n) on `device`, with A's and B's scale factors at
  /// scales[0] and scales[1] (device memory). std::runtime_error in cuBLASLt's words when it
  /// fails or has no FP8 kernel for it (the row runs only where FP8 tensor cores exist).
  void plan(int device, int m, int n, int k, const float* scales) {
    ctx_ = cublaslt_context(device);
    check(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const std::int32_t transa = CUBLAS_OP_T;
    const std::int32_t transb = CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa),
          "cublasLtMatmulDescSetAttribute(TRANSA)");
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb),
          "cublasLtMatmulDescSetAttribute(TRANSB)");
    const float* a_scale = scales;
    const float* b_scale = scales + 1;
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                         static_cast<const void*>(&a_scale), sizeof a_scale),
          "cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)");
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                         static_cast<const void*>(&b_scale), sizeof b_scale),
          "cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)");
    const std::int8_t fast_accum = 0;
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof fast_accum),
          "cublasLtMatmulDescSetAttribute(FAST_ACCUM)");
    // Column-major layouts (cuBLASLt's default order): Bt as K x N (ld K), A as K x M (ld K),
    // C = D as N x M (ld N).
    check(cublasLtMatrixLayoutCreate(&a_, CUDA_R_8F_E4M3, k, n, k), "cublasLtMatrixLayoutCreate(A)");
    check(cublasLtMatrixLayoutCreate(&b_, CUDA_R_8F_E4M3, k, m, k), "cublasLtMatrixLayoutCreate(B)");
    check(cublasLtMatrixLayoutCreate(&cd_, CUDA_R_32F, n, m, n), "cublasLtMatrixLayoutCreate(C)");
    check(cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
    const std::uint64_t max_workspace = kCublasWorkspaceBytes;
    check(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
                                               sizeof max_workspace),
          "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t st =
        cublasLtMatmulAlgoGetHeuristic(ctx_.handle, desc_, a_, b_, cd_, cd_, pref_, 1, &result, &found);
    const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    if (not_supported(st) || (st == CUBLAS_STATUS_SUCCESS && (found == 0 || result.state != CUBLAS_STATUS_SUCCESS))) {
      // The row exists only on devices with FP8 tensor cores (compute capability 8.9 and up), where
      // cuBLASLt has FP8 kernels: an answer of none means the request is wrong - an error.
      throw std::runtime_error("cuBLASLt has no FP8 E4M3 GEMM for " + shape + " on this device (" +
                               cublaslt_error(st == CUBLAS_STATUS_SUCCESS && found > 0 ? result.state : st,
                                              "cublasLtMatmulAlgoGetHeuristic") +
                               (st == CUBLAS_STATUS_SUCCESS && found == 0 ? ", no algorithm returned" : "") + ")");
    }
    check(st, "cublasLtMatmulAlgoGetHeuristic");
    algo_ = result.algo;
  }

  /// Enqueues C = A * B on `stream` (bt: B transposed, N x K row-major; a: M x K row-major).
  cublasStatus_t enqueue(const void* bt, const void* a, float* c, CUstream_st* stream) const {
    const float alpha = 1.0f;
    const float beta = 0.0f;  // C is not read: it may hold the poison
    return cublasLtMatmul(ctx_.handle, desc_, &alpha, bt, a_, a, b_, &beta, c, cd_, c, cd_, &algo_, ctx_.workspace,
                          kCublasWorkspaceBytes, stream);
  }

 private:
  static void check(cublasStatus_t st, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(cublaslt_error(st, what));
  }

  LtContext ctx_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, cd_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

template <Precision P, GemmVariant V>
class GemmWorkload final : public CudaWorkload {
  using In = InputOf<P>;
  static_assert((P == Precision::fp8) == (V == GemmVariant::cublaslt),
                "FP8 runs through cuBLASLt only (an FP8 kernel's pct_of_cublas would need a cuBLASLt reference)");

 public:
  using CudaWorkload::CudaWorkload;

  void prepare() override {
    m_ = dim_arg(c_, "m");
    n_ = dim_arg(c_, "n");
    k_ = dim_arg(c_, "k");
    if (const char* why = shape_error()) {
      throw SkipCase("shape " + std::to_string(m_) + "x" + std::to_string(n_) + "x" + std::to_string(k_) + ": " + why);
    }
    if constexpr (is_wgmma(V)) {  // sm_90a code: compute capability 9.0 exactly
      const DeviceDescription& d = dev_.description();
      if (const char* why = kernels::hgemm_wgmma_device_error(d.cc_major, d.cc_minor)) {
        throw SkipCase(std::string(why) + "; this device is " + std::to_string(d.cc_major) + "." +
                       std::to_string(d.cc_minor));
      }
    }
    const std::size_t a_n = static_cast<std::size_t>(m_) * k_;
    const std::size_t b_n = static_cast<std::size_t>(k_) * n_;
    begin_prepare((a_n + b_n) * sizeof(In) + c_elems() * sizeof(float));
    a_host_ = random_inputs(a_n, seed_);
    b_host_ = random_inputs(b_n, seed_ ^ 0x9e3779b97f4a7c15ull);
    a_ = DeviceBuffer(a_n * sizeof(In));
    b_ = DeviceBuffer(b_n * sizeof(In));
    c_dev_ = DeviceBuffer(c_elems() * sizeof(float));
    copy_to_device(a_.get(), a_host_.data(), a_n * sizeof(In), dev_.stream());
    if constexpr (V == GemmVariant::cublaslt) {
      // cuBLASLt's FP8 kernels take B K-major: the device holds B's transpose (N x K row-major),
      // built here; the verification still reads B as it is (b_host_).
      const std::vector<In> bt = transposed(b_host_, k_, n_);
      copy_to_device(b_.get(), bt.data(), b_n * sizeof(In), dev_.stream());
      const float ones[2] = {1.0f, 1.0f};  // A's and B's scale factors
      scales_ = DeviceBuffer(sizeof ones);
      copy_to_device(scales_.get(), ones, sizeof ones, dev_.stream());
      lt_ = std::make_unique<Fp8LtGemm>();
      lt_->plan(dev_.index(), m_, n_, k_, scales_.as<float>());
    } else {
      copy_to_device(b_.get(), b_host_.data(), b_n * sizeof(In), dev_.stream());
    }
    if constexpr (is_library(V)) {
      // One synchronous call first: a library failure is reported here in the library's words.
      // The rows exist only on devices whose tensor cores take their input type (min_cc), so a
      // configuration the library does not support is an error too, never a skip.
      const cublasStatus_t st = library_gemm(c_dev_.as<float>(), dev_.stream());
      if (not_supported(st)) throw std::runtime_error(library_error(st) + ": not supported on this device");
      if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(library_error(st));
      GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(dev_.stream()));
    }
    if constexpr (P == Precision::fp16 && V == GemmVariant::kernel) {
      GPUBENCH_CUDA_CHECK(kernels::hgemm_configure());  // before any graph capture
    }
    if constexpr (is_wgmma(V)) {
      GPUBENCH_CUDA_CHECK(kernels::hgemm_wgmma_configure());  // before any graph capture
      const std::string why = kernels::hgemm_wgmma_register_error(kernels::hgemm_wgmma_entry_registers());
      if (!why.empty()) throw std::runtime_error(why);
    }
  }

  void poison() override { poison_device(c_dev_.get(), c_elems() * sizeof(float), dev_.stream()); }

  double run(int batch) override {
    dev_.activate();
    const In* a = a_.as<In>();
    const In* b = b_.as<In>();
    float* c = c_dev_.as<float>();
    const int m = m_, n = n_, k = k_;
    library_status_ = CUBLAS_STATUS_SUCCESS;
    // By copy: a, b, c, m, n, k and, in the library branch only, `this` (an explicit list would
    // name `this` unused in the other instantiations).
    const EnqueueFn enqueue = [=](CUstream_st* s, int) -> int {
      if constexpr (is_library(V)) {
        library_status_ = library_gemm(c, s);
        return library_status_ == CUBLAS_STATUS_SUCCESS ? 0 : static_cast<int>(cudaErrorUnknown);
      } else if constexpr (P == Precision::fp32 && V == GemmVariant::kernel) {
        return kernels::launch_sgemm(a, b, c, m, n, k, s);
      } else if constexpr (P == Precision::fp32 && V == GemmVariant::naive) {
        return kernels::launch_sgemm_naive(a, b, c, m, n, k, s);
      } else if constexpr (P == Precision::fp16 && V == GemmVariant::kernel) {
        return kernels::launch_hgemm(a, b, c, m, n, k, s);
      } else if constexpr (is_wgmma(V)) {
        static_assert(sizeof(In) == 2, "the wgmma kernel takes 16-bit inputs");
        return kernels::launch_hgemm_wgmma(
            reinterpret_cast<const std::uint16_t*>(a), reinterpret_cast<const std::uint16_t*>(b), c, m, n, k,
            P == Precision::bf16 ? kernels::Half16::bf16 : kernels::Half16::fp16,
            V == GemmVariant::wgmma_unclustered ? kernels::WgmmaCluster::single : kernels::WgmmaCluster::pair,
            V == GemmVariant::wgmma_direct_store ? kernels::WgmmaEpilogue::direct : kernels::WgmmaEpilogue::tma_store,
            s);
      } else {
        static_assert(P == Precision::fp16 && V == GemmVariant::wmma, "no such GEMM workload");
        return kernels::launch_hgemm_wmma(a, b, c, m, n, k, s);
      }
    };
    try {
      const double seconds = timed(batch, enqueue);  // never flushed: compute-bound rows
      timed_since_counters_ += seconds;              // the paired cuBLAS reference runs as long
      return seconds;
    } catch (const DeviceLost&) {
      throw;  // the runner stops the run on it: never re-worded into a library error
    } catch (const std::runtime_error&) {
      if (library_status_ != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(library_error(library_status_));
      throw;
    }
  }

  Verification verify() override {
    const std::vector<float> c = copy_to_host(c_dev_.as<float>(), c_elems(), dev_.stream());
    const double macs = static_cast<double>(m_) * n_ * k_;
    // Work items: (true, i) = row i in full, (false, j) = column j in full.
    std::vector<std::pair<bool, int>> lines;
    if (macs <= kFullCheckMacs) {
      for (int i = 0; i < m_; ++i) lines.push_back({true, i});
    } else {
      for (int i : kernels::gemm_sample_indices(m_, kSampledLines, seed_)) lines.push_back({true, i});
      for (int j : kernels::gemm_sample_indices(n_, kSampledLines, seed_ + 1)) lines.push_back({false, j});
    }
    std::vector<kernels::GemmMismatch> bad(lines.size());
    parallel_for(
        lines.size(),
        [&](std::size_t begin, std::size_t end, unsigned) {
          for (std::size_t t = begin; t < end; ++t) {
            bad[t] =
                lines[t].first
                    ? kernels::check_gemm_row(a_host_.data(), b_host_.data(), c.data(), n_, k_, lines[t].second)
                    : kernels::check_gemm_col(a_host_.data(), b_host_.data(), c.data(), m_, n_, k_, lines[t].second);
          }
        },
        1);
    for (const auto& r : bad) {
      if (r.found) {
        return Verification::fail(r.describe() + (macs <= kFullCheckMacs ? "" : " (sampled rows and columns)"));
      }
    }
    return Verification::pass();
  }

  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    std::map<std::string, double> out = CudaWorkload::extra_counters(seconds_per_op);
    const double kernel_seconds = timed_since_counters_;
    timed_since_counters_ = 0;
    if constexpr (!is_library(V)) {
      // Called outside the runner's error handling: a failed reference only drops the counter.
      try {
        dev_.activate();
        if (!ref_timer_) {  // cuBLAS's own output: the kernel's verified C stays as it wrote it
          require_device_memory(c_elems() * sizeof(float), "cuBLAS reference for pct_of_cublas");
          ref_c_ = DeviceBuffer(c_elems() * sizeof(float));
          ref_timer_ = std::make_unique<BatchTimer>(dev_.stream());
        }
        const double ref = paired_cublas_seconds(*ref_timer_, cublas_context(dev_.index()), P, m_, n_, k_, a_.get(),
                                                 b_.get(), ref_c_.as<float>(), kernel_seconds);
        if (ref > 0 && seconds_per_op > 0) out["pct_of_cublas"] = 100.0 * ref / seconds_per_op;
      } catch (const DeviceLost&) {
        throw;  // a lost device is never only a missing counter
      } catch (const std::exception&) {
        // deliberately swallowed: without a reference pair the row only lacks pct_of_cublas
      }
    }
    return out;
  }

 private:
  const char* shape_error() const {
    if constexpr (P == Precision::fp16 && V == GemmVariant::kernel) return kernels::hgemm_shape_error(m_, n_, k_);
    if constexpr (P == Precision::fp16 && V == GemmVariant::wmma) return kernels::hgemm_wmma_shape_error(m_, n_, k_);
    if constexpr (is_wgmma(V)) return kernels::hgemm_wgmma_shape_error(m_, n_, k_);
    if constexpr (V == GemmVariant::cublaslt) return kernels::fp8_gemm_shape_error(m_, n_, k_);
    return kernels::sgemm_shape_error(m_, n_, k_);
  }

  // The library GEMM of this row into c on `s`: cublasGemmEx, or the planned cuBLASLt FP8 GEMM.
  cublasStatus_t library_gemm(float* c, CUstream_st* s) const {
    if constexpr (V == GemmVariant::cublaslt) {
      return lt_->enqueue(b_.get(), a_.get(), c, s);
    } else {
      return cublas_gemm(cublas_context(dev_.index()), P, a_.get(), b_.get(), c, m_, n_, k_, s);
    }
  }

  static std::string library_error(cublasStatus_t st) {
    return V == GemmVariant::cublaslt ? cublaslt_error(st, "cublasLtMatmul") : cublas_error(st, "cublasGemmEx");
  }

  std::size_t c_elems() const { return static_cast<std::size_t>(m_) * n_; }

  // The rows x cols row-major matrix x transposed (cols x rows, row-major).
  static std::vector<In> transposed(const std::vector<In>& x, int rows, int cols) {
    std::vector<In> t(x.size());
    parallel_for(static_cast<std::size_t>(cols), [&](std::size_t begin, std::size_t end, unsigned) {
      for (std::size_t j = begin; j < end; ++j)
        for (std::size_t i = 0; i < static_cast<std::size_t>(rows); ++i) t[j * rows + i] = x[i * cols + j];
    });
    return t;
  }

  // Seeded uniform [-1, 1) inputs with no zeros, exact in the input precision: FP32 as drawn; FP16
  // and BF16 rounded to nearest even (an FP16 rounding to zero becomes the smallest normal, a BF16
  // zero 0.5); FP8 E4M3 on the grid k/8 (low_precision.h: why that grid).
  static std::vector<In> random_inputs(std::size_t n, std::uint64_t seed) {
    std::vector<float> f(n);
    fill_random_float(f.data(), n, seed, -1.0f, 1.0f);
    if constexpr (P == Precision::fp32) {
      for (auto& x : f) x = x == 0.0f ? 0.5f : x;
      return f;
    } else {
      std::vector<In> h(n);
      parallel_for(n, [&](std::size_t begin, std::size_t end, unsigned) {
        for (std::size_t i = begin; i < end; ++i) {
          if constexpr (P == Precision::fp16) {
            const std::uint16_t v = kernels::float_to_half_bits(f[i]);
            h[i] = (v & 0x7FFFu) == 0 ? std::uint16_t{0x0400u} : v;
          } else if constexpr (P == Precision::bf16) {
            h[i] = kernels::bf16_gemm_input(f[i]);
          } else {
            h[i] = kernels::e4m3_gemm_input(f[i]);
          }
        }
      });
      return h;
    }
  }

  int m_ = 0, n_ = 0, k_ = 0;
  std::vector<In> a_host_, b_host_;
  DeviceBuffer a_, b_, c_dev_;
  DeviceBuffer scales_;            // FP8: A's and B's scale factors (1.0)
  std::unique_ptr<Fp8LtGemm> lt_;  // FP8: the planned cuBLASLt GEMM
  cublasStatus_t library_status_ = CUBLAS_STATUS_SUCCESS;
  double timed_since_counters_ = 0;        // device seconds of run() since the last extra_counters()
  DeviceBuffer ref_c_;                     // hand-written rows: the paired cuBLAS reference's C
  std::unique_ptr<BatchTimer> ref_timer_;  // and its timer (graphs of its own batch sizes)
};

template <class W>
std::unique_ptr<Workload> make(const BenchCase& c, Backend& b) {
  return std::make_unique<W>(c, cuda_device_of(b));
}

}  // namespace

void families::gemm::add_cuda_workloads(WorkloadTable& t) {
  t.add("compute/sgemm/kernel", &make<GemmWorkload<Precision::fp32, GemmVariant::kernel>>);
  t.add("compute/sgemm/naive", &make<GemmWorkload<Precision::fp32, GemmVariant::naive>>);
  t.add("compute/sgemm/cublas", &make<GemmWorkload<Precision::fp32, GemmVariant::cublas>>);
  // mma.sync m16n8k16 (f16 -> f32), ldmatrix and cp.async need sm_80.
  t.add("compute/hgemm/kernel", &make<GemmWorkload<Precision::fp16, GemmVariant::kernel>>, 80);
  t.add("compute/hgemm/wmma", &make<GemmWorkload<Precision::fp16, GemmVariant::wmma>>, 80);
  // The Hopper kernel (sm_90a): skipped, with the reason, on any device but compute capability 9.0.
  // In 2 x 1 clusters with B multicast, and (FP16 only) one block per tile and C stored by the
  // threads themselves, each to compare with it.
  t.add("compute/hgemm/wgmma", &make<GemmWorkload<Precision::fp16, GemmVariant::wgmma>>, 90);
  t.add("compute/hgemm/wgmma_unclustered", &make<GemmWorkload<Precision::fp16, GemmVariant::wgmma_unclustered>>, 90);
  t.add("compute/hgemm/wgmma_direct_store", &make<GemmWorkload<Precision::fp16, GemmVariant::wgmma_direct_store>>, 90);
  t.add("compute/hgemm/cublas", &make<GemmWorkload<Precision::fp16, GemmVariant::cublas>>);
  // BF16 tensor cores: sm_80 on; FP8 tensor cores: sm_89 (Ada) and sm_90 (Hopper) on.
  t.add("compute/bf16gemm/wgmma", &make<GemmWorkload<Precision::bf16, GemmVariant::wgmma>>, 90);
  t.add("compute/bf16gemm/cublas", &make<GemmWorkload<Precision::bf16, GemmVariant::cublas>>, 80);
  t.add("compute/fp8gemm/cublaslt", &make<GemmWorkload<Precision::fp8, GemmVariant::cublaslt>>, 89);
}

}  // namespace gpubench
