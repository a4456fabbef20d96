// Instruction contract of the peer-to-peer SM copy (p2p.cu / p2p.cuh), checked by tests/contract
// for every target architecture (see kernels/contract.h for the fields).
//
// Why these numbers: the copy keeps kVectorsPerThread (4) 16-byte loads in flight per thread
// before its stores: exactly 4 128-bit loads and 4 128-bit stores in the PTX, so a refactor that
// serializes them (one load, one store) or splits a vector into narrower accesses fails here. The
// body is the PCIe SM copy's (kernels/link_copy.cuh), and so is the contract (pcie/contract.h).
// Reading a peer's memory costs a round trip over NVLink or PCIe of a microsecond or more, so
// the bytes in flight matter even more than for DRAM: the grid holds kBlocksPerSm (4) blocks of
// 256 per SM, 64 KiB in flight per SM, within the full occupancy the contract asks for. No local memory (a spilled
// vector would double the traffic); the budget is what nvcc 13 gives the same loop shape in the PCIe copy (sm_80/sm_90:
// 32 registers; ptxas for sm_100/sm_120 uses more, occupancy still >= 75 %).
#pragma once

#include "families/pcie/contract.h"  // link_copy_contract

namespace gpubench::kernels {

/// Contracts of every kernel in p2p.cu.
inline const contract::FileContract kP2pContract = {link_copy_contract(R"(::p2p_copy_kernel\()")};

}  // namespace gpubench::kernels
