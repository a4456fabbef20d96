// Host versions of the intensity sweep and the peak-FMA benchmarks (rows in
// families/intensity/cases.cpp): the same recurrence x <- x * a + b, the same names, work models and
// checks as the CUDA kernels, on all cores, so a host roofline is a real measurement too.
//
// Each thread walks its chunk in blocks of L elements held in vector registers across all k
// steps (L / vector width independent chains: 8 per thread, which covers the 4-cycle FMA
// latency on two FMA ports), so a large k is register-bound and a small k memory-bound, as on
// a GPU. The loop is plain C++ that the compiler vectorises; it is compiled three times (AVX-512,
// AVX2+FMA, baseline) and picked at run time. std::fma is one IEEE rounding on every path, so
// outputs equal the reference bit for bit (the baseline path calls libm's fmaf: slow, correct).
// The vector width used is reported with each result (counter vector_bits: 512, 256 or 32).
// FP16x2 runs only where the CPU has native binary16 FMA (AVX512-FP16): anything else would be
// a measurement of a conversion emulation, so the rows are not registered there.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "families/intensity/reference.h"
#include "families/intensity/verify.h"
#include "harness/family.h"
#include "harness/host/corruptible_output.h"
#include "harness/host/host_backend.h"
#include "harness/host/host_buffer.h"
#include "harness/host/host_timer.h"
#include "harness/host/parallel.h"
#include "harness/verify.h"

GPUBENCH_FAMILY(intensity)

