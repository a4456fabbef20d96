#include "harness/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <set>

#include "harness/context.h"
#include "harness/name_filter.h"

namespace gpubench {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A name that is taken, a symbolic link included (even one whose target is missing: publishing
// a result there would fail after the whole run).
bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
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

void check_out_file(const std::string& path, bool must_not_exist) {
  // "-" is standard output to many tools: a file of that name would surprise its user.
  if (path == "-")
    throw UsageError("--out=-: --out names a file; for the JSON on standard output give --benchmark_format=json");
  for (const char ch : path) {  // a line break in the name would split the "result: PATH" line run.sh reads
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
      throw UsageError("--out: the file name holds a control character (a line break?)");
  }
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (!is_directory(dir)) throw UsageError("--out: directory '" + dir + "' does not exist");
  if (::access(dir.c_str(), W_OK) != 0) throw UsageError("--out: directory '" + dir + "' is not writable");
  if (must_not_exist && exists(path)) {
    throw UsageError("--out: '" + path + "' already exists (result files are never overwritten)");
  }
}

// Bounds on a pattern's size, for one clear line rather than a compile error deep in RE2.
constexpr std::size_t kMaxFilterLength = 1000;
constexpr int kMaxFilterNesting = 50;

void check_filter_shape(const std::string& f) {
  if (f.size() > kMaxFilterLength)
    throw UsageError("--filter: " + std::to_string(f.size()) + " characters, more than the " +
                     std::to_string(kMaxFilterLength) + " a filter may have");
  int depth = 0, deepest = 0;
  for (char ch : f) {
    if (ch == '(') deepest = std::max(deepest, ++depth);
    if (ch == ')') --depth;
  }
  if (deepest > kMaxFilterNesting)
    throw UsageError("--filter: groups nested " + std::to_string(deepest) + " deep, more than " +
                     std::to_string(kMaxFilterNesting));
}

// gpubench's flags without a value, and those that take one (--name=value).
bool is_switch(const std::string& name) {
  for (const char* s :
       {"--list", "--quick", "--numa-bind", "--no-numa-bind", "--validate", "--one-at-a-time", "--version", "--help"})
    if (name == s) return true;
  return false;
}
bool takes_value(const std::string& arg) {
  for (const char* s : {"--filter", "--device", "--out", "--results-dir", "--progress", "--row-scope"})
    if (arg == s) return true;
  return false;
}

bool one_of(const std::string& v, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed)
    if (v == a) return true;
  return false;
}

// The pairs of a --benchmark_context value, split as Google Benchmark splits them: at commas, then
// at '=', where a pair must have exactly one (Google Benchmark refuses "url=a=b" as an
// unrecognized flag, after the device was set up: said here, before anything runs).
std::vector<std::pair<std::string, std::string>> context_pairs(const std::string& v) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t start = 0;
  while (start <= v.size()) {
    const std::size_t comma = v.find(',', start);
    const std::string pair = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t eq = pair.find('=');
    if (eq == std::string::npos || pair.find('=', eq + 1) != std::string::npos)
      throw UsageError("--benchmark_context: '" + pair + "' is not key=value (one '=', none in the value)");
    pairs.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return pairs;
}

// The context keys Google Benchmark writes itself: a user key among them would be written twice,
// and JSON readers keep the last.
const std::vector<std::string>& google_benchmark_context_keys() {
  static const std::vector<std::string> keys = {
      "date",   "host_name", "executable",      "num_cpus",           "mhz_per_cpu",        "cpu_scaling_enabled",
      "caches", "load_avg",  "library_version", "library_build_type", "json_schema_version"};
  return keys;
}

// Keys gpubench always writes (context.cpp), those run_app adds, and Google Benchmark's own.
bool is_reserved_context_key(const std::string& key) {
  for (const char* const* k = required_context_keys(); *k; ++k)
    if (key == *k) return true;
  for (const char* k : {"card_key", "expected_bands", "numa_bind", "row_scope", "validate"})
    if (key == k) return true;
  const auto& gb = google_benchmark_context_keys();
  return std::find(gb.begin(), gb.end(), key) != gb.end();
}

// The Google Benchmark flags whose bad values it would accept silently, abort on, or answer with
// its usage and exit status 0: checked here, so they get one line and exit 2 like gpubench's own.
void check_benchmark_flag(const std::string& name, const std::string& v) {
  const std::string flag = "--" + name;
  // strtol and strtod skip leading white space, which would take ' 3' and '\n3' (and refuse '3 ').
  const bool blank_first = !v.empty() && std::isspace(static_cast<unsigned char>(v[0])) != 0;
  if (name == "benchmark_repetitions") {
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || blank_first || *end != '\0' || n < 1 || n > 100000)
      throw UsageError(flag + ": '" + v + "' is not a whole number from 1 to 100000");
  } else if (name == "benchmark_min_time") {
    // Seconds, bare or with Google Benchmark 1.8's "s" (google_benchmark_min_time passes the
    // form the linked library reads).
    const bool seconds_suffix = !v.empty() && v.back() == 's';
    const auto t = plain_decimal(seconds_suffix ? v.substr(0, v.size() - 1) : v);
    if (!t || !(*t > 0) || *t > 1e6)
      throw UsageError(flag + ": '" + v + "' is not a number of seconds above 0 and at most 1e6 (e.g. 0.5 or 0.5s)");
  } else if (name == "benchmark_min_warmup_time") {
    const auto t = plain_decimal(v);
    if (!t || !(*t >= 0) || *t > 1e6) throw UsageError(flag + ": '" + v + "' is not a number of seconds from 0 to 1e6");
  } else if (name == "benchmark_color") {
    if (!one_of(v, {"auto", "true", "false", "yes", "no", "1", "0"}))
      throw UsageError(flag + ": '" + v + "' is not auto, true or false");
  } else if (name == "benchmark_counters_tabular") {
    if (!one_of(v, {"true", "false", "1", "0"})) throw UsageError(flag + ": '" + v + "' is not true or false");
  } else if (name == "benchmark_perf_counters") {
    // Google Benchmark reads them through libpfm where it was built with it, and otherwise says
    // "not supported" and runs on; gpubench's times are the device's own clock either way.
    throw UsageError(flag + ": hardware performance counters are not read by gpubench (its times are the device's)");
  } else if (name == "benchmark_format") {
    if (!one_of(v, {"console", "json", "csv"})) throw UsageError(flag + ": '" + v + "' is not console, json or csv");
  } else if (name == "benchmark_time_unit") {
    if (!one_of(v, {"ns", "us", "ms", "s"})) throw UsageError(flag + ": '" + v + "' is not ns, us, ms or s");
  } else if (name == "benchmark_list_tests") {
    throw UsageError(flag + ": use --list");
  } else if (name == "benchmark_display_aggregates_only" || name == "benchmark_report_aggregates_only" ||
             name == "benchmark_enable_random_interleaving") {
    if (!one_of(v, {"true", "false", "1", "0"})) throw UsageError(flag + ": '" + v + "' is not true or false");
  } else if (name == "benchmark_context") {
    // key=value[,key=value]: a key gpubench or Google Benchmark writes would be written twice
    // (JSON readers keep the last: the user's), so the scripts would read a forged value; the
    // keys that depend on the device are checked again once it is known (run_app).
    std::set<std::string> keys;
    for (const auto& [key, value] : context_pairs(v)) {
      if (key.empty()) throw UsageError(flag + ": a key=value pair has an empty key");
      // Google Benchmark keeps the first value of a key given twice and drops the other silently
      if (!keys.insert(key).second) {
        std::string msg = flag;
        msg.append(": '").append(key).append("' given twice");
        throw UsageError(msg);
      }
      if (!is_plain_text(key) || !is_plain_text(value))
        throw UsageError(flag + ": keys and values must be UTF-8 text without control characters");
      if (is_reserved_context_key(key)) {
        std::string msg = flag;
        msg.append(": '").append(key).append("' is written by gpubench or Google Benchmark and cannot be set");
        throw UsageError(msg);
      }
    }
  }
}

}  // namespace

