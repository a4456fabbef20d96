// Which rows a run selects besides --filter: the acceptance run's compact set (--validate), and
// the split --device=all makes between the rows of one GPU and the rows that load links the
// GPUs of a node share (so that those are measured one GPU at a time).
#pragma once

#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/cli.h"

namespace gpubench {

/// Rows that load what other GPUs of the node also use: host transfers (PCIe), unified-memory
/// migration and peer-to-peer copies over the links, and the allocation rows (the driver's
/// resource manager, pinned host memory). Run concurrently on several GPUs, they would measure
/// each other.
bool loads_shared_links(const BenchCase& c);

/// Whether row `c` belongs to `scope` (--row-scope).
bool in_row_scope(const BenchCase& c, Options::RowScope scope);

/// The acceptance run's rows (--validate) among `table`, the rows of one backend kind ("cuda",
/// "host"): what each expected band reads and no more, so that it stays under two minutes on an
/// H100 - the copy kernel at every size (the DRAM headline reads the largest uncached working
/// set, the cache plateau the best cached one), the pinned copy-engine transfers both ways (the
/// host's pageable memcpy stand-ins there), SGEMM and FP16 GEMM with their cuBLAS references at
/// the largest square size up to 4096, and the peak FP32 FMA kernel.
std::vector<BenchCase> acceptance_rows(const std::vector<BenchCase>& table, const std::string& backend_kind);

}  // namespace gpubench
