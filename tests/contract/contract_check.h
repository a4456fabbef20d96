// Readers of the compiler's output for the instruction-contract tests: PTX entries, ptxas -v
// resource lines, SASS listings (cuobjdump -sass or nvdisasm), and the theoretical occupancy
// of a kernel on each architecture's reference card (cuda_occupancy.h, no GPU needed).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpubench::contract {

/// One `.entry` of a PTX file.
struct PtxEntry {
  std::string mangled;             ///< entry name as in the PTX
  std::vector<std::string> lines;  ///< the body, one PTX line per element
};

/// The `.entry` functions of a PTX file, in order.
std::vector<PtxEntry> parse_ptx_entries(const std::string& ptx);

/// ptxas -v figures of one entry function.
struct Resources {
  std::string mangled;        ///< entry name
  int registers = -1;         ///< "Used N registers" (-1 when the line is missing)
  int smem_bytes = 0;         ///< static shared memory
  int lmem_bytes = 0;         ///< local memory
  int stack_frame_bytes = 0;  ///< stack frame
  int spill_store_bytes = 0;  ///< spill stores
  int spill_load_bytes = 0;   ///< spill loads
};

/// Resources of every entry function in ptxas -v output (non-entry functions are skipped).
std::vector<Resources> parse_ptxas_resources(const std::string& text);

/// SASS lines per function (mangled name) from `cuobjdump -sass` or `nvdisasm` output.
std::map<std::string, std::vector<std::string>> parse_sass_functions(const std::string& text);

/// Demangled C++ name (the input when it is not a mangled name).
std::string demangle(const std::string& mangled);

/// Theoretical occupancy of one kernel on an architecture's reference card.
struct Occupancy {
  std::string card;        ///< reference card, e.g. "H100 SXM"
  int blocks_per_sm = 0;   ///< resident blocks per SM
  double fraction = 0.0;   ///< resident threads / maximum threads per SM
  std::string limited_by;  ///< what limits it: warps, registers, shared memory, blocks
};

/// True when a reference card is known for sm_<arch>.
bool has_reference_card(int arch);

/// Occupancy from cuda_occupancy.h with the reference card of sm_<arch> (A100 for 80, H100 for
/// 90, B200 for 100, RTX 5090 for 120). Throws std::runtime_error for an unknown arch or an
/// error of the calculator.
Occupancy theoretical_occupancy(int arch, int block_threads, int registers, int static_smem_bytes,
                                int dynamic_smem_bytes);

/// Whole file as a string (throws std::runtime_error naming the path when unreadable).
std::string read_text_file(const std::string& path);

/// Path of a disassembler (`cuobjdump` or `nvdisasm`) or "" when none is installed. Looks at
/// $GPUBENCH_CUOBJDUMP / $GPUBENCH_NVDISASM, the CUDA toolkit's bin directory, the pip packages
/// nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm in <repo>/.venv and $VIRTUAL_ENV, then $PATH.
std::string find_disassembler(const std::string& tool, const std::string& cuda_bin_dir, const std::string& repo_root);

/// Runs `command` through the shell and returns its standard output; *status gets the exit code.
std::string run_command(const std::string& command, int* status);

}  // namespace gpubench::contract
