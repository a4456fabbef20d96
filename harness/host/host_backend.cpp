#include "harness/host/host_backend.h"

#include "harness/host/host_info.h"
#include "harness/host/parallel.h"
#include "harness/model/card_table.h"

namespace gpubench {

namespace {

class HostBackend final : public Backend {
 public:
  explicit HostBackend(WorkloadTable table)
      : device_(describe_host()),
        peaks_(theoretical_peaks(device_)),
        key_(host_device_key(device_)),
        table_(std::move(table)) {
    pin_host_threads();
  }
  std::string kind() const override { return "host"; }
  const DeviceDescription& device() const override { return device_; }
  const Peaks& peaks() const override { return peaks_; }
  std::string device_key() const override { return key_; }
  std::string unavailable_reason(const BenchCase& c) const override {
    const std::string why = table_.unavailable_reason(c, 0);
    return why.empty() ? why : "not on the host backend: " + why;
  }
  std::unique_ptr<Workload> create(const BenchCase& c) override {
    auto factory = table_.find(c, 0);
    if (!factory) throw SkipCase(unavailable_reason(c));
    return factory(c, *this);
  }
  std::optional<MemoryReading> memory_reading() override { return host_memory_reading(); }
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

std::unique_ptr<Backend> make_host_backend(WorkloadTable table) {
  return std::make_unique<HostBackend>(std::move(table));
}

}  // namespace gpubench
