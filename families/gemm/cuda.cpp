// The GEMM family on a CUDA device: compute/sgemm/{kernel,naive,cublas} and
// compute/hgemm/{kernel,wmma,cublas} (rows from families/gemm/cases.cpp, kernels
// from families/gemm/gemm.h). C = A * B, row-major, FP32 C; FP16 rows take binary16 A and B and
// accumulate in FP32 (cuBLAS: cublasGemmEx with CUBLAS_COMPUTE_32F, so no TF32 shortcut for the
// FP32 reference and the same FP32 accumulation as the kernels).
//
// Inputs are seeded uniform [-1, 1) values (zeros replaced), C is poisoned before the timed runs
// and verified after them against the double-precision reference of families/gemm/reference.h:
// every element at small sizes, at large ones the first/last two and 12 seeded rows and columns
// in full, with a tolerance that scales with sqrt(K) and FP32 rounding. The hand-written
// kernels also report pct_of_cublas: cuBLAS timed once per device, precision and shape (cached),
// on the same inputs, as 100 x cuBLAS time / kernel time.
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
#include "families/gemm/reference.h"
#include "harness/cuda/cuda_backend.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/cuda_workload.h"
#include "harness/cuda/device_buffer.h"
#include "harness/cuda/timing.h"
#include "harness/family.h"
#include "harness/host/parallel.h"
#include "harness/verify.h"
#include "kernels/half_bits.h"

GPUBENCH_FAMILY(gemm)

