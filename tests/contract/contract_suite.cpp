// The checks of the instruction-contract tests (what they check: contract_test.cpp), compiled
// once and linked into every kernel file's test executable.
#include "tests/contract/contract_suite.h"

#include <cstdio>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/contract/contract_check.h"

namespace gpubench::contract {
namespace {

std::string artifact(int arch, const char* extension) {
  return artifact_dir() + "/sm_" + std::to_string(arch) + extension;
}

bool applies(const KernelContract& c, int arch) { return arch >= c.min_arch; }

/// "gpubench::kernels::copy_kernel<4>" from "void gpubench::kernels::copy_kernel<4>(...)".
std::string short_name(const std::string& demangled) {
  std::string s = demangled.substr(0, demangled.find('('));
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  return s;
}

/// Lines of `lines` matching `pattern`.
int count_matches(const std::vector<std::string>& lines, const std::string& pattern) {
  const std::regex re(pattern);
  int n = 0;
  for (const std::string& line : lines) n += std::regex_search(line, re) ? 1 : 0;
  return n;
}

/// The contract whose regex matches a demangled entry name (nullptr if none; a test reports
/// several).
std::vector<const KernelContract*> contracts_of(const std::string& demangled, int arch) {
  std::vector<const KernelContract*> out;
  for (const KernelContract& c : file_contract()) {
    if (applies(c, arch) && std::regex_search(demangled, std::regex(c.kernel))) out.push_back(&c);
  }
  return out;
}

}  // namespace

std::string Contract::ptx() const { return read_text_file(artifact(arch(), ".ptx")); }
std::string Contract::ptxas() const { return read_text_file(artifact(arch(), ".ptxas.txt")); }

namespace {

TEST_P(Contract, EveryKernelHasExactlyOneContract) {
  const std::vector<PtxEntry> entries = parse_ptx_entries(ptx());
  ASSERT_FALSE(entries.empty()) << "no .entry in " << artifact(arch(), ".ptx");
  std::set<const KernelContract*> used;
  for (const PtxEntry& e : entries) {
    const std::string name = demangle(e.mangled);
    const auto matches = contracts_of(name, arch());
    EXPECT_EQ(matches.size(), 1u) << "kernel " << name << " matches " << matches.size()
                                  << " contracts (each kernel needs exactly one)";
    used.insert(matches.begin(), matches.end());
  }
  for (const KernelContract& c : file_contract()) {
    if (applies(c, arch())) {
      EXPECT_TRUE(used.count(&c) == 1) << "contract '" << c.kernel << "' matches no kernel on sm_" << arch();
    }
  }
}

TEST_P(Contract, PtxInstructions) {
  const std::string text = ptx();
  EXPECT_EQ(text.find(".local"), std::string::npos) << "PTX uses the .local state space";
  for (const PtxEntry& e : parse_ptx_entries(text)) {
    const std::string name = demangle(e.mangled);
    const auto matches = contracts_of(name, arch());
    if (matches.size() != 1) continue;  // reported by EveryKernelHasExactlyOneContract
    const KernelContract& c = *matches.front();
    SCOPED_TRACE(name + " on sm_" + std::to_string(arch()));
    for (const std::string& re : c.ptx_required) {
      EXPECT_GT(count_matches(e.lines, re), 0) << "required PTX /" << re << "/ not found";
    }
    for (const std::string& re : c.ptx_forbidden) {
      EXPECT_EQ(count_matches(e.lines, re), 0) << "forbidden PTX /" << re << "/ found";
    }
    for (const auto& [re, n] : c.ptx_counts) {
      EXPECT_EQ(count_matches(e.lines, re), n) << "PTX lines matching /" << re << "/";
    }
  }
}

TEST_P(Contract, ResourcesWithinBudget) {
  const std::vector<Resources> all = parse_ptxas_resources(ptxas());
  ASSERT_FALSE(all.empty()) << "no entry function in " << artifact(arch(), ".ptxas.txt");
  for (const Resources& r : all) {
    const std::string name = demangle(r.mangled);
    const auto matches = contracts_of(name, arch());
    if (matches.size() != 1) continue;
    const KernelContract& c = *matches.front();
    SCOPED_TRACE(name + " on sm_" + std::to_string(arch()));
    ASSERT_GE(r.registers, 0) << "no 'Used N registers' line";
    EXPECT_LE(r.registers, c.registers_on(arch())) << "registers over budget";
    EXPECT_LE(r.smem_bytes, c.max_static_smem_bytes) << "static shared memory over budget";
    EXPECT_EQ(r.lmem_bytes, 0) << "local memory";
    EXPECT_EQ(r.stack_frame_bytes, 0) << "stack frame (local memory)";
    EXPECT_EQ(r.spill_store_bytes + r.spill_load_bytes, 0) << "register spills";
  }
}

// ptxas's performance advisories ("(C7515) Potential Performance Loss: wgmma.mma_async
// instructions are serialized ...", "(C7508) ... 'setmaxnreg' ignored") name a kernel that
// assembled but will not run as written. scripts/cuda12_device_check.py holds CUDA 12's ptxas to
// the same.
TEST_P(Contract, NoPtxasPerformanceAdvisory) {
  std::istringstream lines(ptxas());
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.find("Performance Loss"), std::string::npos) << line;
  }
}

