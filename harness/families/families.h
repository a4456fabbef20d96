// The benchmark tables, one function per family area. A benchmark is a row: name parts,
// numeric arguments and work model (harness/backend.h, BenchCase). Backends decide which rows
// they implement; the registry registers the rows the selected backend supports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/backend.h"

namespace gpubench {

/// What the tables may size their sweeps by.
struct SweepOptions {
  bool quick = false;              ///< small sizes, for smoke runs and CI
  std::string backend_kind;        ///< "cuda" or "host"
  std::uint64_t l2_bytes = 0;      ///< last-level cache of the device (0 = unknown)
  std::uint64_t memory_bytes = 0;  ///< device (or host) memory (0 = unknown)
  TrafficGeometry traffic;         ///< what the strided, gather and chase byte models assume
};

/// bandwidth/{copy,read,write,strided,gather,chase}/...: device (or host) memory.
std::vector<BenchCase> memory_cases(const SweepOptions& o);

/// bandwidth/pcie_{h2d,d2h,bidir_h2d,bidir_d2h}/...: host<->device transfers (pcie_cases.cpp).
std::vector<BenchCase> pcie_cases(const SweepOptions& o);

/// roofline/intensity_{fp32,fp16x2}/kernel/... and compute/peak_{fp32_fma,fp16x2_hfma2}/kernel/...
/// (roofline_cases.cpp): the arithmetic-intensity sweep and the empirical compute ceiling.
std::vector<BenchCase> roofline_cases(const SweepOptions& o);

/// compute/{sgemm,hgemm}/{kernel,naive,wmma,cublas}/m:M,n:N,k:K (compute_cases.cpp): GEMM.
std::vector<BenchCase> compute_cases(const SweepOptions& o);

/// Every family's rows, in registration order.
std::vector<BenchCase> all_cases(const SweepOptions& o);

/// "4KiB", "64MiB", "1GiB": the size token used in benchmark names.
std::string size_token(std::uint64_t bytes);

}  // namespace gpubench
