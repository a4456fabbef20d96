// Kernel body of the SM-driven peer-to-peer copy (bandwidth/p2p_sm/*). Compiled by nvcc
// (families/p2p/p2p.cu) and, unchanged, by g++ under the host SIMT shim (kernels/simt/simt.h) for
// the emulation test (families/p2p/tests/test_emulation.cpp).
//
// p2p_copy_kernel: dst[0..bytes) = src[0..bytes), one side in this GPU's memory and the other in
// a peer GPU's, reached through peer access (cudaDeviceEnablePeerAccess): a plain global load or
// store to the peer's address crosses NVLink or PCIe. The body is kernels/link_copy.cuh's (the
// PCIe SM copy's too): 16-byte vectors, every load of a tile issued before its first store, so
// that remote reads (p2p_sm/read) keep enough requests in flight to cover the link's round trip;
// remote writes (p2p_sm/write) are posted.
// Work: `bytes` cross the link once per copy (the bidirectional rows run one copy each way).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/link_copy.cuh"

namespace gpubench::kernels::p2p {

using link_copy::copy_blocks;
using link_copy::kBlocksPerSm;
using link_copy::kBlockThreads;
using link_copy::kTileBytes;
using link_copy::kVectorsPerThread;

/// See the file comment. src and dst 16-byte aligned.
__global__ void __launch_bounds__(kBlockThreads)
    p2p_copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t bytes) {
  link_copy::copy(src, dst, bytes);
}

}  // namespace gpubench::kernels::p2p
