#include "harness/cuda/cuda_workload.h"

#include <cmath>
#include <limits>

#include "harness/cuda/device_buffer.h"

namespace gpubench {

std::uint64_t case_seed(const BenchCase& c) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (char ch : c.name()) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ull;
  return h;
}

CudaWorkload::CudaWorkload(const BenchCase& c, CudaDevice& dev)
    : c_(c), dev_(dev), timer_(dev.stream()), seed_(case_seed(c)) {}

std::map<std::string, double> CudaWorkload::extra_counters(double /*seconds_per_op*/) {
  if (c_.needs_flush) return {};
  return {{"cuda_graph", timer_.used_graph() ? 1.0 : 0.0}};
}

void CudaWorkload::begin_prepare(std::size_t device_bytes) {
  dev_.activate();
  if (c_.needs_flush) dev_.flusher().allocate(stream());
  require_device_memory(device_bytes, c_.name());
}

double CudaWorkload::timed(int batch, const EnqueueFn& enqueue) {
  dev_.activate();
  return timer_.time(batch, enqueue, c_.needs_flush ? &dev_.flusher() : nullptr);
}

std::size_t CudaWorkload::count_arg(const char* key) const {
  const double v = c_.arg(key);
  if (!(v >= 1) || v > static_cast<double>(std::numeric_limits<std::int64_t>::max()) || v != std::floor(v))
    throw SkipCase(std::string("argument ") + key + " is not a positive integer: " + std::to_string(v));
  return static_cast<std::size_t>(v);
}

}  // namespace gpubench
