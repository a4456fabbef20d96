// gpubench with one leaking host workload, for the leak-check test (tests/python/
// test_memory_check.py): the real main flow (run_app: command line, backend, registration,
// Google Benchmark, result file with its end-of-run context, exit status) on the real host
// workloads, except that bandwidth/copy/kernel allocates kLeakBytes in prepare(), touches them
// and never frees them, as a workload that forgets a buffer would. The run must end with
// "gpubench: memory leak: ..." and exit status 1. A test executable only, never installed; it is
// reached through run_app's test seam (harness/app.h), which gpubench itself never uses.
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "harness/app.h"
#include "harness/family.h"
#include "harness/workload_table.h"

namespace {

using gpubench::Backend;
using gpubench::BenchCase;
using gpubench::Verification;
using gpubench::Workload;
using gpubench::WorkloadTable;

/// The workload made leaky; every other one is the real host workload.
constexpr const char* kLeakyKey = "bandwidth/copy/kernel";
/// Leaked by each instance (one per benchmark): above the host's 64 MiB tolerance on its own.
constexpr std::size_t kLeakBytes = std::size_t{96} << 20;

/// What the leaky workloads left behind: still reachable (so LeakSanitizer, in the sanitizer
/// build, does not abort the process), never freed while gpubench runs.
std::vector<std::unique_ptr<char[]>>& left_behind() {
  static std::vector<std::unique_ptr<char[]>> v;
  return v;
}

/// A real host workload that also allocates kLeakBytes in prepare() and keeps them.
class LeavesABufferBehind final : public Workload {
 public:
  explicit LeavesABufferBehind(std::unique_ptr<Workload> real) : real_(std::move(real)) {}
  void prepare() override {
    real_->prepare();
    left_behind().emplace_back(new char[kLeakBytes]);
    std::memset(left_behind().back().get(), 0x5a, kLeakBytes);  // resident, as a used buffer is
  }
  void poison() override { real_->poison(); }
  double run(int batch) override { return real_->run(batch); }
  Verification verify() override { return real_->verify(); }
  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    return real_->extra_counters(seconds_per_op);
  }

 private:
  std::unique_ptr<Workload> real_;
};

const WorkloadTable& real_table() {
  static const WorkloadTable table = gpubench::host_workloads();
  return table;
}

std::unique_ptr<Workload> real_or_leaky(const BenchCase& c, Backend& b) {
  std::unique_ptr<Workload> w = real_table().find(c, 0)(c, b);
  if (c.key() != kLeakyKey) return w;
  return std::make_unique<LeavesABufferBehind>(std::move(w));
}

/// The host table with the same rows run and declared unavailable as host_workloads(), every
/// run one through real_or_leaky.
WorkloadTable leaky_host_workloads() {
  WorkloadTable table;
  std::set<std::string> keys;
  for (const BenchCase& c : gpubench::every_row()) {
    if (!keys.insert(c.key()).second) continue;
    const std::string why = real_table().unavailable_reason(c, 0);
    if (why.empty()) {
      table.add(c.key(), &real_or_leaky);
    } else {
      table.not_here(c.key(), why);
    }
  }
  table.check_complete(gpubench::every_row(), "host");
  return table;
}

}  // namespace

int main(int argc, char** argv) { return gpubench::run_app(argc, argv, &leaky_host_workloads); }
