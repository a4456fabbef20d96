// The host backend's precision rows (families/memory/cases.cpp):
//
//   memory/axpy/{fp64,fp32,fp16,bf16}/bytes:S   out[i] = a * x[i] + y[i], a = kAxpyScalar, S
//     bytes per vector, on all cores (parallel_for). The inputs are seeded values in [-1, 1]
//     stored in the type (fp16 and bf16 as 16-bit patterns). Bytes moved: x, y and out (the work
//     model's 3 x S), so GB/s is about equal across precisions where memory is the limit and
//     Gelem_per_s (n / time per operation / 1e9) grows as the element shrinks.
//
// Each element is what memory::axpy_element (reference.h) computes: one fused multiply-add in
// the compute type (FP64 for fp64, FP32 otherwise, `a` rounded to float), rounded to the storage
// type to nearest even. The loops are compiled for AVX2 + FMA + F16C and for the baseline and
// picked at run time (counter vector_bits: 256 or 32):
//   fp64, fp32  std::fma, which the compiler vectorises where FMA exists (one IEEE rounding on
//               every path; the baseline calls libm: slow, still exact).
//   bf16        widening is a shift and narrowing a branch-free round-to-nearest-even that is the
//               same formula as float_to_bf16_bits, so the compiler vectorises the whole element.
//   fp16        F16C's vcvtph2ps / vcvtps2ph, IEEE conversions with round-to-nearest-even and
//               subnormals, hence the same bits as half_bits_to_float / float_to_half_bits for
//               every non-NaN value (the rows never hold a NaN; a NaN may differ in payload and
//               sign, which is why the reference is the one definition). Without F16C the row
//               runs reference.h's branchy conversions element by element and is compute-bound:
//               then it measures the conversions, not memory, which vector_bits = 32 flags.
// verify() checks every element against axpy_element bit for bit.
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "families/memory/host_workloads.h"
#include "families/memory/memory.h"
#include "families/memory/reference.h"
#include "families/memory/values.h"
#include "harness/host/corruptible_output.h"
#include "harness/host/host_buffer.h"
#include "harness/host/host_timer.h"
#include "harness/host/parallel.h"
#include "harness/random.h"
#include "harness/verify.h"

