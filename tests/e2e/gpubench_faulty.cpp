// gpubench with one faulty host workload, for the exit-status test (tests/python/
// test_exit_status.py): the real main flow (tests/e2e/planted_host_workloads.h) on the real host
// workloads, except that bandwidth/write/kernel writes a wrong value at the last element of its
// output after every run, as a kernel with an off-by-one at the tail would. A test executable
// only, never installed.
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "harness/host/corruptible_output.h"
#include "tests/e2e/planted_host_workloads.h"

namespace {

/// A real host workload whose output ends with a wrong element after every run.
class WrongLastElement final : public gpubench::e2e::ForwardingWorkload {
 public:
  /// The workload made faulty; every other one is the real host workload.
  static constexpr const char* kKey = "bandwidth/write/kernel";

  explicit WrongLastElement(std::unique_ptr<gpubench::Workload> workload) : ForwardingWorkload(std::move(workload)) {
    seam_ = dynamic_cast<gpubench::CorruptibleOutput*>(&real());
    if (seam_ == nullptr) throw std::logic_error(std::string(kKey) + " has no test seam");
  }
  double run(int batch) override {
    const double seconds = real().run(batch);
    seam_->corrupt_output_for_test(seam_->output_elements() - 1);
    return seconds;
  }

 private:
  gpubench::CorruptibleOutput* seam_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) { return gpubench::e2e::run_planted<WrongLastElement>(argc, argv); }
