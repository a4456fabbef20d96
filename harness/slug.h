// Device names as key fragments for the results store ("NVIDIA H100 80GB HBM3" ->
// "nvidia_h100_80gb_hbm3"): both backends build their device keys from it.
#pragma once

#include <cctype>
#include <string>

namespace gpubench {

/// `name` lowercased, each run of non-alphanumeric characters one `separator`, none at either
/// end ("" when the name has no alphanumeric character).
inline std::string slugify(const std::string& name, char separator) {
  std::string slug;
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      slug += static_cast<char>(std::tolower(c));
    } else if (!slug.empty() && slug.back() != separator) {
      slug += separator;
    }
  }
  while (!slug.empty() && slug.back() == separator) slug.pop_back();
  return slug;
}

}  // namespace gpubench