namespace gpubench::memory {

namespace {

using kernels::AxpyType;

constexpr std::uint64_t kSeed = 0x510e527fade682d1ull;

/// out[begin, end) of one precision; x, y, out are arrays of the row's type.
using AxpyRange = void (*)(double a, const void* x, const void* y, void* out, std::size_t begin, std::size_t end);

// ---- one element, inlined into each target's loop -----------------------------------------

float bits_to_float(std::uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
std::uint32_t float_to_bits(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// float_to_bf16_bits with the NaN case as a select instead of an early return, so a loop of it
// vectorises; the same bits for every input.
__attribute__((always_inline)) inline std::uint16_t bf16_round(float f) {
  const std::uint32_t x = float_to_bits(f);
  const std::uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
  const std::uint32_t quiet_nan = (x >> 16) | 0x40u;
  return static_cast<std::uint16_t>((x & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : rounded);
}

template <class T>
__attribute__((always_inline)) inline void axpy_float_loop(double a, const void* xv, const void* yv, void* outv,
                                                           std::size_t begin, std::size_t end) {
  const auto* x = static_cast<const T*>(xv);
  const auto* y = static_cast<const T*>(yv);
  auto* out = static_cast<T*>(outv);
  const T at = static_cast<T>(a);
  for (std::size_t i = begin; i < end; ++i) out[i] = std::fma(at, x[i], y[i]);
}

__attribute__((always_inline)) inline void axpy_bf16_loop(double a, const void* xv, const void* yv, void* outv,
                                                          std::size_t begin, std::size_t end) {
  const auto* x = static_cast<const std::uint16_t*>(xv);
  const auto* y = static_cast<const std::uint16_t*>(yv);
  auto* out = static_cast<std::uint16_t*>(outv);
  const auto af = static_cast<float>(a);
  for (std::size_t i = begin; i < end; ++i) {
    const float xf = bits_to_float(static_cast<std::uint32_t>(x[i]) << 16);
    const float yf = bits_to_float(static_cast<std::uint32_t>(y[i]) << 16);
    out[i] = bf16_round(std::fma(af, xf, yf));
  }
}

// ---- the baseline ---------------------------------------------------------------------------

void axpy_fp64_base(double a, const void* x, const void* y, void* out, std::size_t b, std::size_t e) {
  axpy_float_loop<double>(a, x, y, out, b, e);
}
void axpy_fp32_base(double a, const void* x, const void* y, void* out, std::size_t b, std::size_t e) {
  axpy_float_loop<float>(a, x, y, out, b, e);
}
void axpy_bf16_base(double a, const void* x, const void* y, void* out, std::size_t b, std::size_t e) {
  axpy_bf16_loop(a, x, y, out, b, e);
}
void axpy_fp16_base(double a, const void* x, const void* y, void* out, std::size_t b, std::size_t e) {
  for (std::size_t i = b; i < e; ++i) axpy_element(AxpyType::fp16, a, x, y, out, i);
}

// ---- AVX2 + FMA + F16C ------------------------------------------------------------------------

#if defined(__x86_64__)
#define GPUBENCH_AXPY_VECTOR_TARGET __attribute__((target("avx2,fma,f16c")))

GPUBENCH_AXPY_VECTOR_TARGET void axpy_fp64_avx2(double a, const void* x, const void* y, void* out, std::size_t b,
                                                std::size_t e) {
  axpy_float_loop<double>(a, x, y, out, b, e);
}
GPUBENCH_AXPY_VECTOR_TARGET void axpy_fp32_avx2(double a, const void* x, const void* y, void* out, std::size_t b,
                                                std::size_t e) {
  axpy_float_loop<float>(a, x, y, out, b, e);
}
GPUBENCH_AXPY_VECTOR_TARGET void axpy_bf16_avx2(double a, const void* x, const void* y, void* out, std::size_t b,
                                                std::size_t e) {
  axpy_bf16_loop(a, x, y, out, b, e);
}
// 8 halves per step: widen both inputs, one FMA, narrow with round-to-nearest-even.
GPUBENCH_AXPY_VECTOR_TARGET void axpy_fp16_f16c(double a, const void* xv, const void* yv, void* outv, std::size_t b,
                                                std::size_t e) {
  const auto* x = static_cast<const std::uint16_t*>(xv);
  const auto* y = static_cast<const std::uint16_t*>(yv);
  auto* out = static_cast<std::uint16_t*>(outv);
  const __m256 av = _mm256_set1_ps(static_cast<float>(a));
  std::size_t i = b;
  for (; i + 8 <= e; i += 8) {
    const __m256 xf = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    const __m256 yf = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i)));
    const __m128i r = _mm256_cvtps_ph(_mm256_fmadd_ps(av, xf, yf), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), r);
  }
  for (; i < e; ++i) axpy_element(AxpyType::fp16, a, xv, yv, outv, i);
}

// F16C is read from CPUID (leaf 1, ECX bit 29) because not every compiler's
// __builtin_cpu_supports knows its name; AVX2's check also covers the OS saving ymm registers.
bool have_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

bool have_vector_path() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && have_f16c();
  return yes;
}
#else
bool have_vector_path() { return false; }
#endif

/// The loop a row runs and the vector width it was measured with.
struct AxpyPath {
  AxpyRange fn;
  int vector_bits;
};

AxpyPath pick_path(AxpyType type) {
#if defined(__x86_64__)
  if (have_vector_path()) {
    switch (type) {
      case AxpyType::fp64: return {axpy_fp64_avx2, 256};
      case AxpyType::fp32: return {axpy_fp32_avx2, 256};
      case AxpyType::fp16: return {axpy_fp16_f16c, 256};
      case AxpyType::bf16: return {axpy_bf16_avx2, 256};
    }
  }
#endif
  switch (type) {
    case AxpyType::fp64: return {axpy_fp64_base, 32};
    case AxpyType::fp32: return {axpy_fp32_base, 32};
    case AxpyType::fp16: return {axpy_fp16_base, 32};
    case AxpyType::bf16: break;
  }
  return {axpy_bf16_base, 32};
}

