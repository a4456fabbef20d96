// The memory-management table: the questions GPU users ask about memory every day, measured.
//
// Names: memory/<kernel>/<variant>/<params>, every row under memory/ so --filter=memory selects
// this family alone. Rows are per backend (the host's analogues are different operations, not
// stand-ins for the GPU's), so each backend's run lists only its own:
//
//   alloc/<allocator>/bytes:S        one allocate + free pair of S bytes (latency_us; p50_us and
//                                    p99_us over the pairs of the last sample)
//     cuda: cuda_malloc, async_pool_miss (cudaMallocAsync, pool release threshold 0: memory goes
//           back to the driver at every synchronize), async_pool_hit (threshold maximum: reuse),
//           preallocated (a free list of buffers allocated before: the reuse baseline),
//           pinned_host (cudaMallocHost + cudaFreeHost), host_register (cudaHostRegister of a
//           touched malloc'd buffer + cudaHostUnregister)
//     host: malloc, mmap (mmap + munmap of anonymous memory), pool (a free list)
//   alloc_loop/<how>/bytes:S         "allocate, run the copy kernel, free" against the same loop
//                                    with one allocation outside it (GB/s of the copy, and
//                                    us_per_iteration)
//     cuda: cuda_malloc_each, async_pool_each, allocated_once;  host: malloc_each, allocated_once
//   fragmentation/<allocator>/small:1MiB,large:64MiB   (cuda) a nearly full device (a ballast
//                                    block), interleaved allocations over up to 8 GiB, every other
//                                    one freed, then the largest block that can still be allocated
//                                    (largest_block_pct_of_free); latency_us per round
//   managed/<how>/bytes:S            (cuda) a kernel consuming S bytes that start on the host:
//     demand_fault (unified memory resident on the host, migrated on the kernel's faults;
//     us_per_4KiB_page, us_per_2MiB_page), prefetch (cudaMemPrefetchAsync, then the kernel),
//     explicit_copy (cudaMemcpyAsync from pinned memory, then the kernel), zero_copy (the kernel
//     reads mapped pinned memory across the link), read_mostly (cudaMemAdviseSetReadMostly, then
//     the kernel faults read-only copies), device_resident (the kernel on managed memory already
//     on the device: device speed), to_host (managed memory on the device read by the CPU: the
//     migration back)
//   first_touch/<pages>/bytes:S      (host) page-fault bandwidth, the analogue of demand
//                                    migration: pages_4k, pages_2m (transparent huge pages), and
//                                    populate (MAP_POPULATE: the analogue of a prefetch)
//   overlap/<engine>/<n>,bytes:S     a pipeline over 32 chunks: cuda_streams (H2D copy, kernel,
//                                    D2H copy per chunk, chunks spread over 1, 2, 4, 8 streams;
//                                    overlap_efficiency = serialized sum / concurrent time,
//                                    kernel_slowdown, bidir_copy_speedup); host_threads (copy in,
//                                    compute, copy out per chunk over 1, 2, 4, 8 threads)
//   axpy/<precision>/bytes:S         y = a*x + y with S bytes per vector in fp64, fp32, fp16 and
//                                    bf16: GB/s about equal, Gelem_per_s scaling with 1/bytes
// Managed memory never exceeds a quarter of the free device memory (the workloads skip a larger
// row): oversubscribed unified memory thrashes and can stall the GPU for minutes.
#include <string>

#include "harness/family.h"

GPUBENCH_FAMILY(memory)

namespace gpubench {

namespace {

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

BenchCase row(const std::string& kernel, const std::string& variant, const std::string& params, WorkModel work,
              const std::string& level, const std::string& sweep) {
  BenchCase c;
  c.family = "memory";
  c.kernel = kernel;
  c.variant = variant;
  c.params = params;
  c.work = work;
  c.level = level;
  c.sweep = sweep;
  return c;
}

BenchCase sized(const std::string& kernel, const std::string& variant, std::uint64_t bytes, WorkModel work,
                const std::string& level) {
  BenchCase c = row(kernel, variant, "bytes:" + size_token(bytes), work, level, "bytes");
  c.args["bytes"] = static_cast<double>(bytes);
  return c;
}

/// from, from x step, ... up to `to`.
std::vector<std::uint64_t> steps(std::uint64_t from, std::uint64_t to, std::uint64_t step) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t b = from; b <= to; b *= step) v.push_back(b);
  return v;
}

struct Precision {
  const char* name;
  int bytes;
};
constexpr Precision kPrecisions[] = {{"fp64", 8}, {"fp32", 4}, {"fp16", 2}, {"bf16", 2}};

constexpr int kPipelineChunks = 32;

}  // namespace

