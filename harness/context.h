// The `context` block of every result file: what the scripts need to judge and plot a result
// (backend, device and its key, theoretical peaks, clocks, cache policy, versions), and
// nothing they would have to guess.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "harness/backend.h"

namespace gpubench {

/// Every key the contract requires, with its value for this backend and run. Peaks that are
/// unknown are written as "unknown", never as a number. `memory_start`: the memory when the run
/// starts (memory_total_bytes, memory_free_start_bytes; "unknown" without it).
std::map<std::string, std::string> result_context(const Backend& backend, bool quick,
                                                  const std::optional<MemoryReading>& memory_start = std::nullopt);

/// Adds result_context() to Google Benchmark's context (benchmark::AddCustomContext).
void publish_context(const Backend& backend, bool quick,
                     const std::optional<MemoryReading>& memory_start = std::nullopt);

/// card_key (the card table's key, "none") and expected_bands (how many bands apply to this
/// device, or that none do, said plainly) for the acceptance run.
std::map<std::string, std::string> acceptance_context(const DeviceDescription& d, const std::string& backend_kind);

/// The keys gpubench always writes into the context (the contract): result_context()'s, and
/// those the end of the run adds to the file (memory_free_end_bytes, memory_leak_check).
const char* const* required_context_keys();

}  // namespace gpubench
