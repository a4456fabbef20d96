#include "harness/row_scope.h"

#include <algorithm>

namespace gpubench {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool is_square_gemm(const BenchCase& c) {
  if (c.family != "compute" || (c.kernel != "sgemm" && c.kernel != "hgemm")) return false;
  const auto m = c.args.find("m"), n = c.args.find("n"), k = c.args.find("k");
  return m != c.args.end() && n != c.args.end() && k != c.args.end() && m->second == n->second &&
         n->second == k->second;
}

// The GEMM size the acceptance run uses: cuBLAS and the hand-written kernels are near their
// plateau from 4096 on, and 8192 costs eight times as long.
constexpr double kLargestAcceptanceGemm = 4096;

}  // namespace

bool loads_shared_links(const BenchCase& c) {
  if (c.level == "pcie" || starts_with(c.kernel, "pcie_") || starts_with(c.kernel, "p2p_")) return true;
  // Allocation goes through the driver's resource manager, which the node's GPUs share, and the
  // pinned-host rows pin the node's memory: timed on all GPUs at once, they would time each other.
  return c.family == "memory" && (c.kernel == "alloc" || c.kernel == "alloc_loop" || c.kernel == "fragmentation");
}

bool in_row_scope(const BenchCase& c, Options::RowScope scope) {
  switch (scope) {
    case Options::RowScope::local: return !loads_shared_links(c);
    case Options::RowScope::links: return loads_shared_links(c);
    case Options::RowScope::all: break;
  }
  return true;
}

std::vector<BenchCase> acceptance_rows(const std::vector<BenchCase>& table, const std::string& backend_kind) {
  double gemm_size = 0;
  for (const BenchCase& c : table)
    if (is_square_gemm(c) && c.args.at("m") <= kLargestAcceptanceGemm) gemm_size = std::max(gemm_size, c.args.at("m"));
  const std::string transfer = backend_kind == "host" ? "pageable_memcpy" : "pinned_ce";
  std::vector<BenchCase> rows;
  for (const BenchCase& c : table) {
    const bool copy = c.family == "bandwidth" && c.kernel == "copy" && c.variant == "kernel";
    const bool pcie =
        c.family == "bandwidth" && (c.kernel == "pcie_h2d" || c.kernel == "pcie_d2h") && c.variant == transfer;
    const bool gemm =
        is_square_gemm(c) && (c.variant == "kernel" || c.variant == "cublas") && c.args.at("m") == gemm_size;
    const bool fma = c.family == "compute" && c.kernel == "peak_fp32_fma";
    if (copy || pcie || gemm || fma) rows.push_back(c);
  }
  return rows;
}

}  // namespace gpubench
