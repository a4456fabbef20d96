// Work models: how many bytes and FLOP one execution of a benchmark moves or computes.
// Throughput and percent of peak are derived from these declarations only (never computed
// ad hoc in a benchmark body), so the JSON, the roofline plot and the docs agree.
#pragma once

#include <cstddef>
#include <string>

namespace gpubench {

/// Which theoretical ceiling a benchmark's percent-of-peak refers to.
/// (l2: cache-resident rows, for which no theoretical figure is known, so they carry no
/// pct_of_peak; smem: shared memory, 128 bytes per clock per SM; the tensor kinds are dense
/// peaks with FP32 accumulate: FP16, BF16 and FP8 inputs.)
enum class PeakKind { none, dram, l2, smem, fp32, fp16_tensor, pcie_h2d, pcie_d2h, bf16_tensor, fp8_tensor, l1 };

/// The headline figure a benchmark reports (latency_ns: the pointer chase's time per load;
/// latency_us: the time of one operation, e.g. an allocate + free pair, in microseconds).
enum class Metric { GBps, TFLOPS, latency_ns, latency_us };

/// Work done by one execution (one kernel launch / one transfer) of a benchmark.
struct WorkModel {
  double useful_bytes = 0;       ///< bytes the program asked for, read plus written
  double traffic_bytes = 0;      ///< bytes the memory system must move (32-byte sectors); 0 = same as useful
  double flop = 0;               ///< floating-point operations (an FMA counts 2)
  double working_set_bytes = 0;  ///< footprint in memory, for size sweeps and cache levels
  PeakKind peak = PeakKind::none;
  Metric metric = Metric::GBps;

  /// Arithmetic intensity in FLOP per useful byte (0 when either is 0).
  double intensity() const { return useful_bytes > 0 ? flop / useful_bytes : 0.0; }
};

/// DRAM sector size: the granularity of global-memory traffic on every architecture since Volta.
constexpr double kSectorBytes = 32.0;
/// A host CPU moves memory in 64-byte cache lines: the host backend's granularity.
constexpr double kHostLineBytes = 64.0;

/// How the memory system moves partial accesses: the assumptions of the strided, gather and
/// chase byte models, so that their traffic_bytes is what DRAM moves.
struct TrafficGeometry {
  double sector_bytes = kSectorBytes;  ///< unit written back (and allocated) per store
  double fetch_bytes = kSectorBytes;   ///< unit read per miss: the L2 fetch granularity on a GPU
  bool partial_write_fill = false;     ///< a partially written sector is read before write-back
};
/// Plain 32-byte sectors, no fetch beyond the sector, no read-fill.
constexpr TrafficGeometry kGpuSectors{};
/// The host: 64-byte lines read and written whole (stores' read-for-ownership not counted).
constexpr TrafficGeometry kHostLines{kHostLineBytes, kHostLineBytes, false};
/// A GPU's geometry: 32-byte sectors, misses fetched in `l2_fetch_bytes` (the device's
/// cudaLimitMaxL2FetchGranularity; 0 = unknown, taken as a sector), and with ECC on, partially
/// written sectors read-filled. On an H100 (fetch 64 B, ECC on) Nsight Compute's DRAM byte counts
/// match this within 2 % for strided copies and 6 % for a 256 MiB gather
/// (results/h100_80gb_hbm3-*/VALIDATION.md).
TrafficGeometry gpu_traffic_geometry(int l2_fetch_bytes, bool ecc);
/// One line for the result context: the geometry the byte models assumed.
std::string describe_traffic(const TrafficGeometry& g);

/// Sequential copy of `bytes`: read `bytes`, write `bytes` (BabelStream/STREAM convention: 2x size).
WorkModel copy_work(double bytes);
/// Read-only stream of `bytes` (a reduction; its scalar output is negligible).
WorkModel read_work(double bytes);
/// Write-only fill of `bytes`.
WorkModel write_work(double bytes);
/// Every one of `readers` (blocks on a GPU, threads on the host) reads the same `bytes` once per
/// execution: useful = readers x bytes; working set = bytes (what each SM's L1 must hold); peak
/// l1 (no theoretical figure: no percentage).
WorkModel block_set_read_work(double bytes, int readers);
/// Strided copy out[i*s] = in[i*s] over a span of `span_bytes` with elements of `elem_bytes`:
/// useful bytes are the touched elements; traffic per element is the input read (the pitch
/// s*elem, at most one fetch unit), the output written back (the pitch, at most one sector) and,
/// where the geometry read-fills partial sectors and s > 1, that sector read first.
WorkModel strided_work(double span_bytes, int stride, int elem_bytes, const TrafficGeometry& g = kGpuSectors);
/// Random gather out[i] = in[idx[i]] of `n` elements of `elem_bytes` with `index_bytes` indices:
/// each random read costs a whole fetch unit (no reuse assumed: an upper bound where the input
/// partly fits in the cache); index reads and output writes are sequential. An input of at most
/// `resident_input_bytes` (half the last-level cache: it stays there once touched, while the
/// index and the output stream past it) is read from memory once, its own size: at 16 MiB on an
/// H100 a fetch unit per element modelled 6.6 TB/s of DRAM traffic, twice the DRAM peak.
WorkModel gather_work(double n, int elem_bytes, int index_bytes, const TrafficGeometry& g = kGpuSectors,
                      double resident_input_bytes = 0);
/// Dependent pointer chase of `loads` loads of `elem_bytes` each over `span_bytes`.
WorkModel chase_work(double loads, double span_bytes, int elem_bytes, const TrafficGeometry& g = kGpuSectors);
/// GEMM C = A*B (M x K times K x N): 2MNK FLOP; minimal bytes (MK + KN + MN) x elem.
WorkModel gemm_work(double m, double n, double k, int in_elem_bytes, int out_elem_bytes, PeakKind peak);
/// Intensity sweep: n elements loaded and stored once, each with `fma_per_elem` FMAs.
WorkModel fma_sweep_work(double n, int elem_bytes, int fma_per_elem, PeakKind peak);
/// Host<->device transfer of `bytes` (counted once: it crosses the link once).
WorkModel transfer_work(double bytes, PeakKind direction);
/// A management operation timed per call (allocate + free of `bytes`, a fragmentation round):
/// no bytes moved, the headline is its latency in microseconds.
WorkModel latency_work(double bytes);
/// y = a*x + y over `n` elements of `elem_bytes`: x and y read, y written (3 x n x elem bytes).
WorkModel axpy_work(double n, int elem_bytes);

/// "GB/s", "TFLOPS" or "latency_ns": the result counter of the headline figure.
const char* metric_name(Metric m);
/// "GBps", "TFLOPS" or "latency_ns": the metric as a result row's label names it.
const char* metric_label(Metric m);
/// "dram", "fp32", ... as written in result files.
const char* peak_kind_name(PeakKind k);

}  // namespace gpubench
