// The GEMM workloads (families/gemm/cuda.cpp) end to end on the fake CUDA runtime, with the REAL
// launchers of gemm.cu and gemm_sm90.cu (host copies, kernels/launch.cuh) running the SGEMM,
// mma.sync FP16 and Hopper wgmma kernels under the SIMT emulation (the WMMA baseline through kernels/wmma_emulation.h),
// and a host stand-in for cuBLAS and cuBLASLt (fake_cublas.cpp, which holds the workloads to cuBLASLt's documented FP8
// rules). Every variant is prepared, poisoned, run and verified as the runner does it, at small odd shapes; a wrong
// element anywhere fails verification naming it, for every row kind; a cuBLAS or cuBLASLt failure is an error in the
// library's words, and so is an FP8 GEMM cuBLASLt has no kernel for; a shape a kernel cannot run, or a device the
// sm_90a kernel cannot run on, is skipped with the reason; cuBLAS always works in its preallocated workspace.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "families/gemm/gemm.h"
#include "families/gemm/tests/fake_cublas.h"
#include "harness/family.h"
#include "tests/cuda/fake_backend.h"
#include "tests/cuda/fake_cuda_runtime.h"

GPUBENCH_FAMILY(gemm)

namespace gpubench {
namespace {

// The row `key` of the real table (the --quick one, or the full one for rows only it has), at
// shape m x n x k.
BenchCase row(const std::string& key, int m, int n, int k) {
  for (const bool quick : {true, false}) {
    SweepOptions o = sweep_options(fake_backend::fake_device(), "cuda", quick);
    for (BenchCase c : families::gemm::cases(o)) {
      if (c.key() != key) continue;
      c.args["m"] = m;
      c.args["n"] = n;
      c.args["k"] = k;
      return c;
    }
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
        Shape{"compute/hgemm/wmma", 128, 128, 64, false}, Shape{"compute/hgemm/cublas", 64, 64, 32, true},
        Shape{"compute/bf16gemm/cublas", 67, 45, 33, true}, Shape{"compute/fp8gemm/cublaslt", 48, 80, 32, true},
        Shape{"compute/hgemm/wgmma", 131, 264, 72, false}, Shape{"compute/bf16gemm/wgmma", 67, 40, 136, false},
        Shape{"compute/hgemm/wgmma_unclustered", 131, 264, 72, false},
        Shape{"compute/hgemm/wgmma_direct_store", 131, 264, 72, false}}) {
    SCOPED_TRACE(s.key);
    const BenchCase c = row(s.key, s.m, s.n, s.k);
    ASSERT_TRUE(backend().supports(c)) << backend().unavailable_reason(c);
    auto w = backend().create(c);
    const int cublas_before = fake_cublas::state().calls + fake_cublas::state().lt_calls;
    const Verification v = fake_backend::run_like_the_runner(*w, 2);
    EXPECT_TRUE(v.ok) << v.message;
    // the kernels never call cuBLAS
    EXPECT_EQ(fake_cublas::state().calls + fake_cublas::state().lt_calls > cublas_before, s.library);
    const auto k = w->extra_counters(1e-3);
    EXPECT_EQ(k.at("cuda_graph"), 1.0);
    EXPECT_EQ(k.count("pct_of_cublas"), s.library ? 0u : 1u);  // hand-written rows are compared with cuBLAS
  }
  // Every cublasGemmEx (rows and pct_of_cublas references) ran in our preallocated workspace,
  // although each one set its stream first (which resets the handle to cuBLAS's own pool).
  EXPECT_GT(fake_cublas::state().calls, 0);
  EXPECT_EQ(fake_cublas::state().default_pool_calls, 0);
}

// pct_of_cublas pairs every repetition with cuBLAS timed right after it, for at least as long as
// the repetition's samples ran (whole samples): never a figure cached from another moment (timed
// once per process, in a 0.1 s burst, it read an H100 cuBLAS 8 % faster than the run's cuBLAS row).
TEST_F(FakeGemm, PctOfCublasIsTimedBesideEveryRepetitionForAsLong) {
  fake_cuda::state().launch_cost_seconds = 1e-3;  // every kernel and every cublasGemmEx: 1 ms
  auto w = backend().create(row("compute/sgemm/kernel", 64, 48, 40));
  w->prepare();
  w->poison();
  for (int repetition = 0; repetition < 2; ++repetition) {
    SCOPED_TRACE(repetition);
    double kernel_seconds = 0;
    for (int sample = 0; sample < 4; ++sample) kernel_seconds += w->run(5);  // about 20 ms
    const auto start = std::chrono::steady_clock::now();
    const auto k = w->extra_counters(kernel_seconds / 20);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(k.count("pct_of_cublas"), 1u);
    EXPECT_GT(k.at("pct_of_cublas"), 0.0);
    // (cached from the first repetition, the second took no time; graphs replay the captured
    // cuBLAS calls, so the time and not the API calls shows that it ran)
    EXPECT_GE(took, kernel_seconds) << "the reference ran for less than the repetition";
  }
  EXPECT_TRUE(w->verify().ok) << "the reference wrote into the kernel's verified output";
}

TEST_F(FakeGemm, AWrongElementAnywhereFailsVerificationNamingIt) {
  struct Shape {
    const char* key;
    int m, n, k;
  };
  for (const Shape& s : {Shape{"compute/sgemm/kernel", 131, 137, 73}, Shape{"compute/bf16gemm/cublas", 67, 45, 33},
                         Shape{"compute/fp8gemm/cublaslt", 48, 80, 32}, Shape{"compute/bf16gemm/wgmma", 67, 40, 136},
                         Shape{"compute/hgemm/wgmma_unclustered", 67, 40, 136}}) {
    SCOPED_TRACE(s.key);
    const int n = s.n;
    auto w = backend().create(row(s.key, s.m, s.n, s.k));
    w->prepare();
    w->poison();
    EXPECT_FALSE(w->verify().ok) << "an output the GEMM never wrote";
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

TEST_F(FakeGemm, ACublasLtFailureIsAnErrorInCublasLtsWords) {
  fake_cublas::state().fail = true;
  auto w = backend().create(row("compute/fp8gemm/cublaslt", 48, 80, 32));
  try {
    w->prepare();
    FAIL() << "expected an error";
  } catch (const SkipCase&) {
    FAIL() << "a cuBLASLt failure is an error, not a skip";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cuBLASLt cublasLtMatmul: CUBLAS_STATUS_EXECUTION_FAILED", 0), 0u)
        << e.what();
  }
}

// The FP8 row exists only where FP8 tensor cores do (min_cc 8.9): cuBLASLt finding no kernel
// there means a wrong request, so it fails the row in cuBLASLt's words rather than skipping it.
TEST_F(FakeGemm, AnFp8GemmCuBlasLtHasNoKernelForIsAnErrorInCublasLtsWords) {
  fake_cublas::state().lt_no_algo = true;
  auto w = backend().create(row("compute/fp8gemm/cublaslt", 48, 80, 32));
  try {
    w->prepare();
    FAIL() << "expected an error";
  } catch (const SkipCase&) {
    FAIL() << "no FP8 kernel on an FP8 device is an error, not a skip";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cuBLASLt has no FP8 E4M3 GEMM for 48x80x32"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fake_cublas::state().lt_calls, 0);
}

TEST_F(FakeGemm, TheFp8GemmIsPlannedOnceAndCapturedWithoutNewPlans) {
  const int live_before = fake_cublas::state().lt_live_objects;
  {
    auto w = backend().create(row("compute/fp8gemm/cublaslt", 32, 16, 48));
    const Verification v = fake_backend::run_like_the_runner(*w, 3);
    EXPECT_TRUE(v.ok) << v.message;
    EXPECT_EQ(fake_cublas::state().lt_heuristic_calls, 1);  // in prepare, never while timed
    EXPECT_GT(fake_cuda::state().captures, 0);
    EXPECT_EQ(w->extra_counters(1e-3).at("cuda_graph"), 1.0);
  }
  EXPECT_EQ(fake_cublas::state().lt_live_objects, live_before);  // descriptors destroyed with the workload
}

// The wgmma kernel is sm_90a code: a device newer than 9.0 (the table's min_cc lets it through)
// skips the rows with the reason; one below 9.0 never gets them.
TEST_F(FakeGemm, TheWgmmaKernelRunsOnComputeCapability90Only) {
  fake_cuda::state().cc_major = 10;
  for (const char* key : {"compute/hgemm/wgmma", "compute/bf16gemm/wgmma", "compute/hgemm/wgmma_unclustered",
                          "compute/hgemm/wgmma_direct_store"}) {
    const BenchCase c = row(key, 128, 256, 64);
    ASSERT_TRUE(backend().supports(c)) << backend().unavailable_reason(c);
    auto w = backend().create(c);
    try {
      w->prepare();
      FAIL() << key << ": expected SkipCase";
    } catch (const SkipCase& e) {
      EXPECT_NE(std::string(e.what()).find("sm_90a"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("this device is 10.0"), std::string::npos) << e.what();
    }
  }
  backend_.reset();
  fake_cuda::state().cc_major = 8;
  EXPECT_FALSE(backend().supports(row("compute/hgemm/wgmma", 128, 256, 64)));
  EXPECT_FALSE(backend().supports(row("compute/hgemm/wgmma_unclustered", 128, 256, 64)));
}

// setmaxnreg only moves registers between warpgroups: a build whose wgmma kernel holds fewer than
// 168 per thread at entry would leave its consumers waiting for ever. Its rows are errors that
// say so, and the launcher refuses to launch it.
TEST_F(FakeGemm, AWgmmaBuildWithTooFewRegistersIsAnErrorNotAHang) {
  fake_cuda::state().kernel_registers = 128;
  for (const char* key : {"compute/hgemm/wgmma", "compute/bf16gemm/wgmma", "compute/hgemm/wgmma_unclustered",
                          "compute/hgemm/wgmma_direct_store"}) {
    auto w = backend().create(row(key, 128, 256, 64));
    try {
      w->prepare();
      FAIL() << key << ": expected an error";
    } catch (const SkipCase&) {
      FAIL() << key << ": a broken build is an error, not a skip";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("compiled with 128 registers per thread at entry, fewer than the 168"),
                std::string::npos)
          << e.what();
    }
  }
  const int launched = fake_cuda::state().kernel_launches;
  EXPECT_EQ(kernels::launch_hgemm_wgmma(nullptr, nullptr, nullptr, 128, 256, 64, kernels::Half16::fp16,
                                        kernels::WgmmaCluster::pair, kernels::WgmmaEpilogue::tma_store, nullptr),
            200);  // cudaErrorInvalidKernelImage
  EXPECT_EQ(fake_cuda::state().kernel_launches, launched);
  fake_cuda::state().kernel_registers = 168;       // what nvcc 13 gives it
  ASSERT_EQ(kernels::hgemm_wgmma_configure(), 0);  // asks again (the rows' prepare does too)
  EXPECT_EQ(kernels::hgemm_wgmma_entry_registers(), 168);
  auto w = backend().create(row("compute/hgemm/wgmma", 128, 256, 64));
  const Verification v = fake_backend::run_like_the_runner(*w, 1);
  EXPECT_TRUE(v.ok) << v.message;
}

TEST_F(FakeGemm, AShapeAKernelCannotRunIsSkippedWithTheReason) {
  {
    auto w = backend().create(row("compute/fp8gemm/cublaslt", 40, 48, 40));  // M and K not multiples of 16
    try {
      w->prepare();
      FAIL() << "expected SkipCase";
    } catch (const SkipCase& e) {
      EXPECT_NE(std::string(e.what()).find("multiples of 16"), std::string::npos) << e.what();
    }
  }
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
