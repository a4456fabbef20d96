// The PCIe table: host<->device transfers over a size sweep, measured against the negotiated
// link (percent of link from transfer_work's pcie_h2d / pcie_d2h peak).
//
// Names: bandwidth/<kernel>/<memory>_<engine>/bytes:<size>
//   kernel  pcie_h2d, pcie_d2h             one direction alone
//           pcie_bidir_h2d, pcie_bidir_d2h  that direction, timed while the other one runs on a
//                                           second stream (each direction its own result)
//   memory  pinned (cudaHostAlloc), pageable (malloc), wc_pinned (write-combined pinned)
//   engine  ce: copy engine (cudaMemcpyAsync); sm: a kernel reading or writing mapped pinned
//           memory with 16-byte accesses; memcpy: the host backend's pageable-to-pageable copy
//           on one thread (what the driver's staging of a pageable transfer does per chunk)
// Every kernel segment starts with "pcie", so --filter=bandwidth/pcie selects this family alone.
// Bytes are counted once per transfer: the data crosses the link once.
#include "harness/family.h"

GPUBENCH_FAMILY(pcie)

namespace gpubench {

namespace {

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

struct Row {
  const char* kernel;
  const char* variant;
  PeakKind direction;
  /// The sweep goes on to 1 GiB: the pinned copy-engine transfers, one direction at a time (the
  /// headline figures, the buffer size nvbandwidth-style tools use), and the host's rows. The
  /// others stop at 256 MiB, where the H100 curves are long flat: their 1 GiB rows were a fifth
  /// of the bandwidth run's time (about 15 s of 90 on an H100, mostly pinning host memory).
  bool to_1GiB;
};

// Write-combined memory is for buffers the CPU writes and the GPU reads: it is not snooped on
// the way to the GPU, but CPU reads of it are uncached (slow), so it is measured host-to-device
// only. The host backend's rows are the pageable memcpy ones.
constexpr Row kRows[] = {
    {"pcie_h2d", "pinned_ce", PeakKind::pcie_h2d, true},
    {"pcie_h2d", "pageable_ce", PeakKind::pcie_h2d, false},
    {"pcie_h2d", "wc_pinned_ce", PeakKind::pcie_h2d, false},
    {"pcie_h2d", "pinned_sm", PeakKind::pcie_h2d, false},
    {"pcie_h2d", "pageable_memcpy", PeakKind::pcie_h2d, true},
    {"pcie_d2h", "pinned_ce", PeakKind::pcie_d2h, true},
    {"pcie_d2h", "pageable_ce", PeakKind::pcie_d2h, false},
    {"pcie_d2h", "pinned_sm", PeakKind::pcie_d2h, false},
    {"pcie_d2h", "pageable_memcpy", PeakKind::pcie_d2h, true},
    {"pcie_bidir_h2d", "pinned_ce", PeakKind::pcie_h2d, false},
    {"pcie_bidir_d2h", "pinned_ce", PeakKind::pcie_d2h, false},
};

}  // namespace

std::vector<BenchCase> families::pcie::cases(const SweepOptions& o) {
  // 4 KiB (latency-bound: per-transfer overhead dominates) to 256 MiB (bandwidth-bound: the
  // target is 90 % of the link from 256 MiB up), x16 per step, and 1 GiB for the rows marked
  // so. (x4 steps doubled the rows for little: on an H100 the curve is smooth and flat from
  // 16 MiB, and PCIe rows were half of the bandwidth run's time.) --quick: the two ends only,
  // 4 KiB and 16 MiB, in a smoke run's budget.
  std::vector<std::uint64_t> sizes;
  if (o.quick) {
    sizes = {4 * KiB, 16 * MiB};
  } else {
    for (std::uint64_t bytes = 4 * KiB; bytes <= 256 * MiB; bytes *= 16) sizes.push_back(bytes);
  }
  std::vector<BenchCase> cases;
  for (const Row& r : kRows) {
    std::vector<std::uint64_t> row_sizes = sizes;
    if (r.to_1GiB && !o.quick) row_sizes.push_back(1 * GiB);
    for (std::uint64_t bytes : row_sizes) {
      BenchCase c;
      c.family = "bandwidth";
      c.kernel = r.kernel;
      c.variant = r.variant;
      c.params = "bytes:" + size_token(bytes);
      c.args["bytes"] = static_cast<double>(bytes);
      c.work = transfer_work(static_cast<double>(bytes), r.direction);
      c.level = "pcie";
      c.sweep = "bytes";
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace gpubench
