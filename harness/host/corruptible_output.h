// A test seam of the host workloads, and nothing else: through it a test plants a wrong value in
// a workload's output after the timed runs and proves that verify() fails naming that element
// (tests/unit/test_host_verification.cpp), and the test executable gpubench_faulty
// (tests/e2e/gpubench_faulty.cpp) makes one workload write a wrong element. The runner, the
// backends and gpubench itself never use it; it changes nothing a benchmark does.
#pragma once

#include <cstddef>

namespace gpubench {

/// Implemented by every host workload beside Workload; a test reaches it with dynamic_cast.
class CorruptibleOutput {
 public:
  virtual ~CorruptibleOutput() = default;
  /// Elements of the output verify() checks, in the unit its message names: bytes of a copy,
  /// elements, half2 words; 1 for the index a pointer chase ends on; one partial sum per host
  /// thread for a read (verify() checks their total).
  virtual std::size_t output_elements() const = 0;
  /// Makes output element `index` (< output_elements()) wrong, as a faulty kernel would leave it:
  /// its bit pattern is changed, so it differs from both the right value and the poison.
  virtual void corrupt_output_for_test(std::size_t index) = 0;
};

}  // namespace gpubench
