// The GEMM workloads (families/gemm/cuda.cpp) end to end on the fake CUDA runtime, with the REAL
// launchers of gemm.cu (a host copy, kernels/launch.cuh) running the SGEMM and mma.sync FP16
// kernels under the SIMT emulation (the WMMA baseline through kernels/wmma_emulation.h), and a
// host stand-in for cuBLAS (fake_cublas.cpp). Every variant is prepared, poisoned,
// run and verified as the runner does it, at small odd shapes; a wrong element anywhere fails
// verification naming it; a cuBLAS failure is an error in cuBLAS's words; a shape a kernel
// cannot run is skipped with the reason.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "families/gemm/tests/fake_cublas.h"
#include "harness/family.h"
#include "tests/cuda/fake_backend.h"
#include "tests/cuda/fake_cuda_runtime.h"

GPUBENCH_FAMILY(gemm)

namespace gpubench {
namespace {

// The row `key` of the real table, at shape m x n x k.
BenchCase row(const std::string& key, int m, int n, int k) {
  SweepOptions o = sweep_options(fake_backend::fake_device(), "cuda", true);
  for (BenchCase c : families::gemm::cases(o)) {
    if (c.key() != key) continue;
    c.args["m"] = m;
    c.args["n"] = n;
    c.args["k"] = k;
    return c;
  }
  throw std::logic_error("no row " + key);
}

class FakeGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_cuda::state() = fake_cuda::State{};
    fake_cublas::state() = fake_cublas::State{};
  }
  fake_backend::FakeBackend& backend() {
    if (!backend_) backend_ = std::make_unique<fake_backend::FakeBackend>(families::gemm::add_cuda_workloads);
    return *backend_;
  }
  std::unique_ptr<fake_backend::FakeBackend> backend_;
};

TEST_F(FakeGemm, EveryVariantRunsAndVerifiesLikeTheRunner) {
  struct Shape {
    const char* key;
    int m, n, k;
    bool library;
  };
  for (const Shape& s :
       {Shape{"compute/sgemm/kernel", 131, 137, 73, false}, Shape{"compute/sgemm/naive", 67, 45, 33, false},
        Shape{"compute/sgemm/cublas", 64, 48, 40, true}, Shape{"compute/hgemm/kernel", 131, 136, 72, false},
        Shape{"compute/hgemm/wmma", 128, 128, 64, false}, Shape{"compute/hgemm/cublas", 64, 64, 32, true}}) {
    SCOPED_TRACE(s.key);
    const BenchCase c = row(s.key, s.m, s.n, s.k);
    ASSERT_TRUE(backend().supports(c)) << backend().unavailable_reason(c);
    auto w = backend().create(c);
    const int cublas_before = fake_cublas::state().calls;
    const Verification v = fake_backend::run_like_the_runner(*w, 2);
    EXPECT_TRUE(v.ok) << v.message;
    EXPECT_EQ(fake_cublas::state().calls > cublas_before, s.library);  // the kernels never call cuBLAS
    const auto k = w->extra_counters(1e-3);
    EXPECT_EQ(k.at("cuda_graph"), 1.0);
    EXPECT_EQ(k.count("pct_of_cublas"), s.library ? 0u : 1u);  // hand-written rows are compared with cuBLAS
  }
}

TEST_F(FakeGemm, AWrongElementAnywhereFailsVerificationNamingIt) {
  const int m = 131, n = 137, k = 73;
  auto w = backend().create(row("compute/sgemm/kernel", m, n, k));
  w->prepare();
  w->poison();
  EXPECT_FALSE(w->verify().ok) << "an output the kernel never wrote";
  w->run(1);
  ASSERT_TRUE(w->verify().ok);
  for (fake_cuda::Plant where : {fake_cuda::Plant::first, fake_cuda::Plant::middle, fake_cuda::Plant::last}) {
    fake_cuda::state().plant = where;
    fake_cuda::state().planted = false;
    const Verification v = w->verify();
    fake_cuda::state().plant = fake_cuda::Plant::none;
    ASSERT_TRUE(fake_cuda::state().planted);
    EXPECT_FALSE(v.ok);
    const std::size_t i = fake_cuda::state().planted_index;
    const std::string named = "C[" + std::to_string(i / n) + "][" + std::to_string(i % n) + "] = ";
    EXPECT_EQ(v.message.rfind(named, 0), 0u) << v.message;
  }
}

TEST_F(FakeGemm, ACublasFailureIsAnErrorInCublassWords) {
  fake_cublas::state().fail = true;
  auto w = backend().create(row("compute/sgemm/cublas", 64, 48, 40));
  try {
    w->prepare();
    FAIL() << "expected an error";
  } catch (const SkipCase&) {
    FAIL() << "a cuBLAS failure is an error, not a skip";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cuBLAS cublasGemmEx: CUBLAS_STATUS_EXECUTION_FAILED", 0), 0u) << e.what();
  }
}

TEST_F(FakeGemm, AShapeAKernelCannotRunIsSkippedWithTheReason) {
  auto w = backend().create(row("compute/hgemm/kernel", 64, 60, 64));  // N not a multiple of 8
  try {
    w->prepare();
    FAIL() << "expected SkipCase";
  } catch (const SkipCase& e) {
    EXPECT_NE(std::string(e.what()).find("multiples of 8"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpubench
