// The `context` block of every result file: what the scripts need to judge and plot a result
// (backend, device and its key, theoretical peaks, clocks, cache policy, versions), and
// nothing they would have to guess.
#pragma once

#include <map>
#include <string>

#include "harness/backend.h"

namespace gpubench {

/// Every key the contract requires, with its value for this backend and run. Peaks that are
/// unknown are written as "unknown", never as a number.
std::map<std::string, std::string> result_context(const Backend& backend, bool quick);

/// Adds result_context() to Google Benchmark's context (benchmark::AddCustomContext).
void publish_context(const Backend& backend, bool quick);

/// The keys result_context() always provides (the contract).
const char* const* required_context_keys();

}  // namespace gpubench
