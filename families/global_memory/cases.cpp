// The device-memory table: sequential copy, read-only, write-only, the per-SM cache read,
// strided, random gather and pointer chase, each over a working-set sweep wide enough to show
// L1, L2 and DRAM plateaus.
// Library references (cudaMemcpy on the copy engine, Thrust, CUB; memcpy on the host) are rows
// of the same kernels with the library as the variant.
#include <algorithm>
#include <cmath>

#include "families/global_memory/global_memory.h"
#include "harness/family.h"

GPUBENCH_FAMILY(global_memory)

namespace gpubench {

namespace {

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

// Sizes from `lo` to `hi` (inclusive), growing by `factor`.
std::vector<std::uint64_t> geometric(std::uint64_t lo, std::uint64_t hi, std::uint64_t factor) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t s = lo; s <= hi; s *= factor) v.push_back(s);
  return v;
}

// Largest power of two <= x (x >= 1).
std::uint64_t floor_pow2(std::uint64_t x) {
  std::uint64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

// Top of the sweep: at least 1 GiB and 8 x L2 (so DRAM dominates), at most a quarter of memory
// (copy needs two buffers and the L2 flush buffer needs room too).
std::uint64_t sweep_top(const SweepOptions& o) {
  if (o.quick) return 16 * MiB;
  std::uint64_t top = std::max<std::uint64_t>(1 * GiB, floor_pow2(std::max<std::uint64_t>(o.l2_bytes, 1) * 8));
  if (o.memory_bytes > 0) top = std::min(top, floor_pow2(std::max<std::uint64_t>(o.memory_bytes / 4, 64 * MiB)));
  return top;
}

BenchCase make(const char* kernel, const char* variant, std::string params, WorkModel work, const SweepOptions& o) {
  BenchCase c;
  c.family = "bandwidth";
  c.kernel = kernel;
  c.variant = variant;
  c.params = std::move(params);
  c.work = work;
  // The level the row measures: DRAM-sized rows against the DRAM peak, cache-resident ones
  // against the (unknown) L2 figure, so they carry no percentage of a ceiling they exceed.
  c.level = memory_level(work.working_set_bytes, o);
  if (c.work.peak == PeakKind::dram && c.level == "l2") c.work.peak = PeakKind::l2;
  c.sweep = "bytes";
  // Flush the L2 between timed runs once the working set is a sizeable part of it; smaller sets
  // are measured cache-resident on purpose (they show the cache levels).
  c.needs_flush = o.l2_bytes > 0 && work.working_set_bytes >= static_cast<double>(o.l2_bytes) / 2;
  return c;
}

// The streaming rows (copy, read, write): DRAM-sized sets rotate among copies of their buffers
// that together hold at least 4 x L2, instead of a flush before a launch of 10-40 us (which
// read 5-20 % low on an H100); cache-resident sets repeat passes over the same buffers.
BenchCase make_streaming(const char* kernel, const char* variant, const std::string& params, WorkModel work,
                         const SweepOptions& o) {
  BenchCase c = make(kernel, variant, params, work, o);
  if (c.needs_flush) {
    c.needs_flush = false;
    const double want = 4.0 * static_cast<double>(o.l2_bytes);
    c.slots = std::max(1, static_cast<int>(std::ceil(want / work.working_set_bytes)));
  }
  return c;
}

}  // namespace

