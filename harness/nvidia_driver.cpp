#include "harness/nvidia_driver.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpubench {

std::string nvidia_driver_version(const std::string& proc_root) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Release Build ..."
  std::ifstream in(proc_root + "/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return {};
  const auto module = line.find("Module");
  if (module == std::string::npos) return {};
  std::istringstream words(line.substr(module));
  std::string w;
  while (words >> w) {
    if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos) return w;
  }
  return {};
}

bool nvidia_gpu_present(const std::string& proc_root, const std::string& dev_root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dev_root + "/nvidia0", ec)) return true;
  const fs::path gpus = proc_root + "/driver/nvidia/gpus";
  if (!fs::is_directory(gpus, ec)) return false;
  return fs::directory_iterator(gpus, ec) != fs::directory_iterator();
}

}  // namespace gpubench
