// The intensity table: the arithmetic-intensity sweep (roofline family) and the peak-FMA rows
// (compute family) that give the empirical compute ceiling. Kernels: families/intensity/intensity.cu on a
// GPU, families/intensity/host.cpp on the host.
//
// Sweep: every element is loaded, gets k FMAs (x <- x * a + b) and is stored: 8 bytes per
// element, 2k FLOP (FP32) or 4k FLOP per half2 word (FP16x2, two lanes), so intensities run from
// 1/8 (FP32, one FMA on every other element: "fma:0.5") through k / 4 (FP32) and k / 2 (FP16x2)
// up to 1024 FLOP/byte. One working set per backend, far beyond L2 on a GPU, so the low-k points
// are DRAM-bound and the high-k points FMA-bound; the ridge sits between.
// Percent of peak: FP32 rows against the FP32 peak; FP16x2 rows have none (the card table holds
// the FP16 *tensor* peak, which CUDA-core fma.rn.f16x2 does not reach and which differs from
// the half2 rate by architecture), so their percentage is left out rather than invented.
#include <algorithm>
#include <string>

#include "families/intensity/intensity.h"
#include "harness/family.h"

GPUBENCH_FAMILY(intensity)

namespace gpubench {

namespace {

constexpr std::uint64_t MiB = 1024ull * 1024;

std::uint64_t floor_pow2(std::uint64_t x) {
  std::uint64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

// Bytes per buffer (input and output each) of the sweep: GPU 256 MiB (512 MiB working set,
// 4x the largest L2 in the card table), host 64 MiB (the host's FMA rate is ~100x lower, and the
// k = 2048 point must finish in about a second); never more than an eighth of the memory.
std::uint64_t sweep_bytes(const SweepOptions& o) {
  const bool host = o.backend_kind == "host";
  std::uint64_t bytes = o.quick ? (host ? 4 : 16) * MiB : (host ? 64 : 256) * MiB;
  if (o.memory_bytes > 0) bytes = std::min(bytes, std::max<std::uint64_t>(MiB, floor_pow2(o.memory_bytes / 8)));
  return bytes;
}

std::string fma_token(double fma_per_elem) {
  if (fma_per_elem == 0.5) return "0.5";
  return std::to_string(static_cast<long long>(fma_per_elem));
}

BenchCase make(const char* family, const char* kernel, double fma_per_elem, std::uint64_t bytes, WorkModel work,
               const SweepOptions& o) {
  BenchCase c;
  c.family = family;
  c.kernel = kernel;
  c.variant = "kernel";
  c.params = "fma:" + fma_token(fma_per_elem) + ",bytes:" + size_token(bytes);
  c.args = {{"bytes", static_cast<double>(bytes)}, {"n", static_cast<double>(bytes / 4)}, {"fma", fma_per_elem}};
  c.work = work;
  c.needs_flush = o.l2_bytes > 0 && work.working_set_bytes >= static_cast<double>(o.l2_bytes) / 2;
  c.level = memory_level(work.working_set_bytes, o);
  c.sweep = "fma";
  return c;
}

// --quick keeps every other k of the sweep, the odd powers of two (2, 8, ..., 2048): the top of
// the sweep, memory-bound points below (FP32 also keeps its half-FMA point, the bottom) and a
// point on each side of an H100's FP32 ridge (k = 80), in a smoke run's budget.
bool in_sweep(int k, const SweepOptions& o) {
  int log2 = 0;
  while ((1 << log2) < k) ++log2;
  return !o.quick || log2 % 2 == 1;
}

WorkModel half_fma_sweep_work(double n) {
  // One FMA on every other element: the FMA count is n / 2 (n even), bytes as in any sweep.
  WorkModel w = fma_sweep_work(n, 4, 1, PeakKind::fp32);
  w.flop = n;  // 2 FLOP x n / 2 FMAs
  return w;
}

}  // namespace

std::vector<BenchCase> families::intensity::cases(const SweepOptions& o) {
  std::vector<BenchCase> cases;
  const std::uint64_t bytes = sweep_bytes(o);
  const double n = static_cast<double>(bytes / 4);  // floats or half2 words

  // FP32: the half-FMA point, then k in kSweepFmaCounts.
  {
    BenchCase c = make("roofline", "intensity_fp32", 0.5, bytes, half_fma_sweep_work(n), o);
    c.args["steps"] = 1;
    c.args["every"] = 2;
    cases.push_back(c);
  }
  for (int k : kernels::kSweepFmaCounts) {
    if (!in_sweep(k, o)) continue;
    BenchCase c = make("roofline", "intensity_fp32", k, bytes, fma_sweep_work(n, 4, k, PeakKind::fp32), o);
    c.args["steps"] = k;
    c.args["every"] = 1;
    cases.push_back(c);
  }
  // FP16x2: k fma.rn.f16x2 per 4-byte word = 2k FMA per two 2-byte halves; fma_sweep_work
  // counts per element, so the rows are modelled as 2n half elements with k FMAs each.
  for (int k : kernels::kSweepFmaCounts) {
    if (!in_sweep(k, o)) continue;
    BenchCase c = make("roofline", "intensity_fp16x2", k, bytes, fma_sweep_work(2 * n, 2, k, PeakKind::none), o);
    c.args["steps"] = k;
    c.args["every"] = 1;
    cases.push_back(c);
  }

  // Peak: register-resident chains, k = rounds x 64 steps per element, intensity k / 4 (FP32)
  // and k / 2 (FP16x2) FLOP/byte, far right of any ridge, so loads and stores are noise.
  const bool host = o.backend_kind == "host";
  const std::uint64_t peak_bytes = o.quick ? (host ? 1 : 4) * MiB : (host ? 4 : 256) * MiB;
  const int peak_k = o.quick ? (host ? 256 : 1024) : (host ? 1024 : 4096);
  const double peak_n = static_cast<double>(peak_bytes / 4);
  for (const char* kernel : {"peak_fp32_fma", "peak_fp16x2_hfma2"}) {
    const bool fp32 = std::string(kernel) == "peak_fp32_fma";
    const WorkModel w = fp32 ? fma_sweep_work(peak_n, 4, peak_k, PeakKind::fp32)
                             : fma_sweep_work(2 * peak_n, 2, peak_k, PeakKind::none);
    BenchCase c = make("compute", kernel, peak_k, peak_bytes, w, o);
    c.args["steps"] = peak_k;
    c.args["every"] = 1;
    c.needs_flush = false;  // compute-bound: what is left in L2 does not matter
    c.level = "none";
    cases.push_back(c);
  }
  return cases;
}

}  // namespace gpubench
