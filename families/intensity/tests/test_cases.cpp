// The intensity table (families/intensity/cases.cpp): the sweep spans 1/8..1024 FLOP/byte
// without gaps, names follow the contract, work models are exact, peak rows fit the launchers'
// constraints; and the host workloads run and verify (and a wrong output fails verification).
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <cstring>
#include <map>
#include <set>

#include "families/intensity/intensity.h"
#include "families/intensity/reference.h"
#include "families/intensity/verify.h"
#include "harness/family.h"
#include "harness/host/host_backend.h"

GPUBENCH_FAMILY(intensity)

namespace gpubench {
namespace {

SweepOptions options(const char* backend, bool quick) {
  SweepOptions o;
  o.quick = quick;
  o.backend_kind = backend;
  o.l2_bytes = 50ull << 20;  // H100
  o.memory_bytes = 80ull << 30;
  return o;
}

std::vector<BenchCase> sweep(const SweepOptions& o, const std::string& kernel) {
  std::vector<BenchCase> out;
  for (auto& c : families::intensity::cases(o)) {
    if (c.kernel == kernel) out.push_back(c);
  }
  return out;
}

TEST(IntensityCases, SweepSpansAnEighthTo1024FlopPerByte) {
  for (const char* backend : {"cuda", "host"}) {
    for (bool quick : {false, true}) {
      double lo = 1e30, hi = 0;
      for (const auto& c : families::intensity::cases(options(backend, quick))) {
        if (c.family != "roofline") continue;
        lo = std::min(lo, c.work.intensity());
        hi = std::max(hi, c.work.intensity());
      }
      EXPECT_EQ(0.125, lo) << backend << " quick=" << quick;
      EXPECT_EQ(1024.0, hi) << backend << " quick=" << quick;
    }
  }
}

// Consecutive points of each precision double the intensity: no gap hides the ridge.
TEST(IntensityCases, EachPrecisionDoublesItsIntensityStepByStep) {
  for (const char* kernel : {"intensity_fp32", "intensity_fp16x2"}) {
    const auto rows = sweep(options("cuda", false), kernel);
    ASSERT_EQ(std::string(kernel) == "intensity_fp32" ? 13u : 12u, rows.size()) << kernel;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      EXPECT_EQ(2 * rows[i - 1].work.intensity(), rows[i].work.intensity()) << rows[i].name();
    }
  }
}

// --quick keeps every other point, x4 per step, with the sweep's last (k = 2048), FP32 its first
// (the half-FMA point), and a point each side of the ridge (an H100's FP32 ridge is near 20
// FLOP/byte).
TEST(IntensityCases, QuickKeepsEveryOtherPointTheTopAndFp32sBottom) {
  for (const char* kernel : {"intensity_fp32", "intensity_fp16x2"}) {
    const auto full = sweep(options("cuda", false), kernel);
    const auto quick = sweep(options("cuda", true), kernel);
    ASSERT_EQ(std::string(kernel) == "intensity_fp32" ? 7u : 6u, quick.size()) << kernel;
    EXPECT_EQ(quick.back().arg("fma"), 2048.0) << kernel;
    EXPECT_EQ(quick.back().work.intensity(), full.back().work.intensity()) << kernel;
    if (std::string(kernel) == "intensity_fp32") {
      EXPECT_EQ(quick.front().work.intensity(), full.front().work.intensity());
    }
    for (std::size_t i = 1; i < quick.size(); ++i)
      EXPECT_EQ(4 * quick[i - 1].work.intensity(), quick[i].work.intensity()) << quick[i].name();
  }
  bool below = false, above = false;
  for (const auto& c : sweep(options("cuda", true), "intensity_fp32")) {
    below = below || (c.work.intensity() < 20 && c.work.intensity() >= 5);
    above = above || (c.work.intensity() > 20 && c.work.intensity() <= 80);
  }
  EXPECT_TRUE(below && above);
}

TEST(IntensityCases, NamesFollowTheContract) {
  const RE2 re("^(bandwidth|compute|roofline)/[a-z0-9_]+/[a-z0-9_]+/[A-Za-z0-9_:,.]+$");
  std::set<std::string> names;
  for (const auto& c : families::intensity::cases(options("cuda", false))) {
    EXPECT_TRUE(RE2::FullMatch(c.name(), re)) << c.name();
    EXPECT_EQ("kernel", c.variant) << c.name();  // hand-written, not a library reference
    EXPECT_TRUE(names.insert(c.name()).second) << "duplicate " << c.name();
  }
  EXPECT_EQ(1u, names.count("roofline/intensity_fp32/kernel/fma:0.5,bytes:256MiB"));
  EXPECT_EQ(1u, names.count("roofline/intensity_fp32/kernel/fma:2048,bytes:256MiB"));
  EXPECT_EQ(1u, names.count("roofline/intensity_fp16x2/kernel/fma:1,bytes:256MiB"));
  EXPECT_EQ(1u, names.count("compute/peak_fp32_fma/kernel/fma:4096,bytes:256MiB"));
  EXPECT_EQ(1u, names.count("compute/peak_fp16x2_hfma2/kernel/fma:4096,bytes:256MiB"));
  // --filter=roofline selects the sweep and nothing else.
  for (const auto& c : all_cases(options("cuda", false))) {
    EXPECT_EQ(RE2::PartialMatch(c.name(), RE2("roofline")), c.family == "roofline") << c.name();
  }
}

TEST(IntensityCases, WorkModelsAreExact) {
  for (const auto& c : families::intensity::cases(options("cuda", false))) {
    const double n = c.arg("n"), fma = c.arg("fma");
    EXPECT_EQ(c.arg("bytes"), 4 * n) << c.name();
    EXPECT_EQ(8 * n, c.work.useful_bytes) << c.name();  // every element read once and written once
    EXPECT_EQ(8 * n, c.work.working_set_bytes) << c.name();
    EXPECT_EQ(Metric::TFLOPS, c.work.metric) << c.name();
    const bool fp32 = c.kernel == "intensity_fp32" || c.kernel == "peak_fp32_fma";
    // FP32: 2 FLOP per FMA per float; FP16x2: 2 FMA (4 FLOP) per fma.rn.f16x2 per word.
    EXPECT_EQ((fp32 ? 2.0 : 4.0) * n * fma, c.work.flop) << c.name();
    EXPECT_EQ(fp32 ? PeakKind::fp32 : PeakKind::none, c.work.peak) << c.name();
    EXPECT_EQ(c.arg("steps") / c.arg("every"), fma) << c.name();
  }
  // The half-FMA point: 256 MiB of floats, one FMA on every other one.
  const auto rows = sweep(options("cuda", false), "intensity_fp32");
  EXPECT_EQ(64.0 * 1024 * 1024, rows.front().work.flop);
  EXPECT_EQ(2.0, rows.front().arg("every"));
}

TEST(IntensityCases, RowsFitTheLaunchers) {
  for (const char* backend : {"cuda", "host"}) {
    for (bool quick : {false, true}) {
      for (const auto& c : families::intensity::cases(options(backend, quick))) {
        const int steps = static_cast<int>(c.arg("steps")), every = static_cast<int>(c.arg("every"));
        const auto n = static_cast<std::size_t>(c.arg("n"));
        if (c.kernel == "intensity_fp32") {
          EXPECT_TRUE(kernels::intensity_fp32_supported(steps, every)) << c.name();
        } else if (c.kernel == "intensity_fp16x2") {
          EXPECT_TRUE(kernels::intensity_fp16x2_supported(steps)) << c.name();
        } else {
          EXPECT_EQ(0, steps % kernels::kPeakStepsPerRound) << c.name();
          EXPECT_EQ(0u, n % kernels::kPeakTileElems) << c.name();
          // Far right of any ridge (H100 FP32: 67 TFLOP/s / 3.35 TB/s = 20 FLOP/byte).
          EXPECT_GE(c.work.intensity(), 64.0) << c.name();
        }
      }
    }
  }
}

TEST(IntensityCases, SizesPerBackend) {
  // GPU: far beyond L2 so the low-k points are DRAM-bound.
  for (const auto& c : sweep(options("cuda", false), "intensity_fp32")) {
    EXPECT_GE(c.work.working_set_bytes, 8.0 * (50 << 20)) << c.name();
    EXPECT_TRUE(c.needs_flush) << c.name();
  }
  for (bool quick : {true}) {
    for (const char* backend : {"cuda", "host"}) {
      for (const auto& c : families::intensity::cases(options(backend, quick))) {
        EXPECT_LE(c.work.working_set_bytes, 64.0 * (1 << 20)) << c.name();
      }
    }
  }
  // Small device memory: an eighth of it at most per buffer.
  SweepOptions small = options("cuda", false);
  small.memory_bytes = 1ull << 30;
  for (const auto& c : sweep(small, "intensity_fp16x2")) EXPECT_LE(c.arg("bytes"), 128.0 * (1 << 20)) << c.name();
}

// ---- the host workloads, end to end (prepare, poison, run, verify) ----

BenchCase find_case(const std::string& kernel, double fma) {
  for (auto& c : families::intensity::cases(options("host", true))) {
    if (c.kernel == kernel && c.arg("fma") == fma) return c;
  }
  throw std::logic_error("no case " + kernel);
}

TEST(IntensityHost, WorkloadsRunAndVerify) {
  auto backend = make_host_backend(host_workloads());
  for (const auto& [kernel, fma] : std::vector<std::pair<std::string, double>>{
           {"intensity_fp32", 0.5}, {"intensity_fp32", 8}, {"peak_fp32_fma", 256}}) {
    const BenchCase c = find_case(kernel, fma);
    ASSERT_TRUE(backend->supports(c)) << c.name();
    auto w = backend->create(c);
    w->prepare();
    w->poison();
    EXPECT_FALSE(w->verify().ok) << c.name() << ": a poisoned output must fail";
    EXPECT_GT(w->run(2), 0.0) << c.name();
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << c.name() << ": " << v.message;
    const auto extra = w->extra_counters(1.0);
    ASSERT_EQ(1u, extra.count("vector_bits")) << c.name();
    // The widest vectors this CPU has: what the host number was measured with.
    const double widest = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") ? 512
                          : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")       ? 256
                                                                                                  : 32;
    EXPECT_EQ(extra.at("vector_bits"), widest) << c.name();
  }
}

// FP16x2 rows are registered exactly where the CPU has native binary16 FMA.
TEST(IntensityHost, Fp16RowsOnlyWithNativeHalfFma) {
  auto backend = make_host_backend(host_workloads());
  const BenchCase c = find_case("intensity_fp16x2", 8);
#if defined(__x86_64__)
  const bool native =
      __builtin_cpu_supports("avx512fp16") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
#else
  const bool native = false;
#endif
  ASSERT_EQ(native, backend->supports(c));
  if (!native) GTEST_SKIP() << "no AVX512-FP16 on this CPU: the host FP16x2 rows are not registered";
  auto w = backend->create(c);
  w->prepare();
  w->poison();
  w->run(1);
  const Verification v = w->verify();
  EXPECT_TRUE(v.ok) << v.message;
}

// ---- the checks themselves ----

TEST(IntensityVerify, CatchesAWrongStepCountAWrongElementAndAModifiedInput) {
  namespace ik = kernels::intensity;
  const float a = ik::Coefficients::kA32, b = ik::Coefficients::kB32;
  const std::size_t n = 5000;
  std::vector<float> in(n), out(n);
  fill_intensity_f32(in.data(), n, 42);
  for (std::size_t i = 0; i < n; ++i) out[i] = ik::fma_chain_f32(in[i], a, b, 2048);
  EXPECT_TRUE(check_intensity_f32(in.data(), out.data(), n, 2048, 1, a, b, 1e-6).ok);
  // One step fewer is a different result everywhere (the coefficients keep the chain k-sensitive).
  EXPECT_FALSE(check_intensity_f32(in.data(), out.data(), n, 2047, 1, a, b, 1e-6).ok);
  // The half-FMA layout: odd elements must be copies of the input.
  EXPECT_FALSE(check_intensity_f32(in.data(), out.data(), n, 2048, 2, a, b, 1e-6).ok);
  auto broken = out;
  broken[4321] = std::nextafter(broken[4321], 10.0f);
  broken[4322] = 0;
  const Verification v = check_intensity_f32(in.data(), broken.data(), n, 2048, 1, a, b, 1e-6);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(std::string::npos, v.message.find("element 4322")) << v.message;  // one ulp passes, a zero does not
  auto moved = in;
  moved[7] += 1e-4f;
  EXPECT_NE(std::string::npos,
            check_intensity_f32(moved.data(), out.data(), n, 2048, 1, a, b, 1e-6).message.find("modified"));

  const std::uint32_t ha = ik::splat_half2(ik::Coefficients::kA16), hb = ik::splat_half2(ik::Coefficients::kB16);
  std::vector<std::uint32_t> hin(n), hout(n);
  fill_intensity_f16x2(hin.data(), n, 7);
  for (std::size_t i = 0; i < n; ++i) hout[i] = ik::fma_chain_f16x2(hin[i], ha, hb, 3);
  EXPECT_TRUE(check_intensity_f16x2(hin.data(), hout.data(), n, 3, ha, hb, 0).ok);
  EXPECT_FALSE(check_intensity_f16x2(hin.data(), hout.data(), n, 2, ha, hb, 0).ok);
  hout[99] ^= 0x00010000u;  // one ulp in the high lane: within 1 ulp, not within 0
  EXPECT_TRUE(check_intensity_f16x2(hin.data(), hout.data(), n, 3, ha, hb, 1).ok);
  const Verification hv = check_intensity_f16x2(hin.data(), hout.data(), n, 3, ha, hb, 0);
  EXPECT_NE(std::string::npos, hv.message.find("word 99 lane 1")) << hv.message;
}

// The inputs are random over the grid, never all one value (a constant input would hide
// indexing bugs) and stay exact halves / floats of the grid.
TEST(IntensityVerify, InputsCoverTheGrid) {
  const std::size_t n = 1 << 16;
  std::vector<float> in(n);
  fill_intensity_f32(in.data(), n, 1);
  std::set<float> distinct(in.begin(), in.end());
  EXPECT_GT(distinct.size(), 4000u);
  for (float x : distinct) {
    EXPECT_GE(x, kernels::intensity::Coefficients::kLo);
    EXPECT_LT(x, kernels::intensity::Coefficients::kHi);
  }
  std::vector<std::uint32_t> h(n);
  fill_intensity_f16x2(h.data(), n, 1);
  std::set<std::uint32_t> lanes;
  for (auto w : h) {
    lanes.insert(w & 0xFFFFu);
    lanes.insert(w >> 16);
  }
  EXPECT_EQ(static_cast<std::size_t>(kIntensityGridF16), lanes.size());
}

}  // namespace
}  // namespace gpubench
