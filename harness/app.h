// gpubench's main flow: parse the command line, pick the backend, register the family tables,
// run them under Google Benchmark, publish the result file. Separate from main() so tests can
// drive it.
#pragma once

#include "harness/device_select.h"

namespace gpubench {

/// Runs gpubench with argv; returns the process exit status (0 ok, 1 a benchmark failed or the
/// run leaked memory, 2 usage error or unusable device).
int run_app(int argc, char** argv);

/// run_app with the host backend's workloads made by `host_table` instead of host_workloads():
/// a seam for test executables only (tests/e2e/gpubench_faulty.cpp plants a faulty workload
/// through it to prove the exit status end to end). gpubench's main() never calls it, and no
/// flag or environment variable reaches it.
int run_app(int argc, char** argv, HostWorkloadSource host_table);

}  // namespace gpubench
