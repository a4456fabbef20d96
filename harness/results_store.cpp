#include "harness/results_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "harness/json_syntax.h"

namespace gpubench {

namespace {

// The folder part of `path` ("." for a bare name, "/" for a file at the root) and its name.
std::pair<std::string, std::string> folder_and_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

std::size_t longest_file_name(const std::string& path) {
  const long most = ::pathconf(folder_and_name(path).first.c_str(), _PC_NAME_MAX);
  return most > 0 ? static_cast<std::size_t>(most) : 255;  // 255: NAME_MAX on Linux file systems
}

std::string temporary_path_for(const std::string& final_path) {
  const std::string suffix = ".tmp." + std::to_string(::getpid());
  const std::string name = folder_and_name(final_path).second;
  if (name.size() + suffix.size() <= longest_file_name(final_path)) return final_path + suffix;
  // A name near the limit: a short name beside it, or a long --out could be written by no run.
  return final_path.substr(0, final_path.size() - name.size()) + ".gpubench-result.json" + suffix;
}

bool publish_file(const std::string& tmp, const std::string& final_path, std::string* error) {
  if (::link(tmp.c_str(), final_path.c_str()) != 0) {
    if (error) {
      *error = errno == EEXIST ? "'" + final_path + "' already exists (result files are never overwritten)"
                               : "cannot create '" + final_path + "': " + std::strerror(errno);
    }
    return false;
  }
  ::unlink(tmp.c_str());
  return true;
}

bool whole_json_document(const std::string& path, std::string* error) {
  // The reporter's own file, not a link someone left in its place: publishing links the name.
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    if (error) *error = "'" + path + "' is not the regular file the run wrote";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto first = text.find_first_not_of(" \t\r\n");
  if (!in.is_open() || first == std::string::npos) {
    if (error) *error = "'" + path + "' is empty";
    return false;
  }
  // The whole syntax: a file cut right after an entry's closing brace still ends in '}'.
  if (const std::string why = json_syntax_error(text); !why.empty()) {
    if (error) *error = "'" + path + "' " + (why.rfind("ends part way", 0) == 0 ? why : "is not valid JSON: " + why);
    return false;
  }
  if (text[first] != '{' || text.find("\"benchmarks\": [") == std::string::npos) {
    if (error) *error = "'" + path + "' holds no Google Benchmark result";
    return false;
  }
  return true;
}

// The name without ".json" and without the "-N" a concurrent run's name carries: a store name's
// revision never ends in "-<digits>" (its parts after a hyphen start with a letter, "-dirty"), so
// a trailing "-<digits>" is always that counter.
std::string store_stem(const std::string& final_path) {
  std::string stem = final_path.substr(0, final_path.size() - (final_path.size() >= 5 ? 5 : 0));  // ".json"
  const std::size_t hyphen = stem.find_last_of('-');
  const std::size_t slash = stem.find_last_of('/');
  if (hyphen != std::string::npos && (slash == std::string::npos || hyphen > slash) && hyphen + 1 < stem.size() &&
      stem.find_first_not_of("0123456789", hyphen + 1) == std::string::npos)
    stem.erase(hyphen);
  return stem;
}

std::string publish_store_file(const std::string& tmp, const std::string& final_path, std::string* error) {
  // final_path may already carry a "-N" (taken when the run started); the next free name counts
  // on from the same stem ("-4" after "-3"), never "-3-2", which is no store name.
  const std::string stem = store_stem(final_path);
  std::string name = final_path;
  for (int n = 1; n <= 1000; ++n) {
    if (n > 1) name = stem + "-" + std::to_string(n) + ".json";  // taken meanwhile by a concurrent run
    if (n > 1 && name == final_path) continue;                   // tried first
    if (::link(tmp.c_str(), name.c_str()) == 0) {
      ::unlink(tmp.c_str());
      return name;
    }
    if (errno != EEXIST) break;
  }
  if (error) *error = "cannot create '" + name + "': " + std::strerror(errno);
  return {};
}

std::string results_store_path(const std::string& dir, const std::string& device_key, const std::string& revision,
                               bool* created) {
  const std::string sub = dir + "/" + device_key;
  const bool made = ::mkdir(sub.c_str(), 0775) == 0;
  if (!made && errno != EEXIST) throw std::runtime_error("cannot create '" + sub + "': " + std::strerror(errno));
  if (created) *created = made;
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  const std::string base = sub + "/" + stamp + "_" + revision;
  std::string path = base + ".json";
  struct stat st {};
  for (int n = 2; ::stat(path.c_str(), &st) == 0; ++n) path = base + "-" + std::to_string(n) + ".json";
  return path;
}

}  // namespace gpubench
