#include "harness/cli.h"

#include <sys/stat.h>

#include <regex>

namespace gpubench {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Value of "--name=value"; throws when the value is missing or empty.
std::string value_of(const std::string& arg, const std::string& name) {
  const std::string prefix = name + "=";
  std::string v = arg.substr(prefix.size());
  if (v.empty()) throw UsageError(name + " needs a value");
  return v;
}

DeviceChoice parse_device(const std::string& v) {
  DeviceChoice d;
  if (v == "auto") return d;
  if (v == "host") {
    d.kind = DeviceChoice::Kind::host;
    return d;
  }
  if (v == "all") {
    d.kind = DeviceChoice::Kind::all;
    return d;
  }
  if (!v.empty() && v.size() <= 4 && v.find_first_not_of("0123456789") == std::string::npos) {
    d.kind = DeviceChoice::Kind::index;
    d.index = std::stoi(v);
    return d;
  }
  throw UsageError("--device: '" + v + "' is not auto, host, all or a device number");
}

void check_out_file(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (!is_directory(dir)) throw UsageError("--out: directory '" + dir + "' does not exist");
  if (exists(path)) throw UsageError("--out: '" + path + "' already exists (result files are never overwritten)");
}

}  // namespace

Options parse_cli(const std::vector<std::string>& args) {
  Options o;
  bool device_given = false;
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--version") {
      o.version = true;
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--numa-bind") {
      o.numa_bind = true;
    } else if (starts_with(a, "--filter=") || starts_with(a, "--benchmark_filter=")) {
      o.filter = value_of(a, a.substr(0, a.find('=')));
    } else if (starts_with(a, "--device=")) {
      if (device_given) throw UsageError("--device given twice");
      device_given = true;
      o.device = parse_device(value_of(a, "--device"));
    } else if (starts_with(a, "--out=") || starts_with(a, "--benchmark_out=")) {
      o.out = value_of(a, a.substr(0, a.find('=')));
    } else if (starts_with(a, "--results-dir=")) {
      o.results_dir = value_of(a, "--results-dir");
    } else if (starts_with(a, "--benchmark_out_format=")) {
      if (a != "--benchmark_out_format=json") throw UsageError("--benchmark_out_format: result files are always JSON");
    } else if (starts_with(a, "--benchmark_") && a.find('=') != std::string::npos) {
      o.passthrough.push_back(a);
    } else if (starts_with(a, "--benchmark_")) {
      throw UsageError("'" + a + "' needs a value (--benchmark_NAME=VALUE)");
    } else if (starts_with(a, "-")) {
      throw UsageError("unknown flag '" + a.substr(0, a.find('=')) + "'");
    } else {
      throw UsageError("unexpected argument '" + a + "'");
    }
  }
  if (!o.filter.empty()) {
    try {
      std::regex re(o.filter, std::regex::extended);
    } catch (const std::regex_error& e) {
      throw UsageError("--filter: '" + o.filter + "' is not a valid regular expression");
    }
  }
  if (!o.out.empty() && !o.results_dir.empty()) throw UsageError("--out and --results-dir are exclusive");
  if (!o.out.empty()) check_out_file(o.out);
  if (!o.results_dir.empty() && !is_directory(o.results_dir))
    throw UsageError("--results-dir: '" + o.results_dir + "' is not a directory");
  return o;
}

std::string usage_text() {
  return R"(usage: gpubench [flags] [--benchmark_*=VALUE ...]

Bandwidth and roofline microbenchmarks for NVIDIA GPUs (and the host, where no GPU is usable).

  --filter=REGEX     run the benchmarks whose name matches (names: family/kernel/variant/params;
                     families: bandwidth, compute, roofline), e.g. --filter=bandwidth
  --list             print the names that would run and exit
  --device=WHICH     auto (default: CUDA device 0 if usable, else the host), host, N, or all
  --out=FILE         write Google Benchmark JSON to FILE (never overwrites an existing file)
  --results-dir=DIR  write DIR/<device key>/<UTC time>_<git revision>.json (the results store)
  --quick            small sizes, for smoke runs and CI
  --numa-bind        run on the CPUs of the GPU's NUMA node (PCIe transfers)
  --help, --version
  --benchmark_*=V    any Google Benchmark flag, e.g. --benchmark_repetitions=10
                     (defaults here: --benchmark_repetitions=3, --benchmark_min_time=0.05,
                     0.01 with --quick)

Exit status: 0 all ran and verified; 1 a benchmark failed verification or the device was lost;
2 bad usage or the requested device is not usable.
)";
}

}  // namespace gpubench
