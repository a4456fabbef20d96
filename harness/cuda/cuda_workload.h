// The skeleton every kernel workload on a CUDA device shares (global memory, shared memory,
// intensity, GEMM): the case, the device, the per-name seed, prepare's first steps, the timed
// batch (a CUDA graph, or stream launches after an L2 flush for flushed rows) and the counter
// saying which of the two ran. A family's workload adds its buffers, launch and check.
// Compiled against the runtime API only (the fake-runtime tests stand in for it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "harness/backend.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/timing.h"

namespace gpubench {

/// A seed that differs per benchmark name and is the same from run to run (FNV-1a of the name).
std::uint64_t case_seed(const BenchCase& c);

class CudaWorkload : public Workload {
 public:
  CudaWorkload(const BenchCase& c, CudaDevice& dev);

  /// cuda_graph: whether the batch was graph-launched (1) or fell back to stream launches (0);
  /// left out for flushed rows, which never use a graph.
  std::map<std::string, double> extra_counters(double seconds_per_op) override;

 protected:
  /// First thing in prepare(): the device current, the shared flush buffer allocated when the
  /// row is flushed (counted before this case's own memory), then room for `device_bytes`
  /// checked (SkipCase when it does not fit).
  void begin_prepare(std::size_t device_bytes);
  /// The device time of `batch` executions of `enqueue`, after an L2 flush for flushed rows.
  double timed(int batch, const EnqueueFn& enqueue);
  /// The case's argument `key` as a positive integer; SkipCase otherwise.
  std::size_t count_arg(const char* key) const;
  CUstream_st* stream() const { return dev_.stream(); }
  int sms() const { return dev_.sm_count(); }

  const BenchCase c_;
  CudaDevice& dev_;
  BatchTimer timer_;
  const std::uint64_t seed_;
};

}  // namespace gpubench