AxpyType axpy_type(const std::string& variant) {
  if (variant == "fp64") return AxpyType::fp64;
  if (variant == "fp32") return AxpyType::fp32;
  if (variant == "fp16") return AxpyType::fp16;
  return AxpyType::bf16;
}

// ---- the workload ---------------------------------------------------------------------------

class AxpyWorkload final : public Workload, public CorruptibleOutput {
 public:
  explicit AxpyWorkload(const BenchCase& c)
      : type_(axpy_type(c.variant)),
        elem_bytes_(static_cast<std::size_t>(c.arg("elem_bytes"))),
        n_(static_cast<std::size_t>(c.arg("bytes")) / elem_bytes_),
        path_(pick_path(type_)) {}

  void prepare() override {
    if (elem_bytes_ != static_cast<std::size_t>(kernels::axpy_elem_bytes(type_)))
      throw SkipCase("elem_bytes " + std::to_string(elem_bytes_) + " is not the size of the row's type");
    x_ = std::make_unique<HostBuffer>(n_ * elem_bytes_);
    y_ = std::make_unique<HostBuffer>(n_ * elem_bytes_);
    out_ = std::make_unique<HostBuffer>(n_ * elem_bytes_);
    parallel_for(n_, [&](std::size_t b, std::size_t e, unsigned) {
      fill_inputs(type_, x_->p, b, e, kSeed);
      fill_inputs(type_, y_->p, b, e, kSeed + 1);
    });
  }
  void poison() override { poison_fill(out_->p, n_ * elem_bytes_); }
  double run(int batch) override {
    const void* x = x_->p;
    const void* y = y_->p;
    void* out = out_->p;
    const AxpyRange fn = path_.fn;
    return time_seconds([&] {
      parallel_for(n_, [&](std::size_t b, std::size_t e, unsigned) {
        for (int r = 0; r < batch; ++r) {
          fn(kAxpyScalar, x, y, out, b, e);
          asm volatile("" ::: "memory");  // each repetition really stores
        }
      });
    });
  }
  Verification verify() override { return axpy_verdict(type_, x_->p, y_->p, out_->p, first_wrong_element(), n_); }
  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    const double gelem = seconds_per_op > 0 ? static_cast<double>(n_) / seconds_per_op / 1e9 : 0;
    return {{"Gelem_per_s", gelem}, {"vector_bits", path_.vector_bits}};
  }
  std::size_t output_elements() const override { return n_; }
  void corrupt_output_for_test(std::size_t index) override {
    auto* element = static_cast<unsigned char*>(out_->p) + index * elem_bytes_;
    for (std::size_t k = 0; k < elem_bytes_; ++k) element[k] ^= 0x5a;
  }

 private:
  // The lowest index whose output differs from the reference (n_ when none), on all cores.
  std::size_t first_wrong_element() const {
    std::vector<std::size_t> firsts(host_threads(), n_);
    parallel_for(n_, [&](std::size_t b, std::size_t e, unsigned t) {
      firsts[t] = memory::first_wrong_element(type_, x_->p, y_->p, out_->p, b, e);
      if (firsts[t] == e) firsts[t] = n_;
    });
    return *std::min_element(firsts.begin(), firsts.end());
  }

  AxpyType type_;
  std::size_t elem_bytes_;
  std::size_t n_;
  AxpyPath path_;
  std::unique_ptr<HostBuffer> x_, y_, out_;
};

}  // namespace

// Declared by families/memory/tests/test_host.cpp, which compares it with axpy_element over
// every fp16 and bf16 input pattern.

/// out[begin, end) = a * x + y in `type` by the loop the rows run on this CPU.
void axpy_range_for_test(AxpyType type, double a, const void* x, const void* y, void* out, std::size_t begin,
                         std::size_t end) {
  pick_path(type).fn(a, x, y, out, begin, end);
}

void add_host_axpy(WorkloadTable& table) {
  for (const char* key : {"memory/axpy/fp64", "memory/axpy/fp32", "memory/axpy/fp16", "memory/axpy/bf16"})
    table.add(key, [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
      return std::make_unique<AxpyWorkload>(c);
    });
}

}  // namespace gpubench::memory
