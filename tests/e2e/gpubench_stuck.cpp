// gpubench with one host workload that never finishes a timed run, as a hung kernel would, for
// the signal test (tests/python/test_gpubench_e2e.py): the first SIGINT or SIGTERM asks the run
// to stop after the current sample, which never ends; the second must end the process at once.
// A test executable only, never installed.
#include <chrono>
#include <memory>
#include <thread>
#include <utility>

#include "tests/e2e/planted_host_workloads.h"

namespace {

/// A real host workload whose timed runs hang (prepare, sizing's three single operations and
/// verification are the real ones; the hang starts at the first run of more than one operation,
/// or at the fourth run: a loaded machine, slow to wake the workers, sizes the batch at one).
class HangingRun final : public gpubench::e2e::ForwardingWorkload {
 public:
  static constexpr const char* kKey = "bandwidth/write/kernel";
  explicit HangingRun(std::unique_ptr<gpubench::Workload> workload) : ForwardingWorkload(std::move(workload)) {}
  double run(int batch) override {
    if (batch > 1 || ++runs_ > 3)
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    return real().run(batch);
  }

 private:
  int runs_ = 0;
};

}  // namespace

int main(int argc, char** argv) { return gpubench::e2e::run_planted<HangingRun>(argc, argv); }
