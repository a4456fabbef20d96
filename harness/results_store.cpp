#include "harness/results_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace gpubench {

std::string temporary_path_for(const std::string& final_path) {
  return final_path + ".tmp." + std::to_string(::getpid());
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
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  if (!in.is_open() || first == std::string::npos) {
    if (error) *error = "'" + path + "' is empty";
    return false;
  }
  if (text[first] != '{' || text[last] != '}' || text.find("\"benchmarks\": [") == std::string::npos) {
    if (error) *error = "'" + path + "' ends part way through (" + std::to_string(text.size()) + " bytes)";
    return false;
  }
  return true;
}

std::string publish_store_file(const std::string& tmp, const std::string& final_path, std::string* error) {
  const std::string stem = final_path.substr(0, final_path.size() - (final_path.size() >= 5 ? 5 : 0));  // ".json"
  std::string name = final_path;
  for (int n = 2; n <= 1000; ++n) {
    if (::link(tmp.c_str(), name.c_str()) == 0) {
      ::unlink(tmp.c_str());
      return name;
    }
    if (errno != EEXIST) break;
    name = stem + "-" + std::to_string(n) + ".json";  // taken meanwhile by a concurrent run
  }
  if (error) *error = "cannot create '" + name + "': " + std::strerror(errno);
  return {};
}

std::string results_store_path(const std::string& dir, const std::string& device_key, const std::string& revision) {
  const std::string sub = dir + "/" + device_key;
  if (::mkdir(sub.c_str(), 0775) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create '" + sub + "': " + std::strerror(errno));
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
