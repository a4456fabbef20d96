// gpubench with one faulty host workload, for the exit-status test (tests/python/
// test_exit_status.py): the real main flow (run_app: command line, backend, registration, Google
// Benchmark, result file, exit status) on the real host workloads, except that
// bandwidth/write/kernel writes a wrong value at the last element of its output after every run,
// as a kernel with an off-by-one at the tail would. A test executable only, never installed; it is
// reached through run_app's test seam (harness/app.h), which gpubench itself never uses.
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "harness/app.h"
#include "harness/family.h"
#include "harness/host/corruptible_output.h"
#include "harness/workload_table.h"

namespace {

using gpubench::Backend;
using gpubench::BenchCase;
using gpubench::Verification;
using gpubench::Workload;
using gpubench::WorkloadTable;

/// The workload made faulty; every other one is the real host workload.
constexpr const char* kFaultyKey = "bandwidth/write/kernel";

/// A real host workload whose output ends with a wrong element after every run.
class WrongLastElement final : public Workload {
 public:
  explicit WrongLastElement(std::unique_ptr<Workload> real) : real_(std::move(real)) {
    seam_ = dynamic_cast<gpubench::CorruptibleOutput*>(real_.get());
    if (seam_ == nullptr) throw std::logic_error(std::string(kFaultyKey) + " has no test seam");
  }
  void prepare() override { real_->prepare(); }
  void poison() override { real_->poison(); }
  double run(int batch) override {
    const double seconds = real_->run(batch);
    seam_->corrupt_output_for_test(seam_->output_elements() - 1);
    return seconds;
  }
  Verification verify() override { return real_->verify(); }
  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    return real_->extra_counters(seconds_per_op);
  }

 private:
  std::unique_ptr<Workload> real_;
  gpubench::CorruptibleOutput* seam_ = nullptr;
};

const WorkloadTable& real_table() {
  static const WorkloadTable table = gpubench::host_workloads();
  return table;
}

std::unique_ptr<Workload> real_or_faulty(const BenchCase& c, Backend& b) {
  std::unique_ptr<Workload> w = real_table().find(c, 0)(c, b);
  if (c.key() != kFaultyKey) return w;
  return std::make_unique<WrongLastElement>(std::move(w));
}

/// The host table with the same rows run and the same rows declared unavailable (with the same
/// reasons) as host_workloads(), every run one through real_or_faulty.
WorkloadTable faulty_host_workloads() {
  WorkloadTable table;
  std::set<std::string> keys;
  for (const BenchCase& c : gpubench::every_row()) {
    if (!keys.insert(c.key()).second) continue;
    const std::string why = real_table().unavailable_reason(c, 0);
    if (why.empty()) {
      table.add(c.key(), &real_or_faulty);
    } else {
      table.not_here(c.key(), why);
    }
  }
  table.check_complete(gpubench::every_row(), "host");
  return table;
}

}  // namespace

int main(int argc, char** argv) { return gpubench::run_app(argc, argv, &faulty_host_workloads); }