std::vector<BenchCase> families::memory::cases(const SweepOptions& o) {
  const bool cuda = o.backend_kind == "cuda";
  std::vector<BenchCase> cases;

  // Allocation: 4 KiB (the allocator's fixed cost) to 1 GiB (page-table work grows with size).
  const std::vector<const char*> allocators =
      cuda ? std::vector<const char*>{"cuda_malloc",  "async_pool_miss", "async_pool_hit",
                                      "preallocated", "pinned_host",     "host_register"}
           : std::vector<const char*>{"malloc", "mmap", "pool"};
  // --quick: the two ends, 4 KiB and 16 MiB (a smoke run's budget).
  std::vector<std::uint64_t> alloc_sizes =
      o.quick ? std::vector<std::uint64_t>{4 * KiB, 16 * MiB} : steps(4 * KiB, 256 * MiB, 16);
  if (!o.quick) alloc_sizes.push_back(GiB);
  for (const char* a : allocators)
    for (std::uint64_t bytes : alloc_sizes)
      cases.push_back(sized("alloc", a, bytes, latency_work(static_cast<double>(bytes)), "none"));

  // Allocate + copy + free per iteration against one allocation outside the loop.
  const std::vector<const char*> loops =
      cuda ? std::vector<const char*>{"cuda_malloc_each", "async_pool_each", "allocated_once"}
           : std::vector<const char*>{"malloc_each", "allocated_once"};
  for (const char* how : loops)
    for (std::uint64_t bytes : steps(MiB, o.quick ? 16 * MiB : 256 * MiB, 16)) {
      const double b = static_cast<double>(bytes);
      // Nothing is flushed between iterations: a set below half the L2 is read from it (level
      // l2, as every family labels it), one between half the L2 and the L2 partly from it and
      // partly from DRAM (neither level: no peak, kept off both plateaus), a larger one from DRAM.
      // A cache-resident row has no peak either: an iteration's fixed costs bound it (one launch
      // per iteration on the host clock, 2-4 us on a GPU, against a 2 MiB copy from the L2 in
      // well under 1 us), so its GB/s compares allocators, not the cache with its peak.
      const double l2 = static_cast<double>(o.l2_bytes);
      const bool partly_cached = o.l2_bytes > 0 && 2 * b >= l2 / 2 && 2 * b < l2;
      WorkModel w = copy_work(b);
      std::string level = memory_level(2 * b, o);
      if (level == "l2") w.peak = PeakKind::none;
      if (partly_cached) {
        w.peak = PeakKind::none;
        level = "none";
      }
      cases.push_back(sized("alloc_loop", how, bytes, w, level));
    }

  // Page-fault and migration rows: 2 MiB (one large page) to 512 MiB; --quick: 32 MiB alone, where
  // the link already sets the pace (a smoke run's budget).
  const std::vector<std::uint64_t> fault_sizes =
      o.quick ? std::vector<std::uint64_t>{32 * MiB} : steps(2 * MiB, 512 * MiB, 16);

  if (cuda) {
    for (const char* a : {"cuda_malloc", "async_pool"}) {
      BenchCase c = row("fragmentation", a, "small:1MiB,large:64MiB", latency_work(64.0 * MiB), "none", "none");
      c.args["small"] = static_cast<double>(MiB);
      c.args["large"] = static_cast<double>(64 * MiB);
      cases.push_back(c);
    }
    // 2 MiB (one large page) to 512 MiB: fault handling is per page and per 2 MiB block, the
    // link is the ceiling from tens of MiB up.
    for (const char* how :
         {"demand_fault", "prefetch", "explicit_copy", "zero_copy", "read_mostly", "device_resident", "to_host"})
      for (std::uint64_t bytes : fault_sizes) {
        const double b = static_cast<double>(bytes);
        const bool on_device = std::string(how) == "device_resident";
        WorkModel w = transfer_work(b, on_device ? PeakKind::dram : PeakKind::pcie_h2d);
        if (std::string(how) == "to_host") w.peak = PeakKind::pcie_d2h;
        BenchCase c = sized("managed", how, bytes, w, on_device ? memory_level(b, o) : "pcie");
        // Data already on the device is read from the L2 unless flushed: DRAM-sized rows are.
        c.needs_flush = on_device && c.level == "dram";
        if (on_device && c.level == "l2") c.work.peak = PeakKind::l2;
        cases.push_back(c);
      }
  } else {
    for (const char* pages : {"pages_4k", "pages_2m", "populate"})
      for (std::uint64_t bytes : fault_sizes) {
        WorkModel w = write_work(static_cast<double>(bytes));
        w.peak = PeakKind::none;  // page-fault handling, not a memory ceiling
        cases.push_back(sized("first_touch", pages, bytes, w, "dram"));
      }
  }

  // Copy/compute overlap over 1-8 streams (threads on the host). The bytes cross the link twice.
  const std::uint64_t pipeline_bytes = o.quick ? 32 * MiB : 256 * MiB;
  const char* engine = cuda ? "cuda_streams" : "host_threads";
  const std::string unit = cuda ? "streams" : "threads";
  for (int n : {1, 2, 4, 8}) {
    const double b = static_cast<double>(pipeline_bytes);
    WorkModel w = transfer_work(2 * b, PeakKind::none);  // both directions at once: no one-way peak
    w.working_set_bytes = b;
    BenchCase c = row("overlap", engine, unit + ":" + std::to_string(n) + ",bytes:" + size_token(pipeline_bytes), w,
                      cuda ? "pcie" : "dram", unit);
    c.args[unit] = n;
    c.args["bytes"] = b;
    c.args["chunks"] = kPipelineChunks;
    cases.push_back(c);
  }

  // The same streaming update in four precisions, S bytes per vector.
  for (const Precision& p : kPrecisions) {
    const std::uint64_t bytes = o.quick ? 16 * MiB : 256 * MiB;
    const double n = static_cast<double>(bytes) / p.bytes;
    BenchCase c =
        sized("axpy", p.name, bytes, axpy_work(n, p.bytes), memory_level(3.0 * static_cast<double>(bytes), o));
    c.args["elem_bytes"] = p.bytes;
    // Each launch moves 3 x S (>= 48 MiB, ~0.25 ms at DRAM speed on an H100 for 256 MiB): long
    // enough that flushing the L2 before it, outside the timed interval, is the cold method.
    c.needs_flush = o.l2_bytes > 0 && c.work.working_set_bytes >= static_cast<double>(o.l2_bytes) / 2;
    cases.push_back(c);
  }
  return cases;
}

}  // namespace gpubench
