// gpubench's main flow: parse the command line, pick the backend, register the family tables,
// run them under Google Benchmark, publish the result file. Separate from main() so tests can
// drive it.
#pragma once

namespace gpubench {

/// Runs gpubench with argv; returns the process exit status (0 ok, 1 a benchmark failed,
/// 2 usage error or unusable device).
int run_app(int argc, char** argv);

}  // namespace gpubench
