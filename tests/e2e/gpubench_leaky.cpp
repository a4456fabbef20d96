// gpubench with one leaking host workload, for the leak-check test (tests/python/
// test_memory_check.py): the real main flow (tests/e2e/planted_host_workloads.h; the result file
// with its end-of-run context) on the real host workloads, except that bandwidth/copy/kernel
// allocates kLeakBytes in prepare(), touches them and never frees them, as a workload that
// forgets a buffer would. The run must end with "gpubench: memory leak: ..." and exit status 1.
// A test executable only, never installed.
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "tests/e2e/planted_host_workloads.h"

namespace {

/// Leaked by each instance (one per benchmark): above the host's 64 MiB tolerance on its own.
constexpr std::size_t kLeakBytes = std::size_t{96} << 20;

/// What the leaky workloads left behind: still reachable (so LeakSanitizer, in the sanitizer
/// build, does not abort the process), never freed while gpubench runs.
std::vector<std::unique_ptr<char[]>>& left_behind() {
  static std::vector<std::unique_ptr<char[]>> v;
  return v;
}

/// A real host workload that also allocates kLeakBytes in prepare() and keeps them.
class LeavesABufferBehind final : public gpubench::e2e::ForwardingWorkload {
 public:
  /// The workload made leaky; every other one is the real host workload.
  static constexpr const char* kKey = "bandwidth/copy/kernel";

  using ForwardingWorkload::ForwardingWorkload;
  void prepare() override {
    real().prepare();
    left_behind().emplace_back(new char[kLeakBytes]);
    std::memset(left_behind().back().get(), 0x5a, kLeakBytes);  // resident, as a used buffer is
  }
};

}  // namespace

int main(int argc, char** argv) { return gpubench::e2e::run_planted<LeavesABufferBehind>(argc, argv); }