std::optional<double> plain_decimal(const std::string& v) {
  bool digit = false, point = false, exponent = false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      digit = true;
    } else if (c == '.' && !point && !exponent) {
      point = true;
    } else if ((c == 'e' || c == 'E') && digit && !exponent && i + 1 < v.size()) {
      exponent = true;
      if (v[i + 1] == '+' || v[i + 1] == '-') ++i;
      if (i + 1 >= v.size()) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (!digit) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (*end != '\0' || !std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<double> device_wait_seconds(const std::string& v) {
  const auto s = plain_decimal(v);
  if (!s || !(*s > 0) || !(*s < 1e7)) return std::nullopt;
  return s;
}

std::string check_environment() {
  if (const char* v = std::getenv("GPUBENCH_DEVICE_WAIT_SECONDS"); v && !device_wait_seconds(v))
    return std::string("environment variable GPUBENCH_DEVICE_WAIT_SECONDS: '") + v +
           "' is not a number of seconds above 0 and below 1e7 (how long a wait for the device may last)";
  if (const char* v = std::getenv("V"); v && std::string(v) != "0")
    return std::string("environment variable V='") + v +
           "' is Google Benchmark's --v (its log verbosity), which gpubench does not take: unset it";
  return {};
}

std::string google_benchmark_min_time(const std::string& checked_value, bool with_suffix) {
  std::string bare = checked_value;
  if (!bare.empty() && bare.back() == 's') bare.pop_back();
  return with_suffix ? bare + "s" : bare;
}

Options parse_cli(const std::vector<std::string>& args) {
  Options o;
  bool device_given = false;
  std::set<std::string> seen;  // flags that may be given once (a repeated one is a mistake)
  const auto once = [&seen](const std::string& canonical) {
    if (!seen.insert(canonical).second) throw UsageError(canonical + " given twice");
  };
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--version") {
      o.version = true;
    } else if (a == "--list") {
      once(a);
      o.list = true;
    } else if (a == "--quick") {
      once(a);
      o.quick = true;
    } else if (a == "--numa-bind" || a == "--no-numa-bind") {
      once(a);
      const auto wanted = a == "--numa-bind" ? Options::NumaBind::on : Options::NumaBind::off;
      if (o.numa_bind != Options::NumaBind::automatic && o.numa_bind != wanted)
        throw UsageError("--numa-bind and --no-numa-bind are exclusive");
      o.numa_bind = wanted;
    } else if (a == "--validate") {
      once(a);
      o.validate = true;
    } else if (a == "--one-at-a-time") {
      once(a);
      o.one_at_a_time = true;
    } else if (is_switch(a.substr(0, a.find('=')))) {
      throw UsageError(a.substr(0, a.find('=')) + " takes no value");
    } else if (takes_value(a)) {
      std::string message = a;
      message.append(" needs a value (").append(a).append("=VALUE)");
      throw UsageError(message);
    } else if (starts_with(a, "--row-scope=")) {
      once("--row-scope");
      const std::string v = value_of(a, "--row-scope");
      if (!one_of(v, {"all", "local", "links"}))
        throw UsageError("--row-scope: '" + v + "' is not all, local or links");
      o.row_scope = v == "local"   ? Options::RowScope::local
                    : v == "links" ? Options::RowScope::links
                                   : Options::RowScope::all;
    } else if (starts_with(a, "--progress=")) {
      once("--progress");
      const std::string v = value_of(a, "--progress");
      if (!one_of(v, {"auto", "on", "off"})) throw UsageError("--progress: '" + v + "' is not auto, on or off");
      o.progress = v == "on"    ? Options::Progress::on
                   : v == "off" ? Options::Progress::off
                                : Options::Progress::automatic;
    } else if (starts_with(a, "--filter=") || starts_with(a, "--benchmark_filter=")) {
      once("--filter");
      o.filter = value_of(a, a.substr(0, a.find('=')));
      check_filter_shape(o.filter);
    } else if (starts_with(a, "--device=")) {
      if (device_given) throw UsageError("--device given twice");
      device_given = true;
      o.device = parse_device(value_of(a, "--device"));
    } else if (starts_with(a, "--out=") || starts_with(a, "--benchmark_out=")) {
      once("--out");
      o.out = value_of(a, a.substr(0, a.find('=')));
    } else if (starts_with(a, "--results-dir=")) {
      once("--results-dir");
      o.results_dir = value_of(a, "--results-dir");
    } else if (starts_with(a, "--benchmark_out_format=")) {
      if (a != "--benchmark_out_format=json") throw UsageError("--benchmark_out_format: result files are always JSON");
    } else if (starts_with(a, "--benchmark_") && a.find('=') != std::string::npos) {
      const std::string name = a.substr(2, a.find('=') - 2);
      once("--" + name);
      check_benchmark_flag(name, a.substr(a.find('=') + 1));
      o.passthrough.push_back(a);
    } else if (starts_with(a, "--benchmark_")) {
      throw UsageError("'" + a + "' needs a value (--benchmark_NAME=VALUE)");
    } else if (starts_with(a, "-")) {
      throw UsageError("unknown flag '" + a.substr(0, a.find('=')) + "'");
    } else {
      throw UsageError("unexpected argument '" + a + "'");
    }
  }
  if (!o.filter.empty()) (void)NameFilter(o.filter);  // throws UsageError when not a valid expression
  if (!o.out.empty() && !o.results_dir.empty()) throw UsageError("--out and --results-dir are exclusive");
  if (o.list && (!o.out.empty() || !o.results_dir.empty()))
    throw UsageError("--list writes no result: drop --out / --results-dir");
  if (o.one_at_a_time && o.device.kind != DeviceChoice::Kind::all)
    throw UsageError("--one-at-a-time applies to --device=all only");
  // --device=all writes F's stem + ".deviceN....json", never F: those files are checked once the
  // GPUs are known (harness/app.cpp).
  if (!o.out.empty()) check_out_file(o.out, o.device.kind != DeviceChoice::Kind::all);
  if (!o.results_dir.empty() && !is_directory(o.results_dir)) {
    struct stat st {};
    const int found = ::stat(o.results_dir.c_str(), &st);
    const int err = errno;
    throw UsageError("--results-dir: '" + o.results_dir + "' " +
                     (found == 0      ? std::string("is not a directory")
                      : err == ENOENT ? std::string("does not exist")
                                      : std::string("cannot be reached: ") + std::strerror(err)));
  }
  if (!o.results_dir.empty() && ::access(o.results_dir.c_str(), W_OK) != 0)
    throw UsageError("--results-dir: '" + o.results_dir + "' is not writable");
  return o;
}

