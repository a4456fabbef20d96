// The roofline intensity sweep and the peak-FMA benchmarks on a CUDA device. Names, arguments
// and work models come from families/intensity/cases.cpp; kernels from
// families/intensity/intensity.h.
//
// Inputs are seeded random values of the verification grid (families/intensity/verify.h), filled
// on the host and copied; outputs are poisoned by poison(), copied back and every element is
// checked against the bit-exact host recurrence by verify(). Sizes that do not fit in free
// device memory are skipped with the reason. Timing is harness/cuda/timing.h's (one event pair
// per L2-flushed run for the DRAM-sized sweep, a graph of the batch otherwise).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "families/intensity/intensity.h"
#include "families/intensity/reference.h"
#include "families/intensity/verify.h"
#include "harness/cuda/cuda_backend.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/cuda_workload.h"
#include "harness/cuda/device_buffer.h"
#include "harness/cuda/timing.h"
#include "harness/family.h"

GPUBENCH_FAMILY(intensity)

namespace gpubench {

namespace {

using Coeff = kernels::intensity::Coefficients;

enum class Kind { sweep_fp32, sweep_fp16x2, peak_fp32, peak_fp16x2 };

constexpr bool is_fp32(Kind k) { return k == Kind::sweep_fp32 || k == Kind::peak_fp32; }

template <Kind K>
class IntensityWorkload final : public CudaWorkload {
 public:
  IntensityWorkload(const BenchCase& c, CudaDevice& dev)
      : CudaWorkload(c, dev),
        n_(static_cast<std::size_t>(c.arg("n"))),
        steps_(static_cast<int>(c.arg("steps"))),
        every_(static_cast<int>(c.arg("every"))) {}

  void prepare() override {
    // Reject what the launchers would reject, before allocating.
    if (K == Kind::sweep_fp32 && !kernels::intensity_fp32_supported(steps_, every_)) throw SkipCase(bad_args());
    if (K == Kind::sweep_fp16x2 && !kernels::intensity_fp16x2_supported(steps_)) throw SkipCase(bad_args());
    if ((K == Kind::peak_fp32 || K == Kind::peak_fp16x2) &&
        (steps_ % kernels::kPeakStepsPerRound != 0 ||
         !kernels::peak_args_ok(n_, steps_ / kernels::kPeakStepsPerRound))) {
      throw SkipCase(bad_args());
    }
    const std::size_t bytes = n_ * 4;
    begin_prepare(2 * bytes);
    in_ = DeviceBuffer(bytes);
    out_ = DeviceBuffer(bytes);
    if (is_fp32(K)) {
      host_f32_.assign(n_, 0.0f);
      fill_intensity_f32(host_f32_.data(), n_, seed_);
      copy_to_device(in_.get(), host_f32_.data(), bytes, dev_.stream());
    } else {
      host_f16x2_.assign(n_, 0);
      fill_intensity_f16x2(host_f16x2_.data(), n_, seed_);
      copy_to_device(in_.get(), host_f16x2_.data(), bytes, dev_.stream());
    }
  }

  void poison() override { poison_device(out_.get(), n_ * 4, dev_.stream()); }

  double run(int batch) override {
    const void* in = in_.get();
    void* out = out_.get();
    const std::size_t n = n_;
    const int steps = steps_, every = every_, sms = dev_.sm_count();
    const std::uint32_t ha = kernels::intensity::splat_half2(Coeff::kA16);
    const std::uint32_t hb = kernels::intensity::splat_half2(Coeff::kB16);
    return timed(batch, [=](CUstream_st* s, int) -> int {
      switch (K) {
        case Kind::sweep_fp32:
          return kernels::launch_intensity_fp32(static_cast<const float*>(in), static_cast<float*>(out), n, steps,
                                                every, Coeff::kA32, Coeff::kB32, sms, s);
        case Kind::sweep_fp16x2:
          return kernels::launch_intensity_fp16x2(static_cast<const std::uint32_t*>(in),
                                                  static_cast<std::uint32_t*>(out), n, steps, ha, hb, sms, s);
        case Kind::peak_fp32:
          return kernels::launch_peak_fp32(static_cast<const float*>(in), static_cast<float*>(out), n,
                                           steps / kernels::kPeakStepsPerRound, Coeff::kA32, Coeff::kB32, sms, s);
        case Kind::peak_fp16x2:
          return kernels::launch_peak_fp16x2(static_cast<const std::uint32_t*>(in), static_cast<std::uint32_t*>(out), n,
                                             steps / kernels::kPeakStepsPerRound, ha, hb, sms, s);
      }
      return 1;  // cudaErrorInvalidValue
    });
  }

  Verification verify() override {
    if (is_fp32(K)) {
      const float* got = fetch_to_host(out_.as<const float>(), n_, dev_.stream());
      return check_intensity_f32(host_f32_.data(), got, n_, steps_, every_, Coeff::kA32, Coeff::kB32,
                                 kIntensityF32RelTol);
    }
    const std::uint32_t* got = fetch_to_host(out_.as<const std::uint32_t>(), n_, dev_.stream());
    return check_intensity_f16x2(host_f16x2_.data(), got, n_, steps_, kernels::intensity::splat_half2(Coeff::kA16),
                                 kernels::intensity::splat_half2(Coeff::kB16), kIntensityF16Ulps);
  }

 private:
  std::string bad_args() const {
    return "no kernel instantiated for steps=" + std::to_string(steps_) + ", every=" + std::to_string(every_) +
           ", n=" + std::to_string(n_);
  }

  std::size_t n_;
  int steps_;
  int every_;
  std::vector<float> host_f32_;            // the FP32 inputs (FP32 kinds)
  std::vector<std::uint32_t> host_f16x2_;  // the half2 input words (FP16x2 kinds)
  DeviceBuffer in_, out_;
};

template <Kind K>
std::unique_ptr<Workload> make(const BenchCase& c, Backend& b) {
  return std::make_unique<IntensityWorkload<K>>(c, cuda_device_of(b));
}

}  // namespace

void families::intensity::add_cuda_workloads(WorkloadTable& t) {
  t.add("roofline/intensity_fp32/kernel", &make<Kind::sweep_fp32>);
  t.add("roofline/intensity_fp16x2/kernel", &make<Kind::sweep_fp16x2>);
  t.add("compute/peak_fp32_fma/kernel", &make<Kind::peak_fp32>);
  t.add("compute/peak_fp16x2_hfma2/kernel", &make<Kind::peak_fp16x2>);
}

}  // namespace gpubench
