// The Hopper probe's kernels (families/gemm/hopper_probe.cuh) under the host emulation, judged by
// its judges (hopper_probe_judge.cpp): the emulation agrees with itself for the GEMM's own
// descriptors, and the probe can tell them from their variants - a probe whose every variant
// passed could not say on a GPU which encoding the hardware wants. Started from a wrong encoding
// (B's offsets swapped), the whole probe must find the GEMM's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "families/gemm/hgemm_sm90.cuh"
#include "families/gemm/hopper_probe.cuh"
#include "families/gemm/hopper_probe.h"
#include "kernels/simt/simt.h"

namespace {

namespace probe = gpubench::kernels::probe;
namespace hopper = gpubench::kernels::hopper;
namespace hp = gpubench::kernels::hopper_probe;
namespace sm90 = gpubench::kernels::hgemm_sm90;
using gpubench::kernels::Half16;
using gpubench::simt::Dim3;

probe::Descriptors gemm_descriptors() {
  return probe::Descriptors{sm90::kADescLbo, sm90::kADescSbo, sm90::kAKStepBytes,
                            sm90::kBDescLbo, sm90::kBDescSbo, sm90::kBKStepBytes};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// One wgmma probe launch under the emulation, as launch_wgmma_probe makes it.
probe::Verdict run_emulated(const probe::MmaInputs& in, Half16 type, const probe::Descriptors& d,
                            std::vector<float>* fragments) {
  const std::vector<std::uint16_t> a = probe::to_bits(in.a, type), b = probe::to_bits(in.b, type);
  const hopper::TmaElement element = type == Half16::bf16 ? hopper::TmaElement::kBF16 : hopper::TmaElement::kF16;
  hopper::TmaMap map_a{}, map_b{};
  EXPECT_EQ(hopper::encode_tensor_map_2d(&map_a, a.data(), 64, 64, 128, 64, 64, element, hopper::Swizzle::k128B), 0);
  EXPECT_EQ(hopper::encode_tensor_map_2d(&map_b, b.data(), 256, 64, 512, 64, 64, element, hopper::Swizzle::k128B), 0);
  fragments->assign(probe::kFragmentFloats, std::nanf(""));
  int status = -1;
  if (type == Half16::bf16) {
    gpubench::simt::launch_with_smem(Dim3{1}, Dim3{hp::kThreads}, hp::kSmemBytes, hp::wgmma_probe_kernel<hopper::BF16>,
                                     map_a, map_b, d, fragments->data(), &status);
  } else {
    gpubench::simt::launch_with_smem(Dim3{1}, Dim3{hp::kThreads}, hp::kSmemBytes, hp::wgmma_probe_kernel<hopper::F16>,
                                     map_a, map_b, d, fragments->data(), &status);
  }
  EXPECT_EQ(hopper::wgmma_outstanding(), 0u);
  EXPECT_EQ(hopper::tma_outstanding(), 0u);
  return probe::judge_status(status, "the warpgroup");
}

probe::MmaRunner runner(Half16 type) {
  return [type](const probe::MmaInputs& in, const probe::Descriptors& d, std::vector<float>* f) {
    return run_emulated(in, type, d, f);
  };
}

TEST(HopperProbeEmulation, GemmDescriptorsAreRightAndEveryVariantWrong) {
  for (const Half16 type : {Half16::fp16, Half16::bf16}) {
    const probe::MmaInputs in = probe::random_mma_inputs(23);
    const std::vector<probe::Descriptors> variants = probe::descriptor_variants(gemm_descriptors());
    for (std::size_t v = 0; v < variants.size(); ++v) {
      std::vector<float> f;
      ASSERT_TRUE(run_emulated(in, type, variants[v], &f).ok);
      const probe::Verdict verdict = probe::judge_mma(f.data(), in);
      EXPECT_EQ(verdict.ok, v == 0) << probe::describe(variants[v]) << ": " << verdict.summary;
    }
  }
}

TEST(HopperProbeEmulation, ProbeFromAWrongEncodingFindsTheGemms) {
  probe::Descriptors wrong = gemm_descriptors();
  std::swap(wrong.b_lbo, wrong.b_sbo);
  const probe::Verdict v = probe::probe_mma(wrong, probe::descriptor_variants(wrong), runner(Half16::fp16));
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(has(v.summary, "right with " + probe::describe(gemm_descriptors()))) << v.summary;
  bool misread = false;
  for (const std::string& line : v.details) misread = misread || has(line, "operands misread");
  EXPECT_TRUE(misread) << "a B read through the wrong offsets is no permutation of D";
}

TEST(HopperProbeEmulation, GemmDescriptorsPassTheWholeProbe) {
  const probe::Verdict v =
      probe::probe_mma(gemm_descriptors(), probe::descriptor_variants(gemm_descriptors()), runner(Half16::bf16));
  EXPECT_TRUE(v.ok) << v.summary;
}

// The epilogue's TMA store under the emulation: the probe's box lands where its judge expects in
// every case the kernel check stores (whole, clipped, at an offset).
TEST(HopperProbeEmulation, StoreProbePassesItsJudge) {
  for (const probe::StoreCase& c : probe::kStoreCases) {
    SCOPED_TRACE(testing::Message() << c.rows << " x " << c.cols << " at (" << c.x << ", " << c.y << ")");
    std::vector<float> tensor(static_cast<std::size_t>(probe::kStoreProbeRows) * c.stride, std::nanf(""));
    hopper::TmaMap map{};
    ASSERT_EQ(sm90::encode_result_map(&map, tensor.data(), c.rows, c.cols, c.stride), 0);  // as the launcher
    int status = -1;
    gpubench::simt::launch_with_smem(Dim3{1}, Dim3{hp::kThreads}, hp::kSmemBytes, hp::tma_store_probe_kernel, map, c.x,
                                     c.y, &status);
    EXPECT_EQ(hopper::tma_stores_outstanding(), 0u);
    ASSERT_TRUE(probe::judge_status(status, "the block").ok);
    const probe::Verdict v = probe::judge_tma_store(tensor.data(), c);
    EXPECT_TRUE(v.ok) << v.summary;
  }
}

}  // namespace
