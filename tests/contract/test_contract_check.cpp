// The readers behind the contract tests, on fixed compiler-output excerpts (including the
// spill and local-memory lines that the real kernels never produce), and the occupancy
// calculator on configurations whose answer follows from the documented SM limits.
#include <gtest/gtest.h>

#include "tests/contract/contract_check.h"

namespace gpubench::contract {
namespace {

TEST(ContractCheck, PtxasResourcesOfEntriesOnly) {
  const std::string text =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z6helperv\n"
      "    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Function properties for _Z3fooPf\n"
      "    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 24 bytes lmem, 4096 bytes smem, 380 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z3barv' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z3barv\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers\n";
  const std::vector<Resources> r = parse_ptxas_resources(text);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].mangled, "_Z3fooPf");
  EXPECT_EQ(r[0].registers, 255);
  EXPECT_EQ(r[0].smem_bytes, 4096);
  EXPECT_EQ(r[0].lmem_bytes, 24);
  EXPECT_EQ(r[0].stack_frame_bytes, 24);  // its own, not the helper's 16
  EXPECT_EQ(r[0].spill_store_bytes, 8);
  EXPECT_EQ(r[0].spill_load_bytes, 12);
  EXPECT_EQ(r[1].mangled, "_Z3barv");
  EXPECT_EQ(r[1].registers, 10);
  EXPECT_EQ(r[1].smem_bytes, 0);
  EXPECT_EQ(r[1].stack_frame_bytes, 0);
}

TEST(ContractCheck, PtxEntriesAndTheirBodies) {
  const std::string ptx =
      ".version 9.0\n.target sm_90\n"
      ".visible .entry _Z1av(\n\t.param .u64 _Z1av_param_0\n)\n{\n\tld.global.v4.u32 {%r1,%r2,%r3,%r4}, "
      "[%rd1];\n\tret;\n\n}\n"
      ".func _Z6helperv()\n{\n\tst.local.u32 [%rd2], %r1;\n}\n"
      ".visible .entry _Z1bv()\n.maxntid 256, 1, 1\n{\n\tst.global.u32 [%rd1], %r1;\n}\n";
  const std::vector<PtxEntry> e = parse_ptx_entries(ptx);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].mangled, "_Z1av");
  ASSERT_EQ(e[0].lines.size(), 3u);
  EXPECT_NE(e[0].lines[0].find("ld.global.v4.u32"), std::string::npos);
  EXPECT_EQ(e[1].mangled, "_Z1bv");
  ASSERT_EQ(e[1].lines.size(), 1u);  // the .func between them belongs to neither
  EXPECT_NE(e[1].lines[0].find("st.global.u32"), std::string::npos);
}

// Inline asm scopes bring their own brace lines (nvcc opens them indented and closes them in
// column 0, as for the mbarrier wrappers): the body ends at its own closing brace.
TEST(ContractCheck, PtxEntryBodiesSpanInlineAsmScopes) {
  const std::string ptx =
      ".visible .entry _Z1av()\n{\n\t// begin inline asm\n\t{\n.reg .pred p;\nsetp.ne.b32 p, %r1, 0;\n}\n"
      "\t// end inline asm\n\twgmma.fence.sync.aligned;\n\tret;\n}\n"
      ".visible .entry _Z1bv()\n{\n\tret;\n}\n";
  const std::vector<PtxEntry> e = parse_ptx_entries(ptx);
  ASSERT_EQ(e.size(), 2u);
  ASSERT_EQ(e[0].lines.size(), 8u);
  EXPECT_NE(e[0].lines[6].find("wgmma.fence"), std::string::npos);
  EXPECT_EQ(e[1].lines.size(), 1u);
}

TEST(ContractCheck, SassFromCuobjdumpAndNvdisasm) {
  const std::string cuobjdump =
      "\tcode for sm_90\n\t\tFunction : _Z1av\n        /*0000*/  LDG.E.128 R4, desc[UR4][R2.64] ;\n"
      "\t\tFunction : _Z1bv\n        /*0000*/  STG.E [R2.64], R5 ;\n        /*0010*/  EXIT ;\n";
  auto f = parse_sass_functions(cuobjdump);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f["_Z1av"].size(), 1u);
  EXPECT_EQ(f["_Z1bv"].size(), 2u);
  const std::string nvdisasm =
      "\t.section\t.text._Z1av,\"ax\",@progbits\n_Z1av:\n        /*0000*/  LDG.E.128 R4, desc[UR4][R2.64] ;\n";
  f = parse_sass_functions(nvdisasm);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f.begin()->first, "_Z1av");
}

TEST(ContractCheck, Demangle) {
  EXPECT_EQ(demangle("_ZN8gpubench7kernels11copy_kernelILi4EEEvPKhPhm"),
            "void gpubench::kernels::copy_kernel<4>(unsigned char const*, unsigned char*, unsigned long)");
  EXPECT_EQ(demangle("not_mangled"), "not_mangled");
}

TEST(ContractCheck, OccupancyFollowsTheSmLimits) {
  // 64 K registers per SM: 32 registers x 256 threads -> 8 blocks = 2048 threads (full SM).
  Occupancy o = theoretical_occupancy(90, 256, 32, 0, 0);
  EXPECT_EQ(o.card, "H100 SXM");
  EXPECT_EQ(o.blocks_per_sm, 8);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
  // 64 registers -> 4 blocks, half the SM, limited by registers.
  o = theoretical_occupancy(80, 256, 64, 0, 0);
  EXPECT_EQ(o.blocks_per_sm, 4);
  EXPECT_DOUBLE_EQ(o.fraction, 0.5);
  EXPECT_NE(o.limited_by.find("registers"), std::string::npos);
  // A100: 164 KiB per SM, 48 KiB + 1 KiB reserved per block -> 3 blocks.
  o = theoretical_occupancy(80, 128, 32, 48 * 1024, 0);
  EXPECT_EQ(o.blocks_per_sm, 3);
  EXPECT_NE(o.limited_by.find("shared memory"), std::string::npos);
  // H100: 228 KiB per SM -> 4 such blocks.
  EXPECT_EQ(theoretical_occupancy(90, 128, 32, 48 * 1024, 0).blocks_per_sm, 4);
  // sm_120: 1536 threads per SM -> 6 blocks of 256 are the full SM.
  o = theoretical_occupancy(120, 256, 32, 0, 0);
  EXPECT_EQ(o.blocks_per_sm, 6);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
  // 32 resident blocks per SM at most on sm_80/sm_90.
  EXPECT_EQ(theoretical_occupancy(90, 32, 16, 0, 0).blocks_per_sm, 32);
  EXPECT_FALSE(has_reference_card(75));
  EXPECT_THROW(theoretical_occupancy(75, 256, 32, 0, 0), std::runtime_error);
}

}  // namespace
}  // namespace gpubench::contract