std::vector<std::pair<std::string, std::string>> user_context(const Options& o) {
  for (const std::string& a : o.passthrough)
    if (starts_with(a, "--benchmark_context=")) return context_pairs(a.substr(a.find('=') + 1));
  return {};
}

bool is_plain_text(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The length of the sequence from its lead byte; overlong forms, surrogates and code points
    // above U+10FFFF are not UTF-8.
    const int len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (int k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 > 0x8f))
      return false;
    i += len;
  }
  return true;
}

std::string usage_text() {
  return R"(usage: gpubench [flags] [--benchmark_*=VALUE ...]

Bandwidth and roofline microbenchmarks for NVIDIA GPUs (and the host, where no GPU is usable).

  --filter=REGEX     run the benchmarks whose name matches (names: family/kernel/variant/params;
                     families: bandwidth, compute, roofline, memory), e.g. --filter=bandwidth
  --list             print the names that would run and exit
  --device=WHICH     auto (default: CUDA device 0 if usable, else the host), host, N, or all
                     (every GPU: one result per GPU and phase; use --results-dir)
  --out=FILE         write Google Benchmark JSON to FILE (never overwrites an existing file)
  --results-dir=DIR  write DIR/<device key>/<UTC time>_<git revision>.json (the results store)
  --quick            small sizes, for smoke runs and CI
  --numa-bind        run on the CPUs of the GPU's NUMA node (PCIe transfers, pinned and
                     pageable buffers), and say why not where it cannot; without it this
                     happens where the machine has two NUMA nodes with CPUs or more
  --no-numa-bind     leave the CPU affinity as it is
  --validate         the acceptance run's rows only (DRAM copy, cache plateau, pinned PCIe,
                     SGEMM and FP16 GEMM with cuBLAS, peak FMA); scripts/validate.py gives
                     each a PASS/WARN/FAIL against the card's expected bands
  --one-at-a-time    with --device=all: run the GPUs one after another (default: the GPUs'
                     own rows on all GPUs at once, then PCIe and peer rows one GPU at a time)
  --row-scope=WHICH  all (default), local (rows of one GPU) or links (PCIe, peer-to-peer and
                     allocation rows, which load what a node's GPUs share); what --device=all
                     gives each GPU's run
  --progress=WHEN    auto (default: when stderr is a terminal), on or off: benchmark n of N,
                     elapsed time and ETA on stderr
  --help, --version
  --benchmark_*=V    any Google Benchmark flag, e.g. --benchmark_repetitions=10
                     (defaults here: --benchmark_repetitions=3, --benchmark_min_time=0.05,
                     0.005 with --quick)

Exit status: 0 all ran and verified; 1 a benchmark failed verification, the device was lost or
the run leaked memory (the result is still written); 2 bad usage or the requested device
is not usable.
)";
}

}  // namespace gpubench
