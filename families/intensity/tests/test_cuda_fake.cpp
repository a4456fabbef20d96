// The CUDA intensity workloads (families/intensity/cuda.cpp) end to end on the fake CUDA
// runtime (fake_cuda_runtime.cpp) with the real intensity kernels under the SIMT shim
// (fake_launchers.cpp): every kind of row is prepared, poisoned, run and verified as
// the runner does it; an output the kernel never wrote fails verification; rows no kernel is
// instantiated for are skipped with a reason; and the launch rules (families/intensity/intensity.h) hold.
// What this cannot check is the GPU itself: speed, real occupancy, real event timing.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "families/intensity/intensity.h"
#include "families/intensity/tests/fake_launchers.h"
#include "harness/cuda/cuda_backend.h"
#include "harness/cuda/cuda_device.h"
#include "harness/family.h"
#include "tests/cuda/fake_backend.h"
#include "tests/cuda/fake_cuda_runtime.h"

GPUBENCH_FAMILY(intensity)

namespace gpubench {
namespace {

// A row of the real table, shrunk to `n` elements (and for the peak rows to `fma` steps: the
// SIMT emulation runs every thread on the host) and run in the flushed mode (one plain launch
// per execution; see the fake launchers).
BenchCase row(const std::string& kernel, double fma, std::size_t n) {
  SweepOptions o;  // the full sweep: every k (the sizes are set below)
  o.backend_kind = "cuda";
  o.l2_bytes = fake_backend::kL2Bytes;
  for (BenchCase c : families::intensity::cases(o)) {
    const bool peak = c.family == "compute";
    if (c.kernel != kernel || (!peak && c.arg("fma") != fma)) continue;
    if (peak) c.args["fma"] = c.args["steps"] = fma;  // fewer steps: every thread is emulated
    c.args["n"] = static_cast<double>(n);
    c.args["bytes"] = static_cast<double>(4 * n);
    c.needs_flush = true;
    return c;
  }
  throw std::logic_error("no row " + kernel);
}

class FakeIntensity : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_cuda::state() = fake_cuda::State{};
    fake_intensity::counters() = fake_intensity::Counters{};
  }
  void TearDown() override {
    backend_.reset();
    EXPECT_TRUE(fake_cuda::state().sizes.empty()) << "device memory leaked";
    EXPECT_EQ(0, fake_intensity::counters().unsupported_in_fake);
  }
  fake_backend::FakeBackend& backend() {
    // 3 SMs: the peak rows below need more tiles than one wave (grid-stride).
    if (!backend_) backend_ = std::make_unique<fake_backend::FakeBackend>(families::intensity::add_cuda_workloads, 3);
    return *backend_;
  }
  std::unique_ptr<fake_backend::FakeBackend> backend_;
};

TEST_F(FakeIntensity, EveryKindRunsAndVerifiesLikeTheRunner) {
  // Odd sizes for the sweeps (whole tiles, a tail, several tiles per block); whole tiles for
  // the peak kernels, more tiles than one wave of the 3-SM fake device (grid-stride).
  const std::vector<BenchCase> rows = {
      row("intensity_fp32", 0.5, 3 * kernels::kSweepTileElems + 77),
      row("intensity_fp32", 16, 5 * kernels::kSweepTileElems + 3),
      row("intensity_fp32", 1, 1001),
      row("intensity_fp16x2", 8, 2 * kernels::kSweepTileElems + 9),
      row("peak_fp32_fma", 256, 30 * kernels::kPeakTileElems),
      row("peak_fp16x2_hfma2", 256, 2 * kernels::kPeakTileElems),
  };
  for (const BenchCase& c : rows) {
    SCOPED_TRACE(c.name());
    ASSERT_TRUE(backend().supports(c));
    auto w = backend().create(c);
    w->prepare();
    w->poison();
    EXPECT_FALSE(w->verify().ok) << "a poisoned output must fail verification";
    const int before = fake_intensity::counters().launches;
    EXPECT_GT(w->run(1), 0.0);  // the device time of real work
    EXPECT_GT(w->run(2), 0.0);  // the device time of real work
    w->poison();
    EXPECT_GT(w->run(2), 0.0);  // the device time of real work
    // 1 + 2 + 2 executions (the cold timer may add one untimed warm-up execution).
    EXPECT_GE(fake_intensity::counters().launches, before + 5);
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << v.message;
  }
  // 30 peak tiles on 3 SMs x 8 blocks: one full wave of 24 blocks, grid-striding over 30 tiles.
  EXPECT_EQ(24u, kernels::intensity_grid_blocks(30, 8, 3));
}

