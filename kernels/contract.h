// Instruction contract of a kernel: what the compiler's own output for it must show. Declared
// beside each kernel file (kernels/<family>_contract.h) and checked, for every target
// architecture, by the contract tests (tests/contract/) against nvcc's PTX, ptxas -v resource
// usage, the cuda_occupancy.h occupancy calculator and, where cuobjdump/nvdisasm exist, SASS.
// Plain C++: no CUDA include.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpubench::contract {

/// Budget of one architecture where it differs from the kernel's default (a newer ptxas may
/// schedule the same kernel with more registers).
struct ArchBudget {
  int arch = 0;                ///< e.g. 100 for sm_100
  int max_registers = 0;       ///< replaces KernelContract::max_registers on that arch
  double min_occupancy = 0.0;  ///< replaces KernelContract::min_occupancy on that arch
};

/// The contract of one __global__ function (one template instantiation).
///
/// Checked for every architecture >= min_arch the kernel file is compiled for. Independent of
/// the declared fields, every kernel must have 0 bytes of local memory (`.local` in PTX, lmem in
/// ptxas -v, LDL/STL in SASS), 0 spill bytes and a 0-byte stack frame.
struct KernelContract {
  /// ECMAScript regex searched in the demangled entry name, e.g. "copy_kernel<4>\\(". Every
  /// entry of the kernel file must match exactly one contract.
  std::string kernel;
  /// Block size the launcher uses (for the occupancy computation).
  int block_threads = 0;
  /// Register budget per thread (ptxas "Used N registers").
  int max_registers = 0;
  /// Static shared memory budget per block in bytes (ptxas "N bytes smem").
  int max_static_smem_bytes = 0;
  /// Dynamic shared memory per block the launcher requests (for the occupancy computation).
  int dynamic_smem_bytes = 0;
  /// Theoretical occupancy target: resident threads per SM / maximum threads per SM, from
  /// cuda_occupancy.h with the architecture's reference card (A100, H100, ...).
  double min_occupancy = 0.0;
  /// Regexes each of which must match at least one line of the kernel's PTX.
  std::vector<std::string> ptx_required;
  /// Regexes no line of the kernel's PTX may match.
  std::vector<std::string> ptx_forbidden;
  /// (regex, n): exactly n lines of the kernel's PTX match (e.g. an exact FMA count).
  std::vector<std::pair<std::string, int>> ptx_counts;
  /// Regexes each of which must match at least one line of the kernel's SASS.
  std::vector<std::string> sass_required;
  /// Regexes no line of the kernel's SASS may match.
  std::vector<std::string> sass_forbidden;
  /// (regex, n): exactly n lines of the kernel's SASS match (e.g. how its wgmma are fenced).
  std::vector<std::pair<std::string, int>> sass_counts;
  /// Lowest architecture (e.g. 90) the contract applies to; 0 = all.
  int min_arch = 0;
  /// Per-architecture budgets overriding max_registers/min_occupancy.
  std::vector<ArchBudget> arch_budgets;

  /// Register budget on `arch`.
  int registers_on(int arch) const {
    for (const ArchBudget& b : arch_budgets) {
      if (b.arch == arch) return b.max_registers;
    }
    return max_registers;
  }
  /// Occupancy target on `arch`.
  double occupancy_on(int arch) const {
    for (const ArchBudget& b : arch_budgets) {
      if (b.arch == arch) return b.min_occupancy;
    }
    return min_occupancy;
  }

  // Builder steps, so a contract reads as one expression (C++17 has no designated initializers):
  //   contract::kernel("::copy_kernel<4>\\(").block(256).registers(32).occupancy(1.0)
  //       .ptx({...}).sass({...}).on_arch(100, 40, 0.75)

  /// Sets block_threads.
  KernelContract& block(int threads) {
    block_threads = threads;
    return *this;
  }
  /// Sets max_registers.
  KernelContract& registers(int n) {
    max_registers = n;
    return *this;
  }
  /// Sets max_static_smem_bytes.
  KernelContract& static_smem(int bytes) {
    max_static_smem_bytes = bytes;
    return *this;
  }
  /// Sets dynamic_smem_bytes.
  KernelContract& dynamic_smem(int bytes) {
    dynamic_smem_bytes = bytes;
    return *this;
  }
  /// Sets min_occupancy.
  KernelContract& occupancy(double fraction) {
    min_occupancy = fraction;
    return *this;
  }
  /// Appends to ptx_required.
  KernelContract& ptx(const std::vector<std::string>& regexes) {
    ptx_required.insert(ptx_required.end(), regexes.begin(), regexes.end());
    return *this;
  }
  /// Appends to ptx_forbidden.
  KernelContract& no_ptx(const std::vector<std::string>& regexes) {
    ptx_forbidden.insert(ptx_forbidden.end(), regexes.begin(), regexes.end());
    return *this;
  }
  /// Appends to ptx_counts.
  KernelContract& ptx_count(const std::string& regex, int n) {
    ptx_counts.emplace_back(regex, n);
    return *this;
  }
  /// Appends to sass_required.
  KernelContract& sass(const std::vector<std::string>& regexes) {
    sass_required.insert(sass_required.end(), regexes.begin(), regexes.end());
    return *this;
  }
  /// Appends to sass_forbidden.
  KernelContract& no_sass(const std::vector<std::string>& regexes) {
    sass_forbidden.insert(sass_forbidden.end(), regexes.begin(), regexes.end());
    return *this;
  }
  /// Appends to sass_counts.
  KernelContract& sass_count(const std::string& regex, int n) {
    sass_counts.emplace_back(regex, n);
    return *this;
  }
  /// Sets min_arch.
  KernelContract& from_arch(int arch) {
    min_arch = arch;
    return *this;
  }
  /// Adds a per-architecture budget.
  KernelContract& on_arch(int arch, int registers_budget, double occupancy_target) {
    arch_budgets.push_back(ArchBudget{arch, registers_budget, occupancy_target});
    return *this;
  }
};

/// Starts a contract for the kernel whose demangled name matches `name_regex`.
inline KernelContract kernel(const std::string& name_regex) {
  KernelContract c;
  c.kernel = name_regex;
  return c;
}

/// The contracts of every kernel compiled from one source file.
using FileContract = std::vector<KernelContract>;

}  // namespace gpubench::contract
