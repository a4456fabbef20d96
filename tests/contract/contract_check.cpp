// Readers of nvcc/ptxas/cuobjdump output and the occupancy calculator for the contract tests.
#include "tests/contract/contract_check.h"

#include <cxxabi.h>
#include <dirent.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <cuda_occupancy.h>

namespace gpubench::contract {
namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

int int_of(const std::smatch& m, std::size_t i) { return std::stoi(m[i].str()); }

bool is_executable(const std::string& path) {
  struct stat st {};
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR) != 0;
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  return names;
}

// <venv>/lib/python3.X/site-packages/nvidia/<any>/bin/<tool> (the pip wheels put the binary in
// nvidia/cu13/bin for CUDA 13; older ones in nvidia/cuda_<tool>/bin).
std::string find_in_venv(const std::string& venv, const std::string& tool) {
  for (const std::string& py : list_dir(venv + "/lib")) {
    const std::string nvidia = venv + "/lib/" + py + "/site-packages/nvidia";
    for (const std::string& pkg : list_dir(nvidia)) {
      const std::string candidate = nvidia + "/" + pkg + "/bin/" + tool;
      if (is_executable(candidate)) return candidate;
    }
  }
  return "";
}

/// A reference card of one architecture, from the vendor's datasheets and the CUDA C++
/// Programming Guide's table of compute capabilities.
struct ReferenceCard {
  int arch;
  const char* name;
  int sms;
  int max_threads_per_sm;
  std::size_t smem_per_sm;
  std::size_t smem_per_block_optin;
};

// Registers: 64 K 32-bit registers per SM and per block on all of them; 48 KiB default static
// shared memory per block, 1 KiB reserved per block by the driver.
constexpr ReferenceCard kCards[] = {
    {80, "A100", 108, 2048, 164 * 1024, 163 * 1024},
    {90, "H100 SXM", 132, 2048, 228 * 1024, 227 * 1024},
    {100, "B200", 148, 2048, 228 * 1024, 227 * 1024},
    {120, "RTX 5090", 170, 1536, 100 * 1024, 99 * 1024},
};

const ReferenceCard* card_of(int arch) {
  for (const ReferenceCard& c : kCards) {
    if (c.arch == arch) return &c;
  }
  return nullptr;
}

}  // namespace

std::vector<PtxEntry> parse_ptx_entries(const std::string& ptx) {
  static const std::regex entry_re(R"(\.entry\s+([A-Za-z0-9_$.]+)\s*\()");
  std::vector<PtxEntry> entries;
  PtxEntry* current = nullptr;
  // Brace lines: the body's, and those of inline asm scopes, which nvcc opens indented ("\t{")
  // and closes in column 0.
  int depth = 0;
  auto brace = [](const std::string& line, char c) {
    const std::size_t first = line.find_first_not_of(" \t");
    return first != std::string::npos && line[first] == c &&
           line.find_first_not_of(" \t", first + 1) == std::string::npos;
  };
  for (const std::string& line : split_lines(ptx)) {
    std::smatch m;
    if (std::regex_search(line, m, entry_re)) {
      entries.push_back(PtxEntry{m[1].str(), {}});
      current = &entries.back();
      depth = 0;
      continue;
    }
    if (current == nullptr) continue;
    if (depth == 0) {
      if (brace(line, '{')) depth = 1;  // parameters end, body starts
      continue;
    }
    if (brace(line, '{')) ++depth;
    if (brace(line, '}') && --depth == 0) {  // the body's closing brace
      current = nullptr;
      continue;
    }
    current->lines.push_back(line);
  }
  return entries;
}

std::vector<Resources> parse_ptxas_resources(const std::string& text) {
  static const std::regex entry_re(R"(Compiling entry function '([^']+)')");
  static const std::regex func_re(R"(Function properties for ([A-Za-z0-9_$.]+))");
  static const std::regex frame_re(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used_re(R"(Used (\d+) registers)");
  static const std::regex smem_re(R"((\d+) bytes smem)");
  static const std::regex lmem_re(R"((\d+) bytes lmem)");
  std::vector<Resources> out;
  Resources* current = nullptr;
  bool properties_of_current = false;
  for (const std::string& line : split_lines(text)) {
    std::smatch m;
    if (std::regex_search(line, m, entry_re)) {
      out.push_back(Resources{});
      out.back().mangled = m[1].str();
      current = &out.back();
      properties_of_current = false;
    } else if (std::regex_search(line, m, func_re)) {
      // properties of the entry being compiled, or of a non-entry function (not ours)
      properties_of_current = current != nullptr && m[1].str() == current->mangled;
    } else if (std::regex_search(line, m, frame_re)) {
      if (properties_of_current) {
        current->stack_frame_bytes = int_of(m, 1);
        current->spill_store_bytes = int_of(m, 2);
        current->spill_load_bytes = int_of(m, 3);
      }
    } else if (current != nullptr && std::regex_search(line, m, used_re)) {
      current->registers = int_of(m, 1);
      if (std::regex_search(line, m, smem_re)) current->smem_bytes = int_of(m, 1);
      if (std::regex_search(line, m, lmem_re)) current->lmem_bytes = int_of(m, 1);
      current = nullptr;  // the "Used" line closes the entry's report
    }
  }
  return out;
}

std::map<std::string, std::vector<std::string>> parse_sass_functions(const std::string& text) {
  static const std::regex cuobjdump_re(R"(^\s*Function\s*:\s*([A-Za-z0-9_$.]+))");
  static const std::regex nvdisasm_re(R"(^\s*\.section\s+\.text\.([A-Za-z0-9_$.]+),)");
  std::map<std::string, std::vector<std::string>> out;
  std::vector<std::string>* current = nullptr;
  for (const std::string& line : split_lines(text)) {
    std::smatch m;
    if (std::regex_search(line, m, cuobjdump_re) || std::regex_search(line, m, nvdisasm_re)) {
      current = &out[m[1].str()];
      continue;
    }
    if (current != nullptr) current->push_back(line);
  }
  return out;
}

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                              std::free);
  return status == 0 && name ? std::string(name.get()) : mangled;
}

