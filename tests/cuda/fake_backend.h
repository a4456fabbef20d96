// The pieces the fake-runtime tests of the CUDA workloads (memory, PCIe, roofline) share: a
// small made-up device, a CudaBackendBase over it that holds one area's workload table, and
// the runner's call sequence. The fake CUDA runtime (fake_cuda_runtime.cpp) stands behind it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/cuda/cuda_device.h"
#include "harness/workload_table.h"
#include "tests/cuda/fake_cuda_runtime.h"

namespace gpubench::fake_backend {

/// L2 size of the fake device: small, so --quick sizes cover both timing modes.
constexpr std::uint64_t kL2Bytes = 1u << 20;

/// A compute capability 9.0 device with `sm_count` SMs, 1 MiB of L2 and 80 GiB of memory.
DeviceDescription fake_device(int sm_count = 4);

/// A CUDA backend on a CudaDevice over the fake runtime, with the workloads that `add` puts in
/// its table (e.g. families::global_memory::add_cuda_workloads). Looks up rows as compute capability 9.0.
class FakeBackend final : public CudaBackendBase {
 public:
  /// `add` fills the workload table; `sm_count` sizes the fake device.
  explicit FakeBackend(void (*add)(WorkloadTable&), int sm_count = 4);
  std::string kind() const override;
  const DeviceDescription& device() const override;
  const Peaks& peaks() const override;
  std::string device_key() const override;
  std::string unavailable_reason(const BenchCase& c) const override;
  std::unique_ptr<Workload> create(const BenchCase& c) override;
  std::map<std::string, std::string> context() const override;
  CudaDevice& cuda_device() override;

 private:
  CudaDevice device_;
  Peaks peaks_;
  WorkloadTable table_;
};

/// The case named `name` in `cases`; throws std::logic_error when there is none.
const BenchCase& find_case(const std::vector<BenchCase>& cases, const std::string& name);

/// Reads `w`'s output back with a wrong value planted at `where` (fake_cuda::Plant, elements of
/// `elem_bytes`): verification must fail with a message starting with `unit` + the planted
/// index (no further digit), and pass again on an intact read-back.
void expect_plant_caught(Workload& w, fake_cuda::Plant where, std::size_t elem_bytes, const std::string& unit);

/// The runner's sequence: prepare, poison, warm-up run(1), run(batch), poison, two timed
/// run(batch), verify; then, for a verified output, that poison() makes it fail and one more
/// run(batch) makes it pass again (the result returned). Expects every run to report a
/// positive device time.
Verification run_like_the_runner(Workload& w, int batch);

/// The case `name` run like the runner twice: with the fake runtime's fault `fault` off (it must
/// verify) and on (it must not). Returns the second run's verification; the fault is off after.
Verification verify_with_fault(Backend& backend, const std::vector<BenchCase>& cases, const std::string& name,
                               bool fake_cuda::State::*fault);

}  // namespace gpubench::fake_backend
