// Work models: how many bytes and FLOP one execution of a benchmark moves or computes.
// Throughput and percent of peak are derived from these declarations only (never computed
// ad hoc in a benchmark body), so the JSON, the roofline plot and the docs agree.
#pragma once

#include <cstddef>
#include <string>

namespace gpubench {

/// Which theoretical ceiling a benchmark's percent-of-peak refers to.
enum class PeakKind { none, dram, fp32, fp16_tensor, pcie_h2d, pcie_d2h };

/// The headline throughput a benchmark reports.
enum class Metric { GBps, TFLOPS };

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

/// Sequential copy of `bytes`: read `bytes`, write `bytes` (BabelStream/STREAM convention: 2x size).
WorkModel copy_work(double bytes);
/// Read-only stream of `bytes` (a reduction; its scalar output is negligible).
WorkModel read_work(double bytes);
/// Write-only fill of `bytes`.
WorkModel write_work(double bytes);
/// Strided copy out[i*s] = in[i*s] over a span of `span_bytes` with elements of `elem_bytes`:
/// useful bytes are the touched elements, traffic is one sector (`sector_bytes`: 32 on a GPU,
/// a 64-byte line on the host) per element once s*elem reaches it.
WorkModel strided_work(double span_bytes, int stride, int elem_bytes, double sector_bytes = kSectorBytes);
/// Random gather out[i] = in[idx[i]] of `n` elements of `elem_bytes` with `index_bytes` indices:
/// each random read costs a whole sector.
WorkModel gather_work(double n, int elem_bytes, int index_bytes, double sector_bytes = kSectorBytes);
/// Dependent pointer chase of `loads` loads of `elem_bytes` each over `span_bytes`.
WorkModel chase_work(double loads, double span_bytes, int elem_bytes, double sector_bytes = kSectorBytes);
/// GEMM C = A*B (M x K times K x N): 2MNK FLOP; minimal bytes (MK + KN + MN) x elem.
WorkModel gemm_work(double m, double n, double k, int in_elem_bytes, int out_elem_bytes, PeakKind peak);
/// Intensity sweep: n elements loaded and stored once, each with `fma_per_elem` FMAs.
WorkModel fma_sweep_work(double n, int elem_bytes, int fma_per_elem, PeakKind peak);
/// Host<->device transfer of `bytes` (counted once: it crosses the link once).
WorkModel transfer_work(double bytes, PeakKind direction);

/// "GB/s" or "TFLOPS".
const char* metric_name(Metric m);
/// "dram", "fp32", ... as written in result files.
const char* peak_kind_name(PeakKind k);

}  // namespace gpubench
