// The wgmma kernel's shape as host code needs it, in a header of constants alone: the kernel
// (families/gemm/hgemm_sm90.cuh) includes it too, and a kernel header includes nothing of the
// host's standard library, so CUDA 12's runtime compiler can build it (scripts/cuda12_device_check.py).
#pragma once

namespace gpubench::kernels {

/// The wgmma kernel's tile of C (hgemm_sm90.cuh kBlockM x kBlockN), for host code that reads its output.
constexpr int kWgmmaTileM = 128;
constexpr int kWgmmaTileN = 256;

/// Registers per thread the wgmma kernel must hold at entry: setmaxnreg only moves registers
/// between the block's warpgroups, so the entry allocation of its 384 threads must cover the
/// producer's 40 and the consumers' 232 per thread (64 512 = 168 x 384).
constexpr int kWgmmaEntryRegisters = 168;

}  // namespace gpubench::kernels
