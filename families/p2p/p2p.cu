// Peer-to-peer family kernel launcher (bandwidth/p2p_sm/*): the SM-driven copy between this GPU's
// memory and a peer's (families/p2p/p2p.cuh), launched on a stream of the current device.
//
// What it measures and its work model: `bytes` cross the GPU-GPU link once per copy (a write
// pushes them to the peer, a read pulls them from it); the bidirectional rows run one copy on
// each GPU at once and count both. No theoretical peak is known for the link (NVLink per-card
// figures are not in the card table), so no percent of peak.
// Variants of the family (names in families/p2p/cases.cpp): p2p_ce/{write,read,bidir} (copy
// engines, cudaMemcpyPeerAsync) and p2p_sm/{write,read,bidir} (this kernel).
#include "families/p2p/p2p.cuh"
#include "families/p2p/p2p.h"
#include "kernels/launch.cuh"

namespace gpubench::kernels {

int p2p_copy_blocks(std::size_t bytes, int sm_count) { return p2p::copy_blocks(bytes, sm_count); }

int launch_p2p_copy(const void* src, void* dst, std::size_t bytes, int sm_count, Stream stream) {
  if (bytes == 0) return rt::kSuccess;
  return rt::launch(p2p::p2p_copy_kernel, p2p::copy_blocks(bytes, sm_count), p2p::kBlockThreads, 0, stream,
                    static_cast<const uint4*>(src), static_cast<uint4*>(dst), bytes);
}

}  // namespace gpubench::kernels