TEST_P(Contract, TheoreticalOccupancy) {
  if (!has_reference_card(arch())) {
    GTEST_SKIP() << "no reference card for sm_" << arch() << ": occupancy not checked";
  }
  for (const Resources& r : parse_ptxas_resources(ptxas())) {
    const std::string name = demangle(r.mangled);
    const auto matches = contracts_of(name, arch());
    if (matches.size() != 1) continue;
    const KernelContract& c = *matches.front();
    SCOPED_TRACE(name + " on sm_" + std::to_string(arch()));
    ASSERT_GT(c.block_threads, 0) << "contract declares no block size";
    const Occupancy occ =
        theoretical_occupancy(arch(), c.block_threads, r.registers, r.smem_bytes, c.dynamic_smem_bytes);
    std::printf(
        "[contract] sm_%-3d %-8s %-45s %3d regs (<= %d), %4d B smem (<= %d), "
        "%2d blocks/SM of %d, occupancy %5.1f%% (>= %.1f%%, limited by %s)\n",
        arch(), occ.card.c_str(), short_name(name).c_str(), r.registers, c.registers_on(arch()), r.smem_bytes,
        c.max_static_smem_bytes, occ.blocks_per_sm, c.block_threads, 100.0 * occ.fraction,
        100.0 * c.occupancy_on(arch()), occ.limited_by.c_str());
    EXPECT_GE(occ.fraction + 1e-9, c.occupancy_on(arch()))
        << occ.blocks_per_sm << " blocks of " << c.block_threads << " threads per SM on " << occ.card << ", limited by "
        << occ.limited_by;
  }
}

TEST_P(Contract, SassInstructions) {
  // nvdisasm reads a cubin on its own; cuobjdump -sass runs nvdisasm itself, so it gets its own
  // directory (where the pip wheels put both) at the front of PATH.
  std::string tool = find_disassembler("nvdisasm", GPUBENCH_CUDA_BIN_DIR, GPUBENCH_REPO_ROOT);
  std::string command = tool + " -c ";
  if (tool.empty()) {
    tool = find_disassembler("cuobjdump", GPUBENCH_CUDA_BIN_DIR, GPUBENCH_REPO_ROOT);
    const std::string dir = tool.substr(0, tool.find_last_of('/'));
    command = "PATH='" + dir + "':\"$PATH\" '" + tool + "' -sass ";
  }
  if (tool.empty()) {
    GTEST_SKIP() << "SASS checks skipped: no nvdisasm or cuobjdump (pip install "
                    "nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm into .venv, or set "
                    "GPUBENCH_CUOBJDUMP)";
  }
  int status = 0;
  const std::string sass = run_command(command + "'" + artifact(arch(), ".cubin") + "'", &status);
  ASSERT_EQ(status, 0) << command << "failed on " << artifact(arch(), ".cubin");
  std::printf("[contract] SASS of sm_%d from %s\n", arch(), tool.c_str());
  const auto functions = parse_sass_functions(sass);
  ASSERT_FALSE(functions.empty()) << "no function in the " << tool << " listing";
  for (const auto& [mangled, lines] : functions) {
    const std::string name = demangle(mangled);
    const auto matches = contracts_of(name, arch());
    ASSERT_EQ(matches.size(), 1u) << "SASS function " << name << " has no single contract";
    const KernelContract& c = *matches.front();
    SCOPED_TRACE(name + " on sm_" + std::to_string(arch()) + " (" + tool + ")");
    EXPECT_EQ(count_matches(lines, R"(\b(LDL|STL)\b)"), 0) << "local memory loads/stores in SASS";
    for (const std::string& re : c.sass_required) {
      EXPECT_GT(count_matches(lines, re), 0) << "required SASS /" << re << "/ not found";
    }
    for (const std::string& re : c.sass_forbidden) {
      EXPECT_EQ(count_matches(lines, re), 0) << "forbidden SASS /" << re << "/ found";
    }
    for (const auto& [re, n] : c.sass_counts) {
      EXPECT_EQ(count_matches(lines, re), n) << "SASS lines matching /" << re << "/";
    }
  }
}

}  // namespace
}  // namespace gpubench::contract
