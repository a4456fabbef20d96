// The main flow of the planted-workload test executables (gpubench_faulty, gpubench_leaky):
// gpubench's real main flow (run_app: command line, backend, registration, Google Benchmark,
// result file, exit status) on the real host workloads, except that the workload of one row key
// is wrapped in a planted fault. Reached through run_app's test seam (harness/app.h), which
// gpubench itself never uses.
//
//   class MyFault final : public gpubench::e2e::ForwardingWorkload {
//    public:
//     static constexpr const char* kKey = "bandwidth/write/kernel";  // the row it is planted in
//     using ForwardingWorkload::ForwardingWorkload;
//     double run(int batch) override { ... real() ... }
//   };
//   int main(int argc, char** argv) { return gpubench::e2e::run_planted<MyFault>(argc, argv); }
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "harness/app.h"
#include "harness/backend.h"
#include "harness/workload_table.h"

namespace gpubench::e2e {

/// A real host workload with every step forwarded to it; a planted fault overrides the steps
/// it changes.
class ForwardingWorkload : public Workload {
 public:
  explicit ForwardingWorkload(std::unique_ptr<Workload> real) : real_(std::move(real)) {}
  void prepare() override { real_->prepare(); }
  void poison() override { real_->poison(); }
  double run(int batch) override { return real_->run(batch); }
  Verification verify() override { return real_->verify(); }
  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    return real_->extra_counters(seconds_per_op);
  }

 protected:
  /// The real host workload.
  Workload& real() { return *real_; }

 private:
  std::unique_ptr<Workload> real_;
};

/// The real host table (host_workloads()), built once.
const WorkloadTable& real_host_workloads();

/// The host table with the same rows run and the same rows declared unavailable (with the same
/// reasons) as host_workloads(), every run one made by `factory`.
WorkloadTable host_workloads_through(WorkloadFactory factory);

/// The real host workload of the case, wrapped in a Planted where the case's key is
/// Planted::kKey.
template <class Planted>
std::unique_ptr<Workload> real_or_planted(const BenchCase& c, Backend& b) {
  std::unique_ptr<Workload> w = real_host_workloads().find(c, 0)(c, b);
  if (c.key() != Planted::kKey) return w;
  return std::make_unique<Planted>(std::move(w));
}

/// The host table with Planted planted in its row.
template <class Planted>
WorkloadTable planted_host_workloads() {
  return host_workloads_through(&real_or_planted<Planted>);
}

/// gpubench's main flow with Planted planted: the whole main() of a planted-workload executable.
template <class Planted>
int run_planted(int argc, char** argv) {
  return run_app(argc, argv, &planted_host_workloads<Planted>);
}

}  // namespace gpubench::e2e
