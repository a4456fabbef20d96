// gpubench's command line: the contract flags, validated up front so bad input gets one clear
// line and exit status 2 before anything runs; every --benchmark_* flag passes through.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpubench {

/// A usage error: main prints "gpubench: <what>", the usage, and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Which device to run on.
struct DeviceChoice {
  enum class Kind { automatic, host, index, all } kind = Kind::automatic;
  int index = 0;  ///< for Kind::index
};

/// Parsed command line.
/// The --benchmark_min_time value (checked: seconds, bare or with "s") in the form Google
/// Benchmark reads: with "s" from 1.8 (`with_suffix`), bare before.
std::string google_benchmark_min_time(const std::string& checked_value, bool with_suffix);

struct Options {
  std::string filter;       ///< --filter / --benchmark_filter (empty: everything)
  bool list = false;        ///< --list: print the names that would run, then exit
  DeviceChoice device;      ///< --device=auto|host|N|all
  std::string out;          ///< --out=FILE / --benchmark_out=FILE: Google Benchmark JSON
  std::string results_dir;  ///< --results-dir=DIR: DIR/<device key>/<UTC time>_<rev>.json
  bool quick = false;       ///< --quick: small sizes
  /// Whether the run moves to the CPUs of the GPU's NUMA node: automatic (neither flag: where
  /// the machine has two NUMA nodes with CPUs or more and the GPU's is known), on (--numa-bind:
  /// and says why not where it cannot) or off (--no-numa-bind).
  enum class NumaBind { automatic, on, off } numa_bind = NumaBind::automatic;
  bool validate = false;       ///< --validate: the acceptance run's compact row set (harness/row_scope.h)
  bool one_at_a_time = false;  ///< --one-at-a-time: --device=all runs the GPUs one after another
  /// --row-scope=all|local|links: the rows of one GPU (local), or those that load links shared
  /// between the GPUs of a node (PCIe, peer-to-peer); --device=all passes it to each GPU's run.
  enum class RowScope { all, local, links } row_scope = RowScope::all;
  /// --progress=auto|on|off: benchmark n of N, elapsed and ETA on stderr (auto: when a terminal)
  enum class Progress { automatic, on, off } progress = Progress::automatic;
  bool help = false;
  bool version = false;
  std::vector<std::string> passthrough;  ///< --benchmark_* flags for Google Benchmark
};

/// Parses args (without argv[0]). Throws UsageError naming the offending argument.
/// Checks everything that can be checked without a device: the regex, that --out's directory
/// exists and the file does not (results are never overwritten), that --results-dir exists.
Options parse_cli(const std::vector<std::string>& args);

/// The --help text.
std::string usage_text();

/// The key=value pairs of --benchmark_context (none without it), as parse_cli checked them.
std::vector<std::pair<std::string, std::string>> user_context(const Options& o);

/// `v` as a plain decimal number (digits, one point, an exponent: no sign, no white space, no
/// hexadecimal, inf or nan, which strtod would take: "0x10" was read as 16 seconds); nullopt
/// otherwise.
std::optional<double> plain_decimal(const std::string& v);

/// GPUBENCH_DEVICE_WAIT_SECONDS's value (harness/cuda/timing.h): a plain decimal above 0 and
/// below 1e7; nullopt when it is not one.
std::optional<double> device_wait_seconds(const std::string& v);

/// Environment variables gpubench reads or that reach Google Benchmark unchecked, with bad
/// values: the one line that says so ("" when none). GPUBENCH_DEVICE_WAIT_SECONDS, and V
/// (Google Benchmark's --v, its log verbosity, which gpubench does not take).
std::string check_environment();

/// Whether `s` is text a result file can carry as it is: valid UTF-8 without control characters
/// (Google Benchmark writes context strings unescaped but for quotes, backslashes and \b\f\n\r\t,
/// so other control bytes or invalid UTF-8 made a file no JSON reader accepts).
bool is_plain_text(const std::string& s);

}  // namespace gpubench