namespace gpubench {

namespace {

using Coeff = kernels::intensity::Coefficients;
constexpr std::uint64_t kSeed = 0x2f6b1c3d5e7a9b0dull;

#if defined(__x86_64__) && defined(__FLT16_MAX__)
#define GPUBENCH_HOST_FP16 1
#else
#define GPUBENCH_HOST_FP16 0
#endif

// k steps on every `every`-th element of [begin, end); begin is a multiple of L, so the lane
// index within a block has the parity of the element index.
template <int L>
__attribute__((always_inline)) inline void fma_blocks_f32(const float* in, float* out, std::size_t begin,
                                                          std::size_t end, long long k, int every, float a, float b) {
  std::size_t i = begin;
  for (; i + L <= end; i += L) {
    float v[L];
    for (int l = 0; l < L; ++l) v[l] = in[i + l];
    if (every == 1) {
      for (long long s = 0; s < k; ++s) {
        for (int l = 0; l < L; ++l) v[l] = std::fma(v[l], a, b);
      }
    } else {
      for (long long s = 0; s < k; ++s) {
        for (int l = 0; l < L; ++l) v[l] = l % 2 == 0 ? std::fma(v[l], a, b) : v[l];
      }
    }
    for (int l = 0; l < L; ++l) out[i + l] = v[l];
  }
  for (; i < end; ++i) {
    float x = in[i];
    if (i % static_cast<std::size_t>(every) == 0) {
      for (long long s = 0; s < k; ++s) x = std::fma(x, a, b);
    }
    out[i] = x;
  }
}

// 8 chains of 16 floats (zmm), of 8 floats (ymm); the baseline keeps 16 scalar chains.
constexpr std::size_t kBlockAvx512 = 128, kBlockAvx2 = 64, kBlockBase = 16;

__attribute__((target("avx512f,avx512vl,fma"))) void fma_f32_avx512(const float* in, float* out, std::size_t b,
                                                                    std::size_t e, long long k, int every, float x,
                                                                    float y) {
  fma_blocks_f32<kBlockAvx512>(in, out, b, e, k, every, x, y);
}
__attribute__((target("avx2,fma"))) void fma_f32_avx2(const float* in, float* out, std::size_t b, std::size_t e,
                                                      long long k, int every, float x, float y) {
  fma_blocks_f32<kBlockAvx2>(in, out, b, e, k, every, x, y);
}
void fma_f32_base(const float* in, float* out, std::size_t b, std::size_t e, long long k, int every, float x, float y) {
  fma_blocks_f32<kBlockBase>(in, out, b, e, k, every, x, y);
}

using FmaF32 = void (*)(const float*, float*, std::size_t, std::size_t, long long, int, float, float);

struct IsaChoice {
  FmaF32 fn;
  std::size_t block;
  int vector_bits;  // reported with the result: what the host number was measured with
};

IsaChoice pick_f32() {
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
    return {fma_f32_avx512, kBlockAvx512, 512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {fma_f32_avx2, kBlockAvx2, 256};
  return {fma_f32_base, kBlockBase, 32};
}

#if GPUBENCH_HOST_FP16
// binary16 lanes: 8 chains of 32 halves (zmm). Halves are moved as bit patterns (the buffers are
// half2 words, low lane first, i.e. element 2i then 2i+1 in memory order).
constexpr std::size_t kBlockFp16 = 256;

__attribute__((target("avx512fp16,avx512vl,avx512bw,avx512f"))) void fma_f16_avx512(const std::uint16_t* in,
                                                                                    std::uint16_t* out,
                                                                                    std::size_t begin, std::size_t end,
                                                                                    long long k, std::uint16_t a_bits,
                                                                                    std::uint16_t b_bits) {
  _Float16 a, b;
  std::memcpy(&a, &a_bits, sizeof a);
  std::memcpy(&b, &b_bits, sizeof b);
  std::size_t i = begin;
  for (; i + kBlockFp16 <= end; i += kBlockFp16) {
    _Float16 v[kBlockFp16];
    std::memcpy(v, in + i, sizeof v);
    for (long long s = 0; s < k; ++s) {
      for (std::size_t l = 0; l < kBlockFp16; ++l) v[l] = __builtin_fmaf16(v[l], a, b);
    }
    std::memcpy(out + i, v, sizeof v);
  }
  for (; i < end; ++i) {
    _Float16 x;
    std::memcpy(&x, in + i, sizeof x);
    for (long long s = 0; s < k; ++s) x = __builtin_fmaf16(x, a, b);
    std::memcpy(out + i, &x, sizeof x);
  }
}

bool have_native_fp16() {
  static const bool yes =
      __builtin_cpu_supports("avx512fp16") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  return yes;
}
#endif

// Steps per element and "every" from the case (the half-FMA point has steps 1, every 2).
long long case_steps(const BenchCase& c) { return static_cast<long long>(c.arg("steps")); }
int case_every(const BenchCase& c) { return static_cast<int>(c.arg("every")); }

class FmaF32Workload final : public Workload, public CorruptibleOutput {
 public:
  explicit FmaF32Workload(const BenchCase& c)
      : n_(static_cast<std::size_t>(c.arg("n"))), steps_(case_steps(c)), every_(case_every(c)), isa_(pick_f32()) {}
  void prepare() override {
    in_ = std::make_unique<HostBuffer>(n_ * 4);
    out_ = std::make_unique<HostBuffer>(n_ * 4);
    fill_intensity_f32(in_->as<float>(), n_, kSeed);
  }
  void poison() override { poison_fill(out_->p, n_ * 4); }
  double run(int batch) override {
    const float* in = in_->as<const float>();
    float* out = out_->as<float>();
    return time_seconds([&] {
      parallel_for(
          n_,
          [&](std::size_t b, std::size_t e, unsigned) {
            for (int r = 0; r < batch; ++r) {
              isa_.fn(in, out, b, e, steps_, every_, Coeff::kA32, Coeff::kB32);
              asm volatile("" ::: "memory");  // each repetition really stores
            }
          },
          isa_.block);
    });
  }
  Verification verify() override {
    return check_intensity_f32(in_->as<const float>(), out_->as<const float>(), n_, steps_, every_, Coeff::kA32,
                               Coeff::kB32, kIntensityF32RelTol);
  }
  std::map<std::string, double> extra_counters(double /*seconds_per_op*/) override {
    return {{"vector_bits", isa_.vector_bits}};
  }
  std::size_t output_elements() const override { return n_; }
  void corrupt_output_for_test(std::size_t index) override { out_->as<std::uint32_t>()[index] ^= 0x5a5a5a5au; }

 private:
  std::size_t n_;
  long long steps_;
  int every_;
  IsaChoice isa_;
  std::unique_ptr<HostBuffer> in_, out_;
};

#if GPUBENCH_HOST_FP16
class FmaF16x2Workload final : public Workload, public CorruptibleOutput {
 public:
  explicit FmaF16x2Workload(const BenchCase& c) : n_(static_cast<std::size_t>(c.arg("n"))), steps_(case_steps(c)) {}
  void prepare() override {
    if (!have_native_fp16()) throw SkipCase("this CPU has no native binary16 FMA (AVX512-FP16)");
    in_ = std::make_unique<HostBuffer>(n_ * 4);
    out_ = std::make_unique<HostBuffer>(n_ * 4);
    fill_intensity_f16x2(in_->as<std::uint32_t>(), n_, kSeed);
  }
  void poison() override { poison_fill(out_->p, n_ * 4); }
  double run(int batch) override {
    const auto* in = in_->as<const std::uint16_t>();
    auto* out = out_->as<std::uint16_t>();
    const auto a = static_cast<std::uint16_t>(kernels::intensity::splat_half2(Coeff::kA16));
    const auto b = static_cast<std::uint16_t>(kernels::intensity::splat_half2(Coeff::kB16));
    return time_seconds([&] {
      parallel_for(
          2 * n_,
          [&](std::size_t lo, std::size_t hi, unsigned) {
            for (int r = 0; r < batch; ++r) {
              fma_f16_avx512(in, out, lo, hi, steps_, a, b);
              asm volatile("" ::: "memory");
            }
          },
          kBlockFp16);
    });
  }
  Verification verify() override {
    return check_intensity_f16x2(in_->as<const std::uint32_t>(), out_->as<const std::uint32_t>(), n_, steps_,
                                 kernels::intensity::splat_half2(Coeff::kA16),
                                 kernels::intensity::splat_half2(Coeff::kB16), kIntensityF16Ulps);
  }
  std::map<std::string, double> extra_counters(double /*seconds_per_op*/) override { return {{"vector_bits", 512}}; }
  std::size_t output_elements() const override { return n_; }
  void corrupt_output_for_test(std::size_t index) override { out_->as<std::uint32_t>()[index] ^= 0x5a5a5a5au; }

 private:
  std::size_t n_;
  long long steps_;
  std::unique_ptr<HostBuffer> in_, out_;
};
#endif

}  // namespace

void families::intensity::add_host_workloads(WorkloadTable& table) {
  auto f32 = [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
    return std::make_unique<FmaF32Workload>(c);
  };
  table.add("roofline/intensity_fp32/kernel", f32);
  table.add("compute/peak_fp32_fma/kernel", f32);
#if GPUBENCH_HOST_FP16
  if (have_native_fp16()) {
    auto f16 = [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
      return std::make_unique<FmaF16x2Workload>(c);
    };
    table.add("roofline/intensity_fp16x2/kernel", f16);
    table.add("compute/peak_fp16x2_hfma2/kernel", f16);
    return;
  }
#endif
  table.not_here("roofline/intensity_fp16x2/kernel", "this CPU has no native binary16 FMA (AVX512-FP16)");
  table.not_here("compute/peak_fp16x2_hfma2/kernel", "this CPU has no native binary16 FMA (AVX512-FP16)");
}

}  // namespace gpubench
