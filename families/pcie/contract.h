// Instruction contract of the PCIe kernels (pcie.cu / pcie.cuh, pcie_spin.cu / pcie_spin.cuh), checked by
// tests/contract for every target architecture (see kernels/contract.h for the fields).
//
// Why these numbers: the SM-driven copy keeps kVectorsPerThread (4) 16-byte loads in flight per
// thread before its stores: exactly 4 128-bit loads in the PTX, so a refactor that serializes
// them (one load, one store) fails here. Over PCIe the round trip is about a microsecond, so the
// bytes in flight matter even more than for DRAM: the grid holds kBlocksPerSm (4) blocks of 256
// per SM, 64 KiB in flight per SM, and the contract asks for full occupancy (32 registers: 8 such
// blocks could be resident), so none of the 4 waits for room. The spin kernel is one thread by design; what matters is
// that it polls with a volatile load (a cached load would never see the host's release), reads
// the global timer for its timeout, sleeps between polls and fences at system scope before
// exiting so the host sees its status.
#pragma once

#include "families/global_memory/contract.h"  // kPtxLoad128 and friends
#include "kernels/contract.h"

namespace gpubench::kernels {

/// The contract of a kernel whose body is kernels/link_copy.cuh's (this family's SM copy, and
/// families/p2p's): the same instructions and budget whatever memory is on the far side.
// clang-format off: each line one group of properties
inline contract::KernelContract link_copy_contract(const std::string& name_regex) {
  return contract::kernel(name_regex)
      .block(256)
      .registers(32)
      .static_smem(0)
      .occupancy(1.0)
      .ptx({kPtxLoad128, kPtxStore128})
      .ptx_count(kPtxLoad128, 4)
      .ptx_count(kPtxStore128, 4)
      .sass({kSassLoad128, kSassStore128})
      .on_arch(100, 40, 0.75)
      .on_arch(120, 48, 0.75);
}
// clang-format on

/// Contracts of every kernel in pcie.cu.
inline const contract::FileContract kPcieContract = {link_copy_contract(R"(::pcie_sm_copy_kernel\()")};

// clang-format off: one kernel per row, each line one group of properties

/// Contract of pcie_spin.cu.
inline const contract::FileContract kPcieSpinContract = {
    contract::kernel(R"(pcie_spin_kernel\()")
        .block(1)
        .registers(32)
        .static_smem(0)
        .occupancy(0.0)
        .ptx({R"(%globaltimer)", R"(\bld\.volatile\.global\.u32\b)", R"(\bnanosleep\b)",
              R"(\b(membar\.sys|fence\.(sc|acq_rel)\.sys)\b)", R"(\bst\.volatile\.global\.u32\b)"}),
};
// clang-format on

}  // namespace gpubench::kernels
