#include "harness/families/families.h"

#include <cstdio>

namespace gpubench {

std::string size_token(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  std::uint64_t v = bytes;
  while (u < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + units[u];
}

std::vector<BenchCase> all_cases(const SweepOptions& o) {
  std::vector<BenchCase> cases;
  auto append = [&](std::vector<BenchCase> more) {
    for (auto& c : more) cases.push_back(std::move(c));
  };
  append(memory_cases(o));
  append(pcie_cases(o));
  append(roofline_cases(o));
  append(compute_cases(o));
  return cases;
}

}  // namespace gpubench