TEST_F(FakeIntensity, RowsWithoutAKernelAreSkippedWithTheReason) {
  BenchCase c = row("intensity_fp32", 16, 4096);
  c.args["steps"] = 3;  // not a power of two: no instantiation
  auto w = backend().create(c);
  try {
    w->prepare();
    FAIL() << "expected SkipCase";
  } catch (const SkipCase& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("steps=3")) << e.what();
  }
  BenchCase p = row("peak_fp32_fma", 256, kernels::kPeakTileElems + 1);  // not whole tiles
  auto wp = backend().create(p);
  EXPECT_THROW(wp->prepare(), SkipCase);
}

TEST(IntensityLaunchRules, GridAndArguments) {
  using kernels::intensity_grid_blocks;
  EXPECT_EQ(1u, intensity_grid_blocks(0, 8, 132));         // tail-only launches get one block
  EXPECT_EQ(5u, intensity_grid_blocks(5, 8, 132));         // never more blocks than tiles
  EXPECT_EQ(1056u, intensity_grid_blocks(65536, 8, 132));  // one full wave on an H100 SXM
  EXPECT_EQ(132u, intensity_grid_blocks(65536, 0, 132));   // occupancy query said 0: one per SM
  EXPECT_EQ(1u, kernels::intensity_sweep_tiles(1));
  EXPECT_EQ(1u, kernels::intensity_sweep_tiles(kernels::kSweepTileElems));
  EXPECT_EQ(2u, kernels::intensity_sweep_tiles(kernels::kSweepTileElems + 1));
  EXPECT_TRUE(kernels::peak_args_ok(kernels::kPeakTileElems * 3, 1));
  EXPECT_FALSE(kernels::peak_args_ok(0, 1));
  EXPECT_FALSE(kernels::peak_args_ok(kernels::kPeakTileElems + 4, 1));
  EXPECT_FALSE(kernels::peak_args_ok(kernels::kPeakTileElems, 0));
  EXPECT_TRUE(kernels::intensity_fp32_supported(1, 2));
  EXPECT_FALSE(kernels::intensity_fp32_supported(2, 2));
  EXPECT_FALSE(kernels::intensity_fp32_supported(4096, 1));
  EXPECT_FALSE(kernels::intensity_fp16x2_supported(3));
  // The launchers refuse what the kernels cannot do (cudaErrorInvalidValue = 1).
  float x[4] = {};
  auto* stream = reinterpret_cast<kernels::Stream>(&x[0]);  // any non-null handle: refused before use
  EXPECT_EQ(1, kernels::launch_intensity_fp32(x, x, 4, 3, 1, 1.0f, 0.0f, 1, stream));
  EXPECT_EQ(1, kernels::launch_peak_fp32(x, x, 4, 1, 1.0f, 0.0f, 1, stream));
}

}  // namespace
}  // namespace gpubench

namespace gpubench {
namespace {

TEST_F(FakeIntensity, AWrongValueAnywhereFailsVerificationNamingIt) {
  for (fake_cuda::Plant where : {fake_cuda::Plant::first, fake_cuda::Plant::middle, fake_cuda::Plant::last}) {
    auto f32 = backend().create(row("intensity_fp32", 16, 3 * kernels::kSweepTileElems + 77));
    f32->prepare();
    f32->run(1);
    fake_backend::expect_plant_caught(*f32, where, 4, "element ");
    auto f16 = backend().create(row("intensity_fp16x2", 8, 2 * kernels::kSweepTileElems + 9));
    f16->prepare();
    f16->run(1);
    fake_backend::expect_plant_caught(*f16, where, 4, "word ");
  }
}

}  // namespace
}  // namespace gpubench
