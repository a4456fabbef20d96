#include "harness/name_filter.h"

#include <re2/re2.h>

#include "harness/cli.h"

namespace gpubench {

NameFilter::NameFilter(const std::string& pattern) {
  std::string p = pattern;
  if (!p.empty() && p[0] == '-') {
    negative_ = true;
    p = p.substr(1);
  }
  if (p.empty()) return;  // everything (or, negated, nothing: handled in matches)
  RE2::Options options;
  options.set_log_errors(false);
  re_ = std::make_unique<re2::RE2>(p, options);
  if (!re_->ok())
    throw UsageError("--filter: '" + pattern + "' is not a valid regular expression (" + re_->error() + ")");
}

NameFilter::~NameFilter() = default;
NameFilter::NameFilter(NameFilter&&) noexcept = default;
NameFilter& NameFilter::operator=(NameFilter&&) noexcept = default;

bool NameFilter::matches(const std::string& name) const {
  const bool hit = !re_ || re2::RE2::PartialMatch(name, *re_) || re2::RE2::PartialMatch(name + "/manual_time", *re_);
  return negative_ ? !hit : hit;
}

}  // namespace gpubench
