// Instruction-contract test of one kernel source file, for every architecture it is checked
// on. This file is compiled once per kernel file (tests/contract/CMakeLists.txt) with that file's
// contract; the checks themselves are compiled once for all (contract_suite.cpp).
//
// HOW TO ADD A KERNEL FILE (e.g. families/gemm/gemm.cu):
//  1. Write families/gemm/contract.h (see families/global_memory/contract.h): an
//     `inline const gpubench::contract::FileContract kGemmContract = {...}` with one
//     KernelContract per __global__ instantiation in the file (kernels/contract.h documents
//     the fields: entry-name regex, block size, register/smem budget, occupancy target, PTX and
//     SASS regexes, per-arch budgets).
//  2. Add one line to tests/contract/CMakeLists.txt:
//       gpubench_kernel_contract(gemm SOURCE families/gemm/gemm.cu
//                                CONTRACT families/gemm/contract.h VARIABLE kGemmContract)
//  That builds, at build time and only when the source or a header it includes changes, the PTX
//  (nvcc --ptx), the cubin and the ptxas -v report for each architecture in
//  GPUBENCH_CONTRACT_ARCHS, and a ctest executable test_contract_gemm checking them.
//
// What is checked, per architecture:
//  - every entry in the PTX matches exactly one contract, and every contract matches an entry;
//  - PTX: the required regexes match, the forbidden ones do not, exact counts hold, and no
//    `.local` state space anywhere in the file;
//  - ptxas -v: registers and static shared memory within budget, no spills, no stack frame,
//    no local memory;
//  - theoretical occupancy (cuda_occupancy.h, reference card of the architecture) >= target;
//  - SASS (when cuobjdump or nvdisasm is installed): required/forbidden regexes, no LDL/STL.
//    Without a disassembler that one test is skipped and says so; the others still assert.
#include <sstream>
#include <string>
#include <vector>

#include "tests/contract/contract_suite.h"
#include GPUBENCH_CONTRACT_HEADER

namespace gpubench::contract {

const FileContract& file_contract() { return GPUBENCH_CONTRACT_VARIABLE; }

std::vector<int> contract_archs() {
  std::vector<int> archs;
  std::istringstream in(GPUBENCH_CONTRACT_ARCHS);
  std::string a;
  while (std::getline(in, a, ',')) {
    if (!a.empty()) archs.push_back(std::stoi(a));
  }
  return archs;
}

std::string artifact_dir() { return GPUBENCH_CONTRACT_DIR; }

namespace {

INSTANTIATE_TEST_SUITE_P(GPUBENCH_CONTRACT_SUITE, Contract, ::testing::ValuesIn(contract_archs()),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return "sm_" + std::to_string(param.param);
                         });

}  // namespace
}  // namespace gpubench::contract
