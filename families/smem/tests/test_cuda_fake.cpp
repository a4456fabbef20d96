// The CUDA shared-memory workload (families/smem/cuda.cpp) end to end on the fake CUDA runtime:
// the row of the real table is prepared, poisoned, run and verified as the runner does it; a
// wrong output fails verification; a shared array larger than the device allows is skipped
// with the reason; the bytes model is what the launch reads.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "families/smem/smem.h"
#include "families/smem/tests/fake_launchers.h"
#include "harness/family.h"
#include "tests/cuda/fake_backend.h"
#include "tests/cuda/fake_cuda_runtime.h"

GPUBENCH_FAMILY(smem)

namespace gpubench {
namespace {

BenchCase smem_row(bool quick) {
  SweepOptions o = sweep_options(fake_backend::fake_device(), "cuda", quick);
  const auto cases = families::smem::cases(o);
  EXPECT_EQ(cases.size(), 1u);
  return cases.at(0);
}

class FakeSmem : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_cuda::state() = fake_cuda::State{};
    fake_smem::corrupt = false;
    fake_smem::launches = 0;
  }
  void TearDown() override {
    backend_.reset();
    EXPECT_TRUE(fake_cuda::state().sizes.empty()) << "device memory leaked";
  }
  fake_backend::FakeBackend& backend() {
    if (!backend_) backend_ = std::make_unique<fake_backend::FakeBackend>(families::smem::add_cuda_workloads);
    return *backend_;
  }
  std::unique_ptr<fake_backend::FakeBackend> backend_;
};

TEST_F(FakeSmem, TheRowRunsAndVerifiesLikeTheRunner) {
  BenchCase c = smem_row(true);
  ASSERT_TRUE(backend().supports(c)) << backend().unavailable_reason(c);
  EXPECT_EQ(c.arg("blocks"), 4 * fake_backend::fake_device().sm_count);  // 4 blocks per SM
  auto w = backend().create(c);
  const Verification v = fake_backend::run_like_the_runner(*w, 3);
  EXPECT_TRUE(v.ok) << v.message;
  EXPECT_GE(fake_smem::launches, 4);  // at least one per run() (a graph records a batch once)
  const auto k = w->extra_counters(1e-3);
  EXPECT_EQ(k.at("blocks"), c.arg("blocks"));
  EXPECT_EQ(k.at("passes_per_launch"), c.arg("passes"));
  EXPECT_EQ(k.at("cuda_graph"), 1.0);
}

TEST_F(FakeSmem, APoisonedOrWrongOutputFailsVerification) {
  auto w = backend().create(smem_row(true));
  w->prepare();
  w->poison();
  EXPECT_FALSE(w->verify().ok) << "an output the kernel never wrote";
  fake_smem::corrupt = true;
  const Verification v = fake_backend::run_like_the_runner(*w, 2);
  ASSERT_FALSE(v.ok);
  EXPECT_NE(v.message.find("expected"), std::string::npos) << v.message;
}

TEST_F(FakeSmem, AnArrayLargerThanTheDeviceAllowsIsSkippedWithTheReason) {
  BenchCase c = smem_row(true);
  c.args["bytes"] = 256 * 1024;  // above the fake H100's 227 KiB
  auto w = backend().create(c);
  try {
    w->prepare();
    FAIL() << "expected SkipCase";
  } catch (const SkipCase& e) {
    EXPECT_NE(std::string(e.what()).find("this device allows"), std::string::npos) << e.what();
  }
  c.args["bytes"] = 3000;  // not whole 4 KiB rows
  auto bad = backend().create(c);
  EXPECT_THROW(bad->prepare(), SkipCase);
}

TEST_F(FakeSmem, TheBytesModelIsEveryPassOfEveryBlock) {
  for (bool quick : {false, true}) {
    const BenchCase c = smem_row(quick);
    EXPECT_EQ(c.work.useful_bytes,
              kernels::smem_bytes_read(static_cast<int>(c.arg("blocks")), static_cast<std::size_t>(c.arg("bytes")),
                                       static_cast<int>(c.arg("passes"))));
    EXPECT_EQ(c.work.peak, PeakKind::smem);
    EXPECT_EQ(c.level, "smem");
    EXPECT_EQ(c.min_cc, 70);
  }
}

TEST_F(FakeSmem, AWrongValueAnywhereFailsVerificationNamingIt) {
  auto w = backend().create(smem_row(true));
  w->prepare();
  w->run(1);
  for (fake_cuda::Plant where : {fake_cuda::Plant::first, fake_cuda::Plant::middle, fake_cuda::Plant::last})
    fake_backend::expect_plant_caught(*w, where, 4, "out[");
}

}  // namespace
}  // namespace gpubench
