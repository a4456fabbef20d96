// The GEMM rows of the benchmark table (families/gemm/cases.cpp): the sizes the issue
// asks for, work models from 2MNK, the right peak, and only shapes each kernel accepts.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "families/gemm/gemm.h"
#include "families/gemm/low_precision.h"
#include "harness/family.h"

GPUBENCH_FAMILY(gemm)

namespace {

using gpubench::BenchCase;
using gpubench::PeakKind;
using gpubench::SweepOptions;

std::vector<BenchCase> gemm_rows(bool quick) {
  SweepOptions o;
  o.quick = quick;
  o.backend_kind = "cuda";
  return gpubench::families::gemm::cases(o);
}

using Shape = std::tuple<int, int, int>;

Shape shape_of(const BenchCase& c) {
  return {static_cast<int>(c.arg("m")), static_cast<int>(c.arg("n")), static_cast<int>(c.arg("k"))};
}

TEST(GemmCases, EveryVariantCoversTheSquareSweepAndModelShapes) {
  std::map<std::string, std::set<Shape>> by_key;
  for (const auto& c : gemm_rows(false)) by_key[c.key()].insert(shape_of(c));
  for (const char* key : {"compute/sgemm/kernel", "compute/sgemm/cublas", "compute/hgemm/kernel", "compute/hgemm/wmma",
                          "compute/hgemm/wgmma", "compute/hgemm/wgmma_unclustered", "compute/hgemm/cublas",
                          "compute/bf16gemm/wgmma", "compute/bf16gemm/cublas", "compute/fp8gemm/cublaslt"}) {
    const auto& shapes = by_key[key];
    for (int s : {512, 1024, 2048, 4096, 8192}) EXPECT_TRUE(shapes.count({s, s, s})) << key << " lacks " << s;
    EXPECT_TRUE(shapes.count({4096, 4096, 11008})) << key;
    EXPECT_TRUE(shapes.count({4096, 11008, 4096})) << key;
    EXPECT_TRUE(shapes.count({8192, 1024, 8192})) << key;
  }
  // The naive baseline stops at 2048^3; the odd 1000^3 shape runs on every kernel that takes it.
  EXPECT_TRUE(by_key["compute/sgemm/naive"].count({2048, 2048, 2048}));
  EXPECT_FALSE(by_key["compute/sgemm/naive"].count({4096, 4096, 4096}));
  EXPECT_TRUE(by_key["compute/sgemm/kernel"].count({1000, 1000, 1000}));
  EXPECT_TRUE(by_key["compute/hgemm/kernel"].count({1000, 1000, 1000}));
  EXPECT_FALSE(by_key["compute/hgemm/wmma"].count({1000, 1000, 1000}));  // not a multiple of 128
  EXPECT_TRUE(by_key["compute/bf16gemm/cublas"].count({1000, 1000, 1000}));
  EXPECT_TRUE(by_key["compute/hgemm/wgmma"].count({1000, 1000, 1000}));  // partial tiles, zero-filled by the TMA
  EXPECT_TRUE(by_key["compute/bf16gemm/wgmma"].count({1000, 1000, 1000}));
  EXPECT_FALSE(by_key["compute/fp8gemm/cublaslt"].count({1000, 1000, 1000}));  // FP8 needs multiples of 16
}

TEST(GemmCases, LibraryRowsForBf16AndFp8) {
  // The BF16 and FP8 references: beside cuBLAS FP16 at every shape they can run, against their
  // own tensor peaks, only where their tensor cores exist (BF16: sm_80; FP8: sm_89 and sm_90).
  std::map<std::string, int> rows;
  for (const auto& c : gemm_rows(false)) {
    if ((c.kernel != "bf16gemm" && c.kernel != "fp8gemm") || c.variant == "wgmma") continue;
    ++rows[c.key()];
    const auto [m, n, k] = shape_of(c);
    const bool fp8 = c.kernel == "fp8gemm";
    EXPECT_EQ(c.variant, fp8 ? "cublaslt" : "cublas") << c.name();
    EXPECT_EQ(c.work.peak, fp8 ? PeakKind::fp8_tensor : PeakKind::bf16_tensor) << c.name();
    EXPECT_EQ(c.min_cc, fp8 ? 89 : 80) << c.name();
    EXPECT_EQ(c.work.metric, gpubench::Metric::TFLOPS) << c.name();
    EXPECT_DOUBLE_EQ(c.work.useful_bytes, (fp8 ? 1.0 : 2.0) * (double(m) * k + double(k) * n) + 4.0 * m * n)
        << c.name();
    if (fp8) {
      EXPECT_EQ(gpubench::kernels::fp8_gemm_shape_error(m, n, k), nullptr) << c.name();
    }
  }
  EXPECT_EQ(rows["compute/bf16gemm/cublas"], 9);   // every shape
  EXPECT_EQ(rows["compute/fp8gemm/cublaslt"], 8);  // every shape but 1000^3
  std::set<std::string> names;
  for (const auto& c : gemm_rows(true)) names.insert(c.name());
  EXPECT_TRUE(names.count("compute/bf16gemm/cublas/m:1000,n:1000,k:1000"));
  EXPECT_FALSE(names.count("compute/bf16gemm/cublas/m:1024,n:1024,k:1024"));  // --quick: 256^3 and 1000^3
  EXPECT_TRUE(names.count("compute/fp8gemm/cublaslt/m:256,n:256,k:256"));
  EXPECT_FALSE(names.count("compute/fp8gemm/cublaslt/m:1000,n:1000,k:1000"));
}

TEST(GemmCases, HopperKernelRows) {
  // The wgmma kernel in FP16 and BF16, beside cuBLAS of its input type at each shape it takes,
  // against that type's tensor peak, from compute capability 9.0 (the workload skips any other
  // than 9.0 itself: sm_90a code). wgmma is the kernel in 2 x 1 clusters; wgmma_unclustered, one
  // block per tile, runs beside it in FP16 at the same shapes, and wgmma_direct_store (its
  // threads storing C themselves) at 4096^3 and 8192^3, where the 90 %-of-cuBLAS goal is read,
  // and with --quick at 1000^3 (edge tiles: its stores clipped).
  std::map<std::string, std::set<Shape>> by_key;
  for (bool quick : {false, true}) {
    for (const auto& c : gemm_rows(quick)) {
      by_key[c.key()].insert(shape_of(c));
      if (c.variant.rfind("wgmma", 0) != 0) continue;
      const auto [m, n, k] = shape_of(c);
      ASSERT_TRUE(c.kernel == "hgemm" || (c.kernel == "bf16gemm" && c.variant == "wgmma")) << c.name();
      EXPECT_EQ(c.work.peak, c.kernel == "hgemm" ? PeakKind::fp16_tensor : PeakKind::bf16_tensor) << c.name();
      EXPECT_EQ(c.min_cc, 90) << c.name();
      EXPECT_DOUBLE_EQ(c.work.useful_bytes, 2.0 * (double(m) * k + double(k) * n) + 4.0 * m * n) << c.name();
      EXPECT_EQ(gpubench::kernels::hgemm_wgmma_shape_error(m, n, k), nullptr) << c.name();
    }
  }
  EXPECT_EQ(by_key["compute/hgemm/wgmma"], by_key["compute/bf16gemm/wgmma"]);
  EXPECT_EQ(by_key["compute/hgemm/wgmma"], by_key["compute/hgemm/wgmma_unclustered"]);
  for (const Shape& s : by_key["compute/hgemm/wgmma"]) EXPECT_TRUE(by_key["compute/hgemm/cublas"].count(s));
  for (const Shape& s : by_key["compute/bf16gemm/wgmma"]) EXPECT_TRUE(by_key["compute/bf16gemm/cublas"].count(s));
  EXPECT_EQ(by_key["compute/hgemm/wgmma"].size(), 10u);  // the 9 full shapes and --quick's 256^3
  EXPECT_EQ(by_key["compute/hgemm/wgmma_direct_store"],
            (std::set<Shape>{{1000, 1000, 1000}, {4096, 4096, 4096}, {8192, 8192, 8192}}));
  EXPECT_FALSE(by_key.count("compute/bf16gemm/wgmma_direct_store"));
}

TEST(GemmCases, NamesArgsWorkModelAndPeak) {
  for (bool quick : {false, true}) {
    for (const auto& c : gemm_rows(quick)) {
      const auto [m, n, k] = shape_of(c);
      EXPECT_EQ(c.name(), "compute/" + c.kernel + "/" + c.variant + "/m:" + std::to_string(m) +
                              ",n:" + std::to_string(n) + ",k:" + std::to_string(k));
      EXPECT_DOUBLE_EQ(c.work.flop, 2.0 * m * n * k) << c.name();
      if (c.variant.rfind("wgmma", 0) == 0) {  // HopperKernelRows
        continue;
      }
      if (c.kernel == "bf16gemm" || c.kernel == "fp8gemm") continue;  // LibraryRowsForBf16AndFp8
      const bool fp16 = c.kernel == "hgemm";
      EXPECT_EQ(c.work.peak, fp16 ? PeakKind::fp16_tensor : PeakKind::fp32) << c.name();
      EXPECT_DOUBLE_EQ(c.work.useful_bytes, (fp16 ? 2.0 : 4.0) * (double(m) * k + double(k) * n) + 4.0 * m * n)
          << c.name();
      EXPECT_EQ(c.min_cc, fp16 && c.variant != "cublas" ? 80 : 0) << c.name();
      if (c.key() == "compute/hgemm/kernel") {
        EXPECT_EQ(gpubench::kernels::hgemm_shape_error(m, n, k), nullptr) << c.name();
      }
      if (c.key() == "compute/hgemm/wmma") {
        EXPECT_EQ(gpubench::kernels::hgemm_wmma_shape_error(m, n, k), nullptr) << c.name();
      }
      if (quick) {
        EXPECT_LE(2.0 * m * n * k, 2.0 * 1024 * 1024 * 1024) << c.name();
      }
    }
  }
}

}  // namespace
