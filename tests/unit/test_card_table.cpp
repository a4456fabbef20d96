// The card table (cards.csv) and the peaks derived from it, against the datasheet figures in
// harness/model/REFERENCE_FIGURES.md.
#include <gtest/gtest.h>

#include "harness/model/card_table.h"

namespace gpubench {
namespace {

DeviceDescription named(const std::string& name, int major, int minor) {
  DeviceDescription d;
  d.name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  return d;
}

TEST(CardTable, HasEveryCardTheIssueNames) {
  for (const char* key : {"a100_40gb_sxm", "a100_80gb_sxm", "a100_40gb_pcie", "a100_80gb_pcie", "h100_sxm", "h100_pcie",
                          "h200", "l40s", "rtx_4090", "rtx_3090"}) {
    EXPECT_TRUE(find_card_by_key(key).has_value()) << key;
  }
}

TEST(CardTable, MatchesDriverNames) {
  EXPECT_EQ(find_card_by_device_name("NVIDIA H100 80GB HBM3")->key, "h100_sxm");
  EXPECT_EQ(find_card_by_device_name("NVIDIA H100 PCIe")->key, "h100_pcie");
  EXPECT_EQ(find_card_by_device_name("NVIDIA H200")->key, "h200");
  EXPECT_FALSE(find_card_by_device_name("NVIDIA H200 NVL").has_value());
  EXPECT_EQ(find_card_by_device_name("NVIDIA A100-SXM4-80GB")->key, "a100_80gb_sxm");
  EXPECT_EQ(find_card_by_device_name("NVIDIA A100-SXM4-40GB")->key, "a100_40gb_sxm");
  EXPECT_EQ(find_card_by_device_name("NVIDIA A100 80GB PCIe")->key, "a100_80gb_pcie");
  EXPECT_EQ(find_card_by_device_name("NVIDIA GeForce RTX 4090")->key, "rtx_4090");
  EXPECT_EQ(find_card_by_device_name("NVIDIA GeForce RTX 3090")->key, "rtx_3090");
  EXPECT_FALSE(find_card_by_device_name("NVIDIA GeForce RTX 3090 Ti").has_value());
  EXPECT_EQ(find_card_by_device_name("NVIDIA L40S")->key, "l40s");
  EXPECT_FALSE(find_card_by_device_name("Tesla T4").has_value());
}

TEST(CardTable, DatasheetPeaksForKnownCards) {
  struct Row {
    const char* name;
    int major, minor;
    double dram, fp32, fp16;
  };
  const Row rows[] = {
      {"NVIDIA A100-SXM4-40GB", 8, 0, 1555, 19.5, 312},
      {"NVIDIA A100-SXM4-80GB", 8, 0, 2039, 19.5, 312},
      {"NVIDIA A100 80GB PCIe", 8, 0, 1935, 19.5, 312},
      {"NVIDIA H100 80GB HBM3", 9, 0, 3350, 66.9, 989},
      {"NVIDIA H100 PCIe", 9, 0, 2000, 51, 756},
      {"NVIDIA H200", 9, 0, 4800, 67, 989},
      {"NVIDIA L40S", 8, 9, 864, 91.6, 362},
      {"NVIDIA GeForce RTX 4090", 8, 9, 1008, 82.6, 165},
      {"NVIDIA GeForce RTX 3090", 8, 6, 936, 35.6, 71},
  };
  for (const auto& r : rows) {
    const Peaks p = theoretical_peaks(named(r.name, r.major, r.minor));
    EXPECT_DOUBLE_EQ(p.dram_GBps, r.dram) << r.name;
    EXPECT_DOUBLE_EQ(p.fp32_TFLOPS, r.fp32) << r.name;
    EXPECT_DOUBLE_EQ(p.fp16_tensor_TFLOPS, r.fp16) << r.name;
    EXPECT_EQ(p.source.rfind("card table: ", 0), 0u) << r.name;
  }
}

TEST(CardTable, Bf16AndFp8TensorPeaksDenseWithFp32Accumulate) {
  // BF16 runs at the FP16 rate on every card here; FP8 at twice it from Ada on (dense: the
  // datasheets' sparsity figures halved; GeForce: the FP32-accumulate rate, 330 not 660 on an
  // RTX 4090); cards without FP8 tensor cores carry 0, which means "no percentage".
  struct Row {
    const char* name;
    int major, minor;
    double bf16, fp8;
  };
  const Row rows[] = {
      {"NVIDIA A100-SXM4-40GB", 8, 0, 312, 0},
      {"NVIDIA A100 80GB PCIe", 8, 0, 312, 0},
      {"NVIDIA H100 80GB HBM3", 9, 0, 989, 1979},
      {"NVIDIA H100 PCIe", 9, 0, 756, 1513},
      {"NVIDIA H200", 9, 0, 989, 1979},
      {"NVIDIA L40S", 8, 9, 362, 733},
      {"NVIDIA GeForce RTX 4090", 8, 9, 165, 330},
      {"NVIDIA GeForce RTX 3090", 8, 6, 71, 0},
      {"NVIDIA B200", 10, 0, 2250, 4500},
  };
  for (const auto& r : rows) {
    const Peaks p = theoretical_peaks(named(r.name, r.major, r.minor));
    EXPECT_DOUBLE_EQ(p.bf16_tensor_TFLOPS, r.bf16) << r.name;
    EXPECT_DOUBLE_EQ(p.fp8_tensor_TFLOPS, r.fp8) << r.name;
    EXPECT_DOUBLE_EQ(p.bf16_tensor_TFLOPS, p.fp16_tensor_TFLOPS) << r.name;
  }
  for (const auto& c : card_table()) {
    EXPECT_FALSE(c.source.empty()) << c.key;
    EXPECT_DOUBLE_EQ(c.bf16_tensor_TFLOPS, c.fp16_tensor_TFLOPS) << c.key;
    if (c.fp8_tensor_TFLOPS > 0) {
      EXPECT_GE(c.cc_major * 10 + c.cc_minor, 89) << c.key;
      EXPECT_NEAR(c.fp8_tensor_TFLOPS / c.fp16_tensor_TFLOPS, 2.0, 0.025) << c.key;  // 1979/989, 733/362
    } else {
      EXPECT_LT(c.cc_major * 10 + c.cc_minor, 89) << c.key;
    }
  }
}

TEST(CardTable, PcieFromTheNegotiatedLinkWhenKnown) {
  DeviceDescription d = named("NVIDIA H100 80GB HBM3", 9, 0);
  EXPECT_NEAR(theoretical_peaks(d).pcie_GBps, 63.0154, 1e-4);  // table: Gen5 x16
  d.pcie_gen = 4;
  d.pcie_width = 16;
  EXPECT_NEAR(theoretical_peaks(d).pcie_GBps, 31.5077, 1e-4);  // a downgraded link counts
}

TEST(CardTable, UnknownCardFallsBackToFormulas) {
  DeviceDescription d = named("NVIDIA Future GPU", 9, 0);
  d.sm_count = 132;
  d.sm_clock_kHz = 1980000;
  d.mem_clock_kHz = 2619000;
  d.bus_width_bits = 5120;
  const Peaks p = theoretical_peaks(d);
  EXPECT_EQ(p.source, "formula");
  EXPECT_NEAR(p.dram_GBps, 3352.32, 1e-6);
  EXPECT_NEAR(p.fp32_TFLOPS, 132 * 256 * 1.98e9 / 1e12, 1e-9);
  EXPECT_NEAR(p.bf16_tensor_TFLOPS, 132 * 4096 * 1.98e9 / 1e12, 1e-9);
  EXPECT_NEAR(p.fp8_tensor_TFLOPS, 132 * 8192 * 1.98e9 / 1e12, 1e-9);
}

TEST(CardTable, HostPeaksAreUnknown) {
  DeviceDescription host;
  host.name = "Intel(R) Xeon(R) Processor";
  const Peaks p = theoretical_peaks(host);
  EXPECT_EQ(p.dram_GBps, 0);
  EXPECT_EQ(p.fp32_TFLOPS, 0);
  EXPECT_EQ(p.fp16_tensor_TFLOPS, 0);
  EXPECT_EQ(p.bf16_tensor_TFLOPS, 0);
  EXPECT_EQ(p.fp8_tensor_TFLOPS, 0);
}

TEST(CardTable, ParserRejectsBadInput) {
  const std::string header =
      "key,display_name,match,cc,sm_count,fp32_TFLOPS,fp16_tensor_TFLOPS,bf16_tensor_TFLOPS,fp8_tensor_TFLOPS,"
      "dram_GBps,l2_MiB,pcie_gen,pcie_width,source\n";
  EXPECT_THROW(parse_card_table("wrong,header\n"), std::runtime_error);
  EXPECT_THROW(parse_card_table(header + "x,X,X,9.0,132,abc,989,989,1979,3350,50,5,16,src\n"), std::runtime_error);
  EXPECT_THROW(parse_card_table(header + "x,X,X,9.0,132,66.9,989,989,fp8,3350,50,5,16,src\n"), std::runtime_error);
  EXPECT_THROW(parse_card_table(header + "x,X,X,9.0\n"), std::runtime_error);
  // The table before the BF16 and FP8 columns: 12 fields are now a malformed row.
  EXPECT_THROW(parse_card_table(header + "x,X,X,8.6,82,35.6,71,936,6,4,16,src\n"), std::runtime_error);
  EXPECT_THROW(parse_card_table(header), std::runtime_error);
  const auto t = parse_card_table(header + "x,X,X,8.9,142,91.6,362,362,733,864,48,4,16,src\n");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].cc_major, 8);
  EXPECT_EQ(t[0].cc_minor, 9);
  EXPECT_DOUBLE_EQ(t[0].fp16_tensor_TFLOPS, 362);
  EXPECT_DOUBLE_EQ(t[0].bf16_tensor_TFLOPS, 362);
  EXPECT_DOUBLE_EQ(t[0].fp8_tensor_TFLOPS, 733);
  EXPECT_DOUBLE_EQ(t[0].dram_GBps, 864);
  EXPECT_DOUBLE_EQ(t[0].l2_MB, 48);
  EXPECT_EQ(t[0].pcie_gen, 4);
  EXPECT_EQ(t[0].source, "src");
}

}  // namespace
}  // namespace gpubench