namespace gpubench {

namespace {

enum class Precision { fp32, fp16 };
enum class GemmVariant { kernel, naive, wmma, cublas };

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

// One cuBLAS handle per device, created on first use and kept for the process: destroying it
// from a static destructor could run after the CUDA runtime has shut down.
cublasHandle_t cublas_handle(int device) {
  static std::mutex mu;
  static std::map<int, cublasHandle_t> handles;
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  cublasHandle_t h = nullptr;
  cublasStatus_t st = cublasCreate(&h);
  if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(cublas_error(st, "cublasCreate"));
  void* workspace = nullptr;
  GPUBENCH_CUDA_CHECK(cudaMalloc(&workspace, kCublasWorkspaceBytes));  // lives as long as the handle
  st = cublasSetWorkspace(h, workspace, kCublasWorkspaceBytes);
  if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(cublas_error(st, "cublasSetWorkspace"));
  handles[device] = h;
  return h;
}

// Row-major C = A * B through column-major cuBLAS: C^T = B^T * A^T, i.e. the column-major
// product of B (n x k, ld n) and A (k x m, ld k) into C (n x m, ld n), no transposes.
cublasStatus_t cublas_gemm(cublasHandle_t h, Precision p, const void* a, const void* b, float* c, int m, int n, int k,
                           CUstream_st* stream) {
  cublasStatus_t st = cublasSetStream(h, stream);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cudaDataType_t in = p == Precision::fp32 ? CUDA_R_32F : CUDA_R_16F;
  return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, in, n, a, in, k, &beta, c, CUDA_R_32F, n,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

// cuBLAS seconds per GEMM for one device, precision and shape, measured once per process.
double cublas_reference_seconds(CudaDevice& dev, Precision p, int m, int n, int k, const void* a, const void* b) {
  static std::map<std::string, double> cache;
  const std::string key = std::to_string(dev.index()) + (p == Precision::fp32 ? ":fp32:" : ":fp16:") +
                          std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  dev.activate();
  const std::size_t c_bytes = static_cast<std::size_t>(m) * n * sizeof(float);
  require_device_memory(c_bytes, "cuBLAS reference for pct_of_cublas");
  DeviceBuffer c(c_bytes);
  cublasHandle_t h = cublas_handle(dev.index());
  cublasStatus_t last = CUBLAS_STATUS_SUCCESS;
  const EnqueueFn enqueue = [&](CUstream_st* s, int) {
    last = cublas_gemm(h, p, a, b, c.as<float>(), m, n, k, s);
    return last == CUBLAS_STATUS_SUCCESS ? 0 : static_cast<int>(cudaErrorUnknown);
  };
  BatchTimer timer(dev.stream());
  try {
    const double first = timer.time(1, enqueue, nullptr);  // warm-up, and the batch size from it
    const int batch = static_cast<int>(std::clamp(std::ceil(0.02 / std::max(first, 1e-7)), 1.0, 1000.0));
    std::vector<double> samples;
    samples.reserve(5);
    for (int r = 0; r < 5; ++r) samples.push_back(timer.time(batch, enqueue, nullptr) / batch);
    std::sort(samples.begin(), samples.end());
    cache[key] = samples[samples.size() / 2];
  } catch (const std::runtime_error&) {
    if (last != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(cublas_error(last, "cublasGemmEx"));
    throw;
  }
  return cache[key];
}

template <Precision P, GemmVariant V>
class GemmWorkload final : public CudaWorkload {
  using In = std::conditional_t<P == Precision::fp32, float, std::uint16_t>;

 public:
  using CudaWorkload::CudaWorkload;

  void prepare() override {
    m_ = dim_arg(c_, "m");
    n_ = dim_arg(c_, "n");
    k_ = dim_arg(c_, "k");
    if (const char* why = shape_error()) {
      throw SkipCase("shape " + std::to_string(m_) + "x" + std::to_string(n_) + "x" + std::to_string(k_) + ": " + why);
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
    copy_to_device(b_.get(), b_host_.data(), b_n * sizeof(In), dev_.stream());
    if constexpr (V == GemmVariant::cublas) {
      // One synchronous call first: a cuBLAS failure is reported here with cuBLAS's own words.
      const cublasStatus_t st = cublas_gemm(cublas_handle(dev_.index()), P, a_.get(), b_.get(), c_dev_.as<float>(), m_,
                                            n_, k_, dev_.stream());
      if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(cublas_error(st, "cublasGemmEx"));
      GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(dev_.stream()));
    }
    if constexpr (P == Precision::fp16 && V == GemmVariant::kernel) {
      GPUBENCH_CUDA_CHECK(kernels::hgemm_configure());  // before any graph capture
    }
  }

  void poison() override { poison_device(c_dev_.get(), c_elems() * sizeof(float), dev_.stream()); }

  double run(int batch) override {
    dev_.activate();
    const In* a = a_.as<In>();
    const In* b = b_.as<In>();
    float* c = c_dev_.as<float>();
    const int m = m_, n = n_, k = k_;
    cublas_status_ = CUBLAS_STATUS_SUCCESS;
    // By copy: a, b, c, m, n, k and, in the cuBLAS branch only, `this` (an explicit list would
    // name `this` unused in the other instantiations).
    const EnqueueFn enqueue = [=](CUstream_st* s, int) -> int {
      if constexpr (V == GemmVariant::cublas) {
        cublas_status_ = cublas_gemm(cublas_handle(dev_.index()), P, a, b, c, m, n, k, s);
        return cublas_status_ == CUBLAS_STATUS_SUCCESS ? 0 : static_cast<int>(cudaErrorUnknown);
      } else if constexpr (P == Precision::fp32 && V == GemmVariant::kernel) {
        return kernels::launch_sgemm(a, b, c, m, n, k, s);
      } else if constexpr (P == Precision::fp32 && V == GemmVariant::naive) {
        return kernels::launch_sgemm_naive(a, b, c, m, n, k, s);
      } else if constexpr (P == Precision::fp16 && V == GemmVariant::kernel) {
        return kernels::launch_hgemm(a, b, c, m, n, k, s);
      } else {
        static_assert(P == Precision::fp16 && V == GemmVariant::wmma, "no such GEMM workload");
        return kernels::launch_hgemm_wmma(a, b, c, m, n, k, s);
      }
    };
    try {
      return timed(batch, enqueue);  // never flushed: compute-bound rows
    } catch (const std::runtime_error&) {
      if (cublas_status_ != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(cublas_error(cublas_status_, "cublasGemmEx"));
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
    if constexpr (V != GemmVariant::cublas) {
      // Called outside the runner's error handling: a failed reference only drops the counter.
      try {
        const double ref = cublas_reference_seconds(dev_, P, m_, n_, k_, a_.get(), b_.get());
        if (ref > 0 && seconds_per_op > 0) out["pct_of_cublas"] = 100.0 * ref / seconds_per_op;
      } catch (const std::exception&) {
      }
    }
    return out;
  }

 private:
  const char* shape_error() const {
    if constexpr (P == Precision::fp16 && V == GemmVariant::kernel) return kernels::hgemm_shape_error(m_, n_, k_);
    if constexpr (P == Precision::fp16 && V == GemmVariant::wmma) return kernels::hgemm_wmma_shape_error(m_, n_, k_);
    return kernels::sgemm_shape_error(m_, n_, k_);
  }

  std::size_t c_elems() const { return static_cast<std::size_t>(m_) * n_; }

  // Uniform [-1, 1) inputs with no zeros (an FP16 rounding to zero becomes the smallest normal).
  static std::vector<In> random_inputs(std::size_t n, std::uint64_t seed) {
    std::vector<float> f(n);
    fill_random_float(f.data(), n, seed, -1.0f, 1.0f);
    if constexpr (P == Precision::fp32) {
      for (auto& x : f) x = x == 0.0f ? 0.5f : x;
      return f;
    } else {
      std::vector<std::uint16_t> h(n);
      parallel_for(n, [&](std::size_t begin, std::size_t end, unsigned) {
        for (std::size_t i = begin; i < end; ++i) {
          const std::uint16_t v = kernels::float_to_half_bits(f[i]);
          h[i] = (v & 0x7FFFu) == 0 ? std::uint16_t{0x0400u} : v;
        }
      });
      return h;
    }
  }

  int m_ = 0, n_ = 0, k_ = 0;
  std::vector<In> a_host_, b_host_;
  DeviceBuffer a_, b_, c_dev_;
  cublasStatus_t cublas_status_ = CUBLAS_STATUS_SUCCESS;
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
  t.add("compute/hgemm/cublas", &make<GemmWorkload<Precision::fp16, GemmVariant::cublas>>);
}

}  // namespace gpubench
