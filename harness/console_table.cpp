#include "harness/console_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace gpubench {

namespace {

// The name's n-th '/'-separated part ("" when it has fewer).
std::string part(const std::string& name, int n) {
  std::size_t start = 0;
  for (int i = 0; i < n; ++i) {
    start = name.find('/', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  return name.substr(start, name.find('/', start) - start);
}

std::string printf_string(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Cuts `s` to `width` columns, marking the cut with "~".
std::string fit(const std::string& s, std::size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 1) + "~";
}

}  // namespace

std::string BenchmarkLine::family() const { return part(name, 0); }
std::string BenchmarkLine::kernel() const { return part(name, 1); }
std::string BenchmarkLine::variant() const { return part(name, 2); }
double BenchmarkLine::median() const { return median_of(values); }

double BenchmarkLine::cv() const {
  if (values.size() < 2) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  if (!(mean > 0)) return 0;
  double ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / static_cast<double>(values.size() - 1)) / mean;
}

bool BenchmarkLine::skipped() const { return error.rfind("skipped", 0) == 0 || error == "interrupted"; }
bool BenchmarkLine::failed() const { return !error.empty() && !skipped(); }
bool BenchmarkLine::unavailable() const { return error.rfind("skipped: not on the ", 0) == 0; }
bool BenchmarkLine::noisy() const { return values.size() >= 2 && cv() > kNoisyCv; }

std::map<std::string, std::string> label_fields(const std::string& label) {
  std::map<std::string, std::string> f;
  std::istringstream words(label);
  std::string w;
  while (words >> w) {
    const std::size_t eq = w.find('=');
    if (eq != std::string::npos) f[w.substr(0, eq)] = w.substr(eq + 1);
  }
  return f;
}

std::string headline_counter(const std::string& metric) { return metric == "GBps" || metric.empty() ? "GB/s" : metric; }

std::string headline_unit(const std::string& metric) {
  if (metric == "latency_ns") return "ns";
  if (metric == "latency_us") return "us";
  return headline_counter(metric);
}

std::string three_figures(double v) {
  if (!std::isfinite(v)) return "n/a";
  const double a = std::fabs(v);
  if (a >= 100) return printf_string("%.0f", v);
  if (a >= 10) return printf_string("%.1f", v);
  if (a >= 1) return printf_string("%.2f", v);
  if (a == 0) return "0";
  // Three significant figures below 1, without an exponent down to 1e-6.
  const int decimals = std::min(8, 2 - static_cast<int>(std::floor(std::log10(a))));
  char format[16];
  std::snprintf(format, sizeof format, "%%.%df", decimals);
  return printf_string(format, v);
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  std::string n = bytes == std::floor(bytes) ? printf_string("%.0f", bytes) : three_figures(bytes);
  return n + " " + units[u];
}

std::string format_duration(double seconds) {
  if (seconds < 1e-3) return three_figures(seconds * 1e6) + " us";
  if (seconds < 1) return three_figures(seconds * 1e3) + " ms";
  if (seconds < 60) return three_figures(seconds) + " s";
  const long total = std::lround(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld min %02ld s", total / 60, total % 60);
  return buf;
}

namespace {
constexpr int kNameWidth = 50;
const char* const kLineFormat = "  %-50s %8s %-6s %8s %7s %7s  %s";
}  // namespace

std::string table_heading() {
  char buf[256];
  std::snprintf(buf, sizeof buf, kLineFormat, "benchmark", "median", "", "spread", "of peak", "cuBLAS", "marks");
  return buf;
}

std::string family_heading(const std::string& family) { return family; }

std::string format_line(const BenchmarkLine& l) {
  const std::string name = fit(l.name, kNameWidth);
  char buf[512];
  if (!l.error.empty() && l.values.empty()) {
    std::snprintf(buf, sizeof buf, "  %-50s %s", name.c_str(), l.failed() ? "FAILED: " : "");
    return fit(std::string(buf) + l.error, kConsoleWidth);
  }
  const std::string spread = l.values.size() >= 2 ? "+-" + printf_string("%.1f", 100 * l.cv()) + "%" : "";
  const std::string peak = l.pct_of_peak >= 0 ? printf_string("%.1f %%", l.pct_of_peak) : "";
  const std::string cublas = l.pct_of_cublas >= 0 ? printf_string("%.1f %%", l.pct_of_cublas) : "";
  std::string marks;
  const auto mark = [&marks](const std::string& m) { marks += (marks.empty() ? "" : " ") + m; };
  if (l.failed()) mark("FAILED: " + l.error);
  if (l.noisy()) mark("noisy");
  if (l.throttled) mark("throttled");
  if (l.power_capped) mark("power-cap");
  if (l.outlier) mark("outlier");
  std::snprintf(buf, sizeof buf, kLineFormat, name.c_str(), three_figures(l.median()).c_str(),
                headline_unit(l.metric).c_str(), spread.c_str(), peak.c_str(), cublas.c_str(), marks.c_str());
  return fit(buf, kConsoleWidth);
}

std::vector<std::string> console_header(const std::map<std::string, std::string>& ctx) {
  const auto get = [&ctx](const std::string& k) {
    auto it = ctx.find(k);
    return it == ctx.end() ? std::string() : it->second;
  };
  // A number from the context ("unknown" and absent give nothing).
  const auto num = [&get](const std::string& k) {
    const std::string v = get(k);
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    return v.empty() || *end != '\0' ? -1.0 : d;
  };
  std::vector<std::string> h;
  h.push_back("gpubench " + get("gpubench_version") + " (" + get("git_revision") + "): " + get("device_name") + ", " +
              get("backend") + " backend, device key " + get("device_key"));
  if (get("backend") != "host")
    h.push_back("  driver " + get("driver_version") + ", CUDA runtime " + get("runtime_version") +
                ", compute capability " + get("cc") + ", " + get("sm_count") + " SMs");
  std::string peaks;
  const auto peak = [&](const char* key, const char* what, const char* unit) {
    const double v = num(key);
    if (v > 0) peaks += std::string(peaks.empty() ? "" : ", ") + what + " " + three_figures(v) + " " + unit;
  };
  peak("peak_dram_GBps", "DRAM", "GB/s");
  peak("peak_smem_GBps", "shared memory", "GB/s");
  peak("peak_pcie_h2d_GBps", "PCIe", "GB/s per direction");
  peak("peak_fp32_TFLOPS", "FP32", "TFLOPS");
  peak("peak_fp16_tensor_TFLOPS", "FP16 tensor", "TFLOPS");
  h.push_back("  peaks: " + (peaks.empty() ? "unknown on this backend (no card to compare with)" : peaks) +
              (get("peaks_source").empty() ? "" : " [" + get("peaks_source") + "]"));
  if (num("sm_clock_MHz") > 0)
    h.push_back("  clocks: SM " + three_figures(num("sm_clock_MHz")) + " MHz, memory " +
                three_figures(num("mem_clock_MHz")) + " MHz");
  if (num("memory_total_bytes") > 0)
    h.push_back("  memory: " + format_bytes(num("memory_free_start_bytes")) + " free of " +
                format_bytes(num("memory_total_bytes")));
  if (!get("cache_policy").empty()) h.push_back("  cache policy: " + get("cache_policy"));
  if (!get("expected_bands").empty()) h.push_back("  expected bands: " + get("expected_bands"));
  for (std::string& line : h) line = fit(line, kConsoleWidth);
  return h;
}

namespace {

// The line with the highest median among those `pick` accepts, or nullptr.
template <class Pick>
const BenchmarkLine* best(const std::vector<BenchmarkLine>& lines, Pick pick) {
  const BenchmarkLine* top = nullptr;
  for (const BenchmarkLine& l : lines) {
    if (l.values.empty() || !l.error.empty() || !pick(l)) continue;
    if (!top || l.median() > top->median()) top = &l;
  }
  return top;
}

// A row of gpubench's own code, not a library reference (the scripts' results.LIBRARY_WORDS).
bool hand_written(const BenchmarkLine& l) {
  const std::string v = l.variant();
  for (const char* word : {"cublas", "cutlass", "thrust", "cub", "memcpy", "memset", "std"})
    if (v.find(word) != std::string::npos) return false;
  return true;
}

// The line with the largest working set among those `pick` accepts (the first of equals), or nullptr.
template <class Pick>
const BenchmarkLine* largest(const std::vector<BenchmarkLine>& lines, Pick pick) {
  const BenchmarkLine* top = nullptr;
  for (const BenchmarkLine& l : lines) {
    if (l.values.empty() || !l.error.empty() || !pick(l) || l.working_set_bytes < 0) continue;
    if (!top || l.working_set_bytes > top->working_set_bytes) top = &l;
  }
  return top;
}

// The best sustained transfer among `pick`'s rows: the best line of 256 MiB or more (the sizes
// nvbandwidth-style tools and the expected bands read), or of the largest size that ran where none
// reaches it (--quick stops at 16 MiB). The best row of any size was the host's 4 KiB memcpy
// inside the L1, which read as a PCIe figure of 81 GB/s.
template <class Pick>
const BenchmarkLine* sustained_transfer(const std::vector<BenchmarkLine>& lines, Pick pick) {
  constexpr double kSustainedBytes = 256.0 * 1024 * 1024;
  const BenchmarkLine* big = largest(lines, pick);
  if (!big) return nullptr;
  const double from = std::min(kSustainedBytes, big->working_set_bytes);
  return best(lines, [&](const BenchmarkLine& l) { return pick(l) && l.working_set_bytes >= from; });
}

// The best line of `pick`'s from kCachePlateauMinFraction of the cache up: none when no set is
// that large (a 64 KiB copy in a core's L1 is no plateau of a 32 MiB cache; the report and the
// roofline quote none either), the best of all only when the cache size is unknown.
template <class Pick>
const BenchmarkLine* cache_plateau(const std::vector<BenchmarkLine>& lines, Pick pick, double cache_bytes) {
  if (!(cache_bytes > 0)) return best(lines, pick);
  const double from = cache_bytes * kCachePlateauMinFraction;
  return best(lines, [&](const BenchmarkLine& l) { return pick(l) && l.working_set_bytes >= from; });
}

std::string headline(const std::string& what, const BenchmarkLine* l) {
  std::string s = "  " + what;
  s.resize(18, ' ');
  s += three_figures(l->median()) + " " + headline_unit(l->metric);
  if (l->pct_of_peak >= 0) s += ", " + printf_string("%.1f", l->pct_of_peak) + " % of peak";
  if (l->pct_of_cublas >= 0) s += ", " + printf_string("%.1f", l->pct_of_cublas) + " % of cuBLAS";
  return s + "  (" + l->name + ")";
}

std::string rows(std::size_t n) { return std::to_string(n) + (n == 1 ? " row" : " rows"); }

// `head` then "a, b, c and 4 more": up to three names, as many as fit in the console's width
// with the count of the rest (a line cut mid-name lost the count).
std::string with_some_names(const std::string& head, const std::vector<const BenchmarkLine*>& v) {
  constexpr std::size_t kMost = 3;
  for (std::size_t n = std::min(kMost, v.size());; --n) {
    std::string s = head;
    for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + v[i]->name;
    if (v.size() > n) s += n ? " and " + std::to_string(v.size() - n) + " more" : "see the table";
    if (s.size() <= kConsoleWidth || n == 0) return s;
  }
}

}  // namespace

std::vector<std::string> closing_summary(const std::vector<BenchmarkLine>& lines, const SummaryDestination& dest) {
  std::vector<std::string> out = {"summary"};
  const auto is = [](const BenchmarkLine& l, const char* family, const char* kernel) {
    return l.family() == family && l.kernel() == kernel;
  };
  struct Headline {
    const char* what;
    const BenchmarkLine* line;
  };
  const Headline heads[] = {
      // As the HTML report and the acceptance run read them: the copy kernel at its largest
      // working set (a DRAM-sized set just past the cache can still be partly served by it), and
      // its best cache-resident size.
      {"DRAM copy", largest(lines,
                            [&](const BenchmarkLine& l) {
                              return is(l, "bandwidth", "copy") && l.variant() == "kernel" && l.level == "dram";
                            })},
      {dest.host ? "cache plateau" : "L2 plateau", cache_plateau(
                                                       lines,
                                                       [&](const BenchmarkLine& l) {
                                                         return is(l, "bandwidth", "copy") && l.variant() == "kernel" &&
                                                                l.level == "l2";
                                                       },
                                                       dest.l2_bytes)},
      // The host backend has no link: its transfer rows are memcpy between two host buffers.
      {dest.host ? "H2D memcpy" : "PCIe H2D",
       sustained_transfer(lines, [&](const BenchmarkLine& l) { return is(l, "bandwidth", "pcie_h2d"); })},
      {dest.host ? "D2H memcpy" : "PCIe D2H",
       sustained_transfer(lines, [&](const BenchmarkLine& l) { return is(l, "bandwidth", "pcie_d2h"); })},
      // The GEMMs as the HTML report reads them: gpubench's fastest hand-written row (mma.sync,
      // wmma, wgmma: any variant but a library's), with its % of cuBLAS. The highest % of cuBLAS
      // alone could pick a small shape where cuBLAS is weak.
      {"SGEMM", best(lines, [&](const BenchmarkLine& l) { return is(l, "compute", "sgemm") && hand_written(l); })},
      {"FP16 GEMM", best(lines, [&](const BenchmarkLine& l) { return is(l, "compute", "hgemm") && hand_written(l); })},
      {"BF16 GEMM",
       best(lines, [&](const BenchmarkLine& l) { return is(l, "compute", "bf16gemm") && hand_written(l); })},
      {"peak FP32 FMA", best(lines, [&](const BenchmarkLine& l) { return is(l, "compute", "peak_fp32_fma"); })},
  };
  for (const Headline& h : heads)
    if (h.line) out.push_back(headline(h.what, h.line));
  if (out.size() == 1) out.push_back("  (no headline row in this run: see the table)");

  std::vector<const BenchmarkLine*> noisy, throttled, failed, skipped;
  for (const BenchmarkLine& l : lines) {
    if (l.noisy()) noisy.push_back(&l);
    if (l.throttled) throttled.push_back(&l);
    if (l.failed()) failed.push_back(&l);
    if (l.skipped()) skipped.push_back(&l);
  }
  if (!noisy.empty())
    out.push_back(with_some_names(
        "  noisy (spread over " + printf_string("%.0f", 100 * kNoisyCv) + " %): " + rows(noisy.size()) + ": ", noisy));
  if (!throttled.empty()) out.push_back(with_some_names("  throttled: " + rows(throttled.size()) + ": ", throttled));
  if (!failed.empty()) out.push_back(with_some_names("  FAILED: " + rows(failed.size()) + ": ", failed));
  std::size_t unavailable = 0;
  for (const BenchmarkLine* l : skipped) unavailable += l->unavailable() ? 1 : 0;
  if (skipped.size() > unavailable)
    out.push_back("  skipped: " + rows(skipped.size() - unavailable) + " (reasons in the table)");
  if (unavailable > 0)
    out.push_back("  not on this backend: " + rows(unavailable) + " (their reasons are in the result file)");
  for (std::string& line : out) line = fit(line, kConsoleWidth);
  if (!dest.result_path.empty()) {
    out.push_back("  result: " + dest.result_path);  // whole, however long: a path is copied, not read
    out.push_back(
        "  plots and report: scripts/plot.py, scripts/roofline.py, scripts/report.py (scripts/run.sh runs them)");
  } else if (!dest.asked_to_save) {
    out.push_back("  nothing was saved: give --out=FILE or --results-dir=DIR to keep the result");
  }
  return out;
}

}  // namespace gpubench
