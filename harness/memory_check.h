// Capacity and leaks: the device's memory at the start and the end of a run, recorded in the
// result's context, and the leak check that fails a run whose memory in use grew by more than
// a tolerance once every workload was released. The end of a run is known only after Google
// Benchmark wrote its context, so its entries are added to the finished JSON file here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/backend.h"

namespace gpubench {

/// The smallest tolerance of the leak check: what a run legitimately keeps to its end beyond
/// its workloads (the L2 flush buffer, library handles and workspaces, lazily loaded kernels)
/// stays well below it, and a leaked working set of any size worth finding is above it.
constexpr std::uint64_t kMinLeakToleranceBytes = std::uint64_t{64} << 20;

/// A GPU's tolerance: max(64 MiB, 1 % of its memory) plus the L2 flush buffer (2 x L2), which
/// the backend allocates on first use and keeps for the whole run. cudaMemGetInfo is
/// device-wide and also counts what the driver and libraries keep once used (lazily loaded
/// modules, cuBLAS's handle, kernels and workspace, graph uploads), which grows with the card.
std::uint64_t cuda_leak_tolerance_bytes(std::uint64_t total_bytes, std::uint64_t flush_buffer_bytes);

/// The host's tolerance on this process's resident memory: 64 MiB.
constexpr std::uint64_t kHostLeakToleranceBytes = kMinLeakToleranceBytes;

/// The verdict of the leak check.
struct MemoryCheck {
  bool leaked = false;
  /// The context's memory_leak_check entry: "ok: ...", "leak: ..." or "not checked: ...".
  std::string summary;
  /// When leaked: the one line for stderr, "gpubench: memory leak: ...".
  std::string line;
  /// Not leaked, but worth a line: memory grew beyond the tolerance while other processes used
  /// the device ("gpubench: note: ...").
  std::string note;
};

/// The leak rule: a leak when the memory in use at the end exceeds the start by more than the
/// tolerance (the start reading's). Without both readings the run is "not checked", not failed.
MemoryCheck check_memory(const std::optional<MemoryReading>& start, const std::optional<MemoryReading>& end);

/// Context entries in the order they are written.
using ContextEntries = std::vector<std::pair<std::string, std::string>>;

/// The context's capacity entries at the start: memory_total_bytes and memory_free_start_bytes
/// (decimal bytes, "unknown" without a reading).
ContextEntries start_memory_context(const std::optional<MemoryReading>& start);

/// The entries added at the end: memory_free_end_bytes ("unknown" without a reading) and
/// memory_leak_check (the summary).
ContextEntries end_memory_context(const std::optional<MemoryReading>& end, const MemoryCheck& check);

/// Inserts `entries` (string values) at the head of the top-level "context" object of a
/// document written by Google Benchmark's JSON reporter, in its layout (the `"context": {` line
/// first in the document, one entry per line). Returns false, leaving `json` unchanged and
/// saying why in `error`, when the document is not in that layout.
bool insert_context_entries(std::string& json, const ContextEntries& entries, std::string* error);

/// insert_context_entries on the file at `path`, replaced in one rename. Returns false, leaving
/// the file as it was, when it cannot be read, is not in that layout or cannot be rewritten.
bool add_context_entries_to_file(const std::string& path, const ContextEntries& entries, std::string* error);

}  // namespace gpubench
