// --device=all: every GPU of the node, each in its own gpubench process writing its own result
// (into one results store with --results-dir). By default the rows that stay inside one GPU run
// on all GPUs at once, then the rows that load links the GPUs share (PCIe, peer-to-peer) one GPU
// at a time, so that no transfer measures another GPU's traffic; --one-at-a-time runs each GPU's
// whole set in turn.
#pragma once

#include <string>
#include <vector>

#include "harness/cli.h"

namespace gpubench {

/// One child run: the device, its row scope, and its command line (without the program).
struct DeviceRun {
  int device = 0;
  Options::RowScope scope = Options::RowScope::all;
  std::vector<std::string> args;
};

/// The runs of --device=all on a node of `device_count` GPUs, as phases: the runs of a phase
/// run at the same time, the phases one after another. `args` is gpubench's command line
/// (without the program) and `o` its parse; a --row-scope given with it keeps only that phase.
/// --out=F becomes F's stem + ".deviceN[.local|.links].json".
std::vector<std::vector<DeviceRun>> plan_all_devices(const std::vector<std::string>& args, const Options& o,
                                                     int device_count);

/// What a child run returns when its row scope holds none of the selected rows: not an error
/// for one GPU, but the parent says so when no run had anything to do.
constexpr int kNothingInScope = 4;
/// The environment variable run_device_plan() sets for its runs: only such a run answers an empty
/// scope with kNothingInScope (anyone else gets one line and exit status 2).
constexpr const char* kDeviceAllChild = "GPUBENCH_DEVICE_ALL_CHILD";

/// Whether this run is a GPU of a --device=all run: kDeviceAllChild names its parent's process id.
bool started_by_device_all();

/// "all", "local" or "links".
const char* row_scope_name(Options::RowScope s);

/// Runs the plan with `program` (gpubench itself: /proc/self/exe). A phase's runs write their
/// output into temporary files, printed run by run when the phase ends, each under a line naming
/// the GPU; a one-run phase prints straight through. Returns the worst exit status (2 when no
/// run had rows to run, 1 when one could not be started).
int run_device_plan(const std::vector<std::vector<DeviceRun>>& plan, const std::string& program);

}  // namespace gpubench
