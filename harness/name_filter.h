// --filter: which benchmarks run. Matched here with RE2, in time linear in the name's length
// whatever the pattern (std::regex, which Google Benchmark uses, backtracks: `(.*)*Z` hangs and
// deeply nested groups overflow its stack); only the matched benchmarks are registered, so
// Google Benchmark never sees the pattern.
#pragma once

#include <memory>
#include <string>

namespace re2 {
class RE2;
}

namespace gpubench {

class NameFilter {
 public:
  /// Compiles `pattern`: empty matches everything, a leading '-' inverts it (Google Benchmark's
  /// negative filter). Throws UsageError naming the problem when it is not a valid expression.
  explicit NameFilter(const std::string& pattern);
  ~NameFilter();
  NameFilter(NameFilter&&) noexcept;
  NameFilter& operator=(NameFilter&&) noexcept;

  /// Whether benchmark `name` (family/kernel/variant/params) is selected. The pattern may match
  /// anywhere in the name, or in the name as Google Benchmark prints it (with "/manual_time"),
  /// so "...bytes:1GiB$" and ".../manual_time$" both select that benchmark.
  bool matches(const std::string& name) const;

 private:
  std::unique_ptr<re2::RE2> re_;
  bool negative_ = false;
};

}  // namespace gpubench