bool has_reference_card(int arch) { return card_of(arch) != nullptr; }

Occupancy theoretical_occupancy(int arch, int block_threads, int registers, int static_smem_bytes,
                                int dynamic_smem_bytes) {
  const ReferenceCard* card = card_of(arch);
  if (card == nullptr) throw std::runtime_error("no reference card for sm_" + std::to_string(arch));
  cudaOccDeviceProp prop;
  prop.computeMajor = arch / 10;
  prop.computeMinor = arch % 10;
  prop.maxThreadsPerBlock = 1024;
  prop.maxThreadsPerMultiprocessor = card->max_threads_per_sm;
  prop.regsPerBlock = 64 * 1024;
  prop.regsPerMultiprocessor = 64 * 1024;
  prop.warpSize = 32;
  prop.sharedMemPerBlock = 48 * 1024;
  prop.sharedMemPerMultiprocessor = card->smem_per_sm;
  prop.numSms = card->sms;
  prop.sharedMemPerBlockOptin = card->smem_per_block_optin;
  prop.reservedSharedMemPerBlock = 1024;

  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = 1024;
  attr.numRegs = registers;
  attr.sharedSizeBytes = static_cast<std::size_t>(static_smem_bytes);
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attr.maxDynamicSharedSizeBytes = card->smem_per_block_optin;
  attr.numBlockBarriers = 1;

  cudaOccDeviceState state;
  cudaOccResult result{};
  const cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state, block_threads,
                                                                   static_cast<std::size_t>(dynamic_smem_bytes));
  if (err != CUDA_OCC_SUCCESS) {
    throw std::runtime_error("cuda_occupancy.h error " + std::to_string(static_cast<int>(err)) + " for sm_" +
                             std::to_string(arch));
  }
  Occupancy occ;
  occ.card = card->name;
  occ.blocks_per_sm = result.activeBlocksPerMultiprocessor;
  occ.fraction = static_cast<double>(occ.blocks_per_sm) * block_threads / card->max_threads_per_sm;
  const unsigned f = result.limitingFactors;
  const char* sep = "";
  for (const auto& [bit, what] : {std::pair{OCC_LIMIT_WARPS, "warps"}, std::pair{OCC_LIMIT_REGISTERS, "registers"},
                                  std::pair{OCC_LIMIT_SHARED_MEMORY, "shared memory"},
                                  std::pair{OCC_LIMIT_BLOCKS, "blocks"}, std::pair{OCC_LIMIT_BARRIERS, "barriers"}}) {
    if ((f & static_cast<unsigned>(bit)) != 0) {
      occ.limited_by += std::string(sep) + what;
      sep = "+";
    }
  }
  return occ;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string find_disassembler(const std::string& tool, const std::string& cuda_bin_dir, const std::string& repo_root) {
  std::string env_name = "GPUBENCH_" + tool;
  for (char& c : env_name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (const char* env = std::getenv(env_name.c_str()); env != nullptr && is_executable(env)) return env;
  if (is_executable(cuda_bin_dir + "/" + tool)) return cuda_bin_dir + "/" + tool;
  const char* active_venv = std::getenv("VIRTUAL_ENV");
  for (const std::string& venv : {repo_root + "/.venv", std::string(active_venv ? active_venv : "")}) {
    if (venv.empty()) continue;
    const std::string found = find_in_venv(venv, tool);
    if (!found.empty()) return found;
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::istringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (!dir.empty() && is_executable(dir + "/" + tool)) return dir + "/" + tool;
    }
  }
  return "";
}

std::string run_command(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *status = -1;
    return out;
  }
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int raw = pclose(pipe);
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

}  // namespace gpubench::contract
