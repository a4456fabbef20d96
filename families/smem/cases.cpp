// The shared-memory table: bandwidth/smem/kernel/bytes:32KiB. Every block of a full grid
// (kSmemBlocksPerSm per SM, all resident at once) fills a 32 KiB shared array once, then reads
// it kSmemPasses times with 16-byte, bank-conflict-free loads: the SMs' shared-memory ceiling
// (128 bytes per clock per SM on sm_70 and newer; about 33 TB/s on an H100 SXM). One operation
// is one launch; its bytes are every pass of every block over its array (the one fill from
// global memory and the one word per thread written back are under 0.1 % of that).
#include "harness/family.h"

GPUBENCH_FAMILY(smem)

namespace gpubench {

namespace {

/// Blocks per SM: 4 x 32 KiB = 128 KiB of shared memory per SM, which fits on sm_80 (164 KiB)
/// and sm_90 (228 KiB), and 4 x 256 threads keep enough loads in flight to saturate the banks.
constexpr int kSmemBlocksPerSm = 4;
/// Passes per launch: 1024 passes over 128 KiB per SM is about 0.5 ms on an H100, so the
/// launch gap and the fill are noise.
constexpr int kSmemPasses = 1024;
constexpr std::uint64_t kSmemBytesPerBlock = std::uint64_t{32} * 1024;

}  // namespace

std::vector<BenchCase> families::smem::cases(const SweepOptions& o) {
  BenchCase c;
  c.family = "bandwidth";
  c.kernel = "smem";
  c.variant = "kernel";
  c.params = "bytes:" + size_token(kSmemBytesPerBlock);
  const int blocks = (o.sm_count > 0 ? o.sm_count : 1) * kSmemBlocksPerSm;
  const int passes = o.quick ? kSmemPasses / 8 : kSmemPasses;
  c.args = {{"bytes", static_cast<double>(kSmemBytesPerBlock)}, {"blocks", blocks}, {"passes", passes}};
  const double bytes = static_cast<double>(kSmemBytesPerBlock) * blocks;
  c.work.useful_bytes = bytes * passes;
  c.work.traffic_bytes = c.work.useful_bytes;
  c.work.working_set_bytes = bytes;
  c.work.peak = PeakKind::smem;
  c.work.metric = Metric::GBps;
  c.level = "smem";
  c.sweep = "bytes";
  c.min_cc = 70;
  return {c};
}

}  // namespace gpubench
