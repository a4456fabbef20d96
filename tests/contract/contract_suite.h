// The instruction-contract test suite, shared by every kernel file's test executable: the
// checks (contract_suite.cpp, compiled once) and what each executable supplies for its file
// (contract_test.cpp, compiled per kernel file with that file's contract header).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/contract.h"

namespace gpubench::contract {

// Defined per executable (contract_test.cpp): the contract of its kernel file, the architectures
// checked and the folder of nvcc's artifacts (sm_<arch>.ptx, .cubin, .ptxas.txt).
const FileContract& file_contract();
std::vector<int> contract_archs();
std::string artifact_dir();

/// The tests of one architecture (the parameter) of the file.
class Contract : public ::testing::TestWithParam<int> {
 protected:
  int arch() const { return GetParam(); }
  std::string ptx() const;
  std::string ptxas() const;
};

}  // namespace gpubench::contract