std::vector<BenchCase> families::global_memory::cases(const SweepOptions& o) {
  // Traffic granularity (sectors, fetch unit, read-fill): from the device, via SweepOptions.
  const TrafficGeometry& sector = o.traffic;
  std::vector<BenchCase> cases;
  const std::uint64_t top = sweep_top(o);
  const std::uint64_t step = o.quick ? 16 : 4;

  for (std::uint64_t bytes : geometric(4 * KiB, top, step)) {
    const std::string p = "bytes:" + size_token(bytes);
    const double b = static_cast<double>(bytes);
    for (const char* variant : {"kernel", "memcpy_ce", "thrust", "memcpy"}) {
      cases.push_back(make_streaming("copy", variant, p, copy_work(b), o));
      cases.back().args["bytes"] = b;
    }
    for (const char* variant : {"kernel", "cub"}) {
      cases.push_back(make_streaming("read", variant, p, read_work(b), o));
      cases.back().args["bytes"] = b;
    }
    cases.push_back(make_streaming("write", "kernel", p, write_work(b), o));
    cases.back().args["bytes"] = b;
  }

  // The per-SM cache read: every block (a GPU) or thread (the host) reads the same set, so each
  // SM keeps it in its L1 while it fits and re-reads it from the L2 beyond. 4 KiB to 1 MiB spans
  // the L1 of every NVIDIA architecture (up to 256 KiB with the shared memory) and a few times
  // more: on a GPU a set as large as the SM's L1 and shared memory together is labelled l2 (it
  // cannot be held; the host's level stays its per-core caches, L1 and L2 alike).
  const int readers =
      std::max(1, o.backend_kind == "cuda" ? o.sm_count * kernels::kBlockSetReadBlocksPerSm : o.sm_count);
  for (std::uint64_t bytes : geometric(4 * KiB, 1 * MiB, step)) {
    BenchCase c = make("block_set_read", "kernel", "bytes:" + size_token(bytes),
                       block_set_read_work(static_cast<double>(bytes), readers), o);
    // By design the working set is what one SM's L1 must hold, where it can.
    c.level = o.l1_bytes > 0 && bytes >= o.l1_bytes ? "l2" : "l1";
    c.needs_flush = false;
    c.args["bytes"] = static_cast<double>(bytes);
    c.args["readers"] = readers;
    cases.push_back(std::move(c));
  }

  // Strided copy over a span far above L2, so each stride shows DRAM sector efficiency.
  const std::uint64_t span = o.quick ? 16 * MiB : std::min<std::uint64_t>(top, 256 * MiB);
  for (int stride : {1, 2, 4, 8, 16, 32, 64}) {
    const std::string p = "bytes:" + size_token(span) + ",stride:" + std::to_string(stride);
    cases.push_back(make("strided", "kernel", p, strided_work(static_cast<double>(span), stride, 4, sector), o));
    cases.back().sweep = "stride";
    cases.back().args["bytes"] = static_cast<double>(span);
    cases.back().args["stride"] = stride;
  }

  // Random gather out[i] = in[idx[i]]: `bytes` is the size of the float input (and output).
  for (std::uint64_t bytes : geometric(64 * KiB, std::min<std::uint64_t>(top, o.quick ? 16 * MiB : 1 * GiB), 16)) {
    const std::string p = "bytes:" + size_token(bytes);
    for (const char* variant : {"kernel", "thrust"}) {
      cases.push_back(
          make("gather", variant, p,
               gather_work(static_cast<double>(bytes) / 4, 4, 4, sector, static_cast<double>(o.l2_bytes) / 2), o));
      cases.back().args["bytes"] = static_cast<double>(bytes);
    }
  }

  // Dependent pointer chase: latency per level. A fixed number of loads per run keeps each
  // run short at DRAM latency while still touching far more lines than L1 holds.
  const double steps = o.quick ? 4096 : 65536;
  for (std::uint64_t bytes : geometric(16 * KiB, std::min<std::uint64_t>(top, o.quick ? 16 * MiB : 256 * MiB), 4)) {
    cases.push_back(make("chase", "kernel", "bytes:" + size_token(bytes),
                         chase_work(steps, static_cast<double>(bytes), 4, sector), o));
    cases.back().work.metric = Metric::latency_ns;  // its headline: the time per dependent load
    cases.back().args["bytes"] = static_cast<double>(bytes);
    cases.back().args["steps"] = steps;
  }
  return cases;
}

}  // namespace gpubench
