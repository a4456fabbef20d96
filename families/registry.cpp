#include "families/registry.h"

namespace gpubench {

std::vector<BenchCase> all_cases(const SweepOptions& o) {
  std::vector<BenchCase> cases;
  for (const FamilyEntry& f : registered_families())
    for (auto& c : f.cases(o)) cases.push_back(std::move(c));
  return cases;
}

std::vector<BenchCase> every_row() {
  // Row keys do not depend on sizes; any plausible device gives every key.
  DeviceDescription d;
  d.cc_major = 9;
  d.sm_count = 132;
  d.sm_clock_kHz = 1.98e6;
  d.l2_bytes = std::uint64_t{50} << 20;
  d.memory_bytes = std::uint64_t{80} << 30;
  d.ordinal = 0;
  d.visible_devices = 2;  // a two-GPU node: the peer-to-peer rows (families/p2p) exist only there
  std::vector<BenchCase> rows;
  for (const char* kind : {"cuda", "host"})
    for (bool quick : {false, true})
      for (auto& c : all_cases(sweep_options(d, kind, quick))) rows.push_back(std::move(c));
  return rows;
}

WorkloadTable host_workloads() {
  WorkloadTable t;
  for (const FamilyEntry& f : registered_families()) f.add_host_workloads(t);
  t.check_complete(every_row(), "host");
  return t;
}

}  // namespace gpubench
