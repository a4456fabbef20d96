#include "harness/host/host_backend.h"

#include "harness/host/host_info.h"
#include "harness/host/parallel.h"
#include "harness/model/card_table.h"

namespace gpubench {

namespace {

class HostBackend final : public Backend {
 public:
  HostBackend() : device_(describe_host()), peaks_(theoretical_peaks(device_)), key_(host_device_key(device_)) {
    pin_host_threads();
    add_host_memory_workloads(table_);
    add_host_pcie_workloads(table_);
    add_host_roofline_workloads(table_);
  }
  std::string kind() const override { return "host"; }
  const DeviceDescription& device() const override { return device_; }
  const Peaks& peaks() const override { return peaks_; }
  std::string device_key() const override { return key_; }
  bool supports(const BenchCase& c) const override { return table_.find(c, 0) != nullptr; }
  std::unique_ptr<Workload> create(const BenchCase& c) override {
    auto factory = table_.find(c, 0);
    if (!factory) throw SkipCase("the host backend does not implement " + c.key());
    return factory(c, *this);
  }
  std::map<std::string, std::string> context() const override {
    return {{"cache_policy",
             "host: no flush; working sets sweep from inside L1 to beyond the last-level cache "
             "(l2_bytes holds the last-level cache size)"},
            {"host_threads", std::to_string(device_.sm_count) + " (one per CPU, pinned)"}};
  }

 private:
  DeviceDescription device_;
  Peaks peaks_;
  std::string key_;
  WorkloadTable table_;
};

}  // namespace

std::unique_ptr<Backend> make_host_backend() { return std::make_unique<HostBackend>(); }

}  // namespace gpubench
