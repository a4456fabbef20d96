#include "harness/model/work_model.h"

#include <algorithm>

namespace gpubench {

WorkModel copy_work(double bytes) {
  WorkModel w;
  w.useful_bytes = 2.0 * bytes;
  w.traffic_bytes = 2.0 * bytes;
  w.working_set_bytes = 2.0 * bytes;
  w.peak = PeakKind::dram;
  return w;
}

WorkModel read_work(double bytes) {
  WorkModel w;
  w.useful_bytes = w.traffic_bytes = w.working_set_bytes = bytes;
  w.peak = PeakKind::dram;
  return w;
}

WorkModel write_work(double bytes) { return read_work(bytes); }

WorkModel block_set_read_work(double bytes, int readers) {
  WorkModel w;
  w.useful_bytes = w.traffic_bytes = bytes * readers;
  w.working_set_bytes = bytes;
  w.peak = PeakKind::l1;
  return w;
}

TrafficGeometry gpu_traffic_geometry(int l2_fetch_bytes, bool ecc) {
  TrafficGeometry g;
  g.fetch_bytes = std::max(kSectorBytes, static_cast<double>(l2_fetch_bytes));
  g.partial_write_fill = ecc;
  return g;
}

std::string describe_traffic(const TrafficGeometry& g) {
  const auto bytes = [](double b) { return std::to_string(static_cast<long long>(b)) + " B"; };
  return "written back in " + bytes(g.sector_bytes) + " units, misses fetched in " + bytes(g.fetch_bytes) +
         (g.partial_write_fill ? ", partially written units read first (ECC read-fill)" : ", no read-fill");
}

WorkModel strided_work(double span_bytes, int stride, int elem_bytes, const TrafficGeometry& g) {
  WorkModel w;
  const double elem = elem_bytes;
  const double pitch = static_cast<double>(stride) * elem;
  const double elems = span_bytes / pitch;
  // Per touched element: the input it shares a fetch unit with neighbours until the pitch
  // reaches a unit, the output sector likewise, and the read-fill of a sector it only partly writes.
  const double read = std::max(std::min(pitch, g.fetch_bytes), elem);
  const double write = std::max(std::min(pitch, g.sector_bytes), elem);
  const double fill = g.partial_write_fill && pitch > elem ? write : 0.0;
  w.useful_bytes = 2.0 * elems * elem;
  w.traffic_bytes = elems * (read + write + fill);
  w.working_set_bytes = 2.0 * span_bytes;
  w.peak = PeakKind::dram;
  return w;
}

WorkModel gather_work(double n, int elem_bytes, int index_bytes, const TrafficGeometry& g,
                      double resident_input_bytes) {
  WorkModel w;
  // Index read and output write are sequential; every gathered read is a whole fetch unit,
  // unless the input stays cached: then it is read once.
  const bool resident = n * elem_bytes <= resident_input_bytes;
  const double gathered = resident ? elem_bytes : std::max(g.fetch_bytes, static_cast<double>(elem_bytes));
  w.useful_bytes = n * (index_bytes + 2.0 * elem_bytes);
  w.traffic_bytes = n * (index_bytes + elem_bytes + gathered);
  w.working_set_bytes = n * (index_bytes + 2.0 * elem_bytes);
  w.peak = PeakKind::dram;
  return w;
}

WorkModel chase_work(double loads, double span_bytes, int elem_bytes, const TrafficGeometry& g) {
  WorkModel w;
  w.useful_bytes = loads * elem_bytes;
  w.traffic_bytes = loads * std::max(g.fetch_bytes, static_cast<double>(elem_bytes));
  w.working_set_bytes = span_bytes;
  w.peak = PeakKind::none;  // a latency test: its bandwidth is not meant to approach a peak
  return w;
}

WorkModel gemm_work(double m, double n, double k, int in_elem_bytes, int out_elem_bytes, PeakKind peak) {
  WorkModel w;
  w.flop = 2.0 * m * n * k;
  w.useful_bytes = (m * k + k * n) * in_elem_bytes + m * n * out_elem_bytes;
  w.traffic_bytes = w.useful_bytes;
  w.working_set_bytes = w.useful_bytes;
  w.peak = peak;
  w.metric = Metric::TFLOPS;
  return w;
}

WorkModel fma_sweep_work(double n, int elem_bytes, int fma_per_elem, PeakKind peak) {
  WorkModel w;
  w.flop = 2.0 * n * fma_per_elem;
  w.useful_bytes = w.traffic_bytes = w.working_set_bytes = 2.0 * n * elem_bytes;
  w.peak = peak;
  w.metric = Metric::TFLOPS;
  return w;
}

WorkModel transfer_work(double bytes, PeakKind direction) {
  WorkModel w;
  w.useful_bytes = w.traffic_bytes = w.working_set_bytes = bytes;
  w.peak = direction;
  return w;
}

WorkModel latency_work(double bytes) {
  WorkModel w;
  w.working_set_bytes = bytes;
  w.metric = Metric::latency_us;
  return w;
}

WorkModel axpy_work(double n, int elem_bytes) {
  WorkModel w;
  w.useful_bytes = w.traffic_bytes = 3.0 * n * elem_bytes;
  w.working_set_bytes = 3.0 * n * elem_bytes;  // x and y read, the output (its own buffer) written
  w.peak = PeakKind::dram;
  return w;
}

const char* metric_name(Metric m) {
  switch (m) {
    case Metric::GBps: return "GB/s";
    case Metric::TFLOPS: return "TFLOPS";
    case Metric::latency_ns: return "latency_ns";
    case Metric::latency_us: return "latency_us";
  }
  return "GB/s";
}

const char* metric_label(Metric m) { return m == Metric::GBps ? "GBps" : metric_name(m); }

const char* peak_kind_name(PeakKind k) {
  switch (k) {
    case PeakKind::none: return "none";
    case PeakKind::dram: return "dram";
    case PeakKind::l1: return "l1";
    case PeakKind::l2: return "l2";
    case PeakKind::smem: return "smem";
    case PeakKind::fp32: return "fp32";
    case PeakKind::fp16_tensor: return "fp16_tensor";
    case PeakKind::bf16_tensor: return "bf16_tensor";
    case PeakKind::fp8_tensor: return "fp8_tensor";
    case PeakKind::pcie_h2d: return "pcie_h2d";
    case PeakKind::pcie_d2h: return "pcie_d2h";
  }
  return "none";
}

}  // namespace gpubench
