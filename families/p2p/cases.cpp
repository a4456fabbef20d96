// The peer-to-peer table: row I of a node's GPU-to-GPU bandwidth matrix, measured from CUDA device
// I (the device of the run) to every other GPU J of the node. `--device=all` runs every GPU and
// so collects the whole matrix (scripts/gpubench_tools/p2p_matrix.py draws it).
//
// Names: bandwidth/<kernel>/<direction>/peer:<J>,bytes:<size>
//   kernel     p2p_ce  copy engines: cudaMemcpyPeerAsync on a stream of this device, so this
//                      device's copy engine does the work (as nvbandwidth's CE tests issue a
//                      write from the source's context and a read from the destination's)
//              p2p_sm  a copy kernel on this device's SMs, reaching the peer's memory through
//                      peer access (16-byte loads and stores)
//   direction  write   this device's buffer -> peer J's buffer (this device pushes)
//              read    peer J's buffer -> this device's buffer (this device pulls: remote reads
//                      are non-posted requests, unlike writes, and may run at another rate)
//              bidir   both at once: one copy I -> J issued on device I and one J -> I issued on
//                      device J, each of <size>; the bytes of both are counted
// Every kernel segment starts with "p2p", so --filter=bandwidth/p2p selects this family alone.
//
// The rows exist only on the CUDA backend of a process that sees two GPUs or more: the host
// backend and a one-GPU node list none. Each row's label carries level=p2p and the link to the
// peer from NVML's topology as path= (nvlink, pcie_switch, ..., unknown: harness/cuda/
// peer_topology.h). Bytes are counted once per direction (a copy moves them across the link
// once), as nvbandwidth counts them: a bidirectional row moves 2 x size per operation. No
// theoretical link bandwidth is known here, so no percent of peak.
#include "harness/family.h"

GPUBENCH_FAMILY(p2p)

namespace gpubench {

namespace {

constexpr std::uint64_t MiB = std::uint64_t{1} << 20;

struct Row {
  const char* kernel;
  const char* direction;
  int directions;  ///< copies per operation: 1, or 2 for bidir
};

constexpr Row kRows[] = {
    {"p2p_ce", "write", 1}, {"p2p_ce", "read", 1}, {"p2p_ce", "bidir", 2},
    {"p2p_sm", "write", 1}, {"p2p_sm", "read", 1}, {"p2p_sm", "bidir", 2},
};

/// Bytes across the link per operation, once per direction; the buffers both devices hold.
WorkModel p2p_work(double bytes, int directions) {
  WorkModel w;
  w.useful_bytes = bytes * directions;
  w.working_set_bytes = 2 * bytes * directions;  // a source and a destination per copy
  w.peak = PeakKind::none;
  w.metric = Metric::GBps;
  return w;
}

}  // namespace

std::vector<BenchCase> families::p2p::cases(const SweepOptions& o) {
  std::vector<BenchCase> cases;
  if (o.backend_kind != "cuda" || o.device_count < 2 || o.device_ordinal < 0) return cases;
  // 256 MiB: far past every GPU's L2 on both ends, and a copy long (~0.35 ms at 750 GB/s) against
  // the few microseconds of queueing the next one; --quick: 16 MiB, still ~40 us over NVLink.
  const std::uint64_t bytes = o.quick ? 16 * MiB : 256 * MiB;
  for (int peer = 0; peer < o.device_count; ++peer) {
    if (peer == o.device_ordinal) continue;
    const std::string path = static_cast<std::size_t>(peer) < o.peer_paths.size() && !o.peer_paths[peer].empty()
                                 ? o.peer_paths[peer]
                                 : "unknown";
    for (const Row& r : kRows) {
      BenchCase c;
      c.family = "bandwidth";
      c.kernel = r.kernel;
      c.variant = r.direction;
      c.params = "peer:" + std::to_string(peer) + ",bytes:" + size_token(bytes);
      c.args["peer"] = peer;
      c.args["bytes"] = static_cast<double>(bytes);
      c.work = p2p_work(static_cast<double>(bytes), r.directions);
      c.level = "p2p";
      c.sweep = "peer";
      c.path = path;
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace gpubench
