#include "harness/app.h"

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/all_devices.h"
#include "harness/cli.h"
#include "harness/console_reporter.h"
#include "harness/console_table.h"
#include "harness/context.h"
#include "harness/device_select.h"
#include "harness/family.h"
#include "harness/memory_check.h"
#include "harness/name_filter.h"
#include "harness/pcie/pcie_context.h"
#include "harness/results_store.h"
#include "harness/row_scope.h"
#include "harness/runner.h"
#include "harness/workload_table.h"
#include "version.h"

#ifndef GPUBENCH_GBENCH_MIN_TIME_SUFFIX  // set by cmake/Dependencies.cmake from the library's version
#define GPUBENCH_GBENCH_MIN_TIME_SUFFIX 0
#endif

namespace gpubench {

namespace {
// An answer gpubench prints (--list, --help, --version) is its output: one that did not reach
// standard output (a full disk: `gpubench --list > names.txt`) is an error, not exit 0.
int answered(int status) {
  std::cout.flush();
  if (std::cout.fail() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    if (errno == EPIPE) return status;  // a reader that stopped early (`gpubench --list | head`) had enough
    std::cerr << "gpubench: cannot write the answer to standard output: " << std::strerror(errno) << "\n";
    return 2;
  }
  return status;
}

bool has_flag(const std::vector<std::string>& flags, const std::string& name) {
  for (const auto& f : flags)
    if (f.rfind(name + "=", 0) == 0) return true;
  return false;
}

// Control characters of the user's input (a newline in --device, ESC in --filter) are written
// escaped, \n or \x1b, so the message stays one line and cannot drive the terminal.
std::string visible(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

int usage_error(const std::string& what) {
  std::cerr << "gpubench: " << visible(what) << "\n\n" << usage_text();
  return 2;
}

// The rows of a backend kind that --validate, --row-scope and --filter leave.
std::vector<BenchCase> chosen_rows(const SweepOptions& sweep, const std::string& kind, const Options& o) {
  const NameFilter filter(o.filter);  // linear time, never Google Benchmark's backtracking std::regex
  std::vector<BenchCase> table = all_cases(sweep);
  if (o.validate) table = acceptance_rows(table, kind);
  std::vector<BenchCase> rows;
  for (auto& c : table)
    if (filter.matches(c.name()) && in_row_scope(c, o.row_scope)) rows.push_back(std::move(c));
  return rows;
}

// What narrowed the rows besides the filter (" in --row-scope=links", " among --validate's
// rows"), for the line saying none are left.
std::string scope_note(const Options& o) {
  std::string note =
      o.row_scope == Options::RowScope::all ? "" : std::string(" in --row-scope=") + row_scope_name(o.row_scope);
  if (o.validate) note += " among --validate's rows";
  return note;
}

// --list --device=N where no GPU is usable: the CUDA rows (what would run on a GPU) on stdout,
// sized for a device of unknown L2 and memory, and one line on stderr saying why they cannot run
// here. Returns the exit status.
int list_cuda_rows_without_device(const Options& o, const std::string& device, const std::string& reason) {
  std::vector<BenchCase> rows = chosen_rows(sweep_options(DeviceDescription{}, "cuda", o.quick), "cuda", o);
#ifdef GPUBENCH_HAVE_CUDA
  // Not the rows the CUDA backend declares it never runs (the host's memcpy stand-ins): those
  // would be skips on any GPU. A compute capability above every GPU's keeps the rows of new ones.
  const WorkloadTable table = cuda_workloads();
  constexpr int kNewestComputeCapability = 1000;
  rows.erase(std::remove_if(
                 rows.begin(), rows.end(),
                 [&](const BenchCase& c) { return !table.unavailable_reason(c, kNewestComputeCapability).empty(); }),
             rows.end());
#endif
  for (const BenchCase& c : rows) std::cout << c.name() << "\n";
  if (rows.empty())
    return usage_error("--filter=" + o.filter + " matches no benchmark of the cuda backend" + scope_note(o));
  std::cerr << "gpubench: --device=" << device << ": " << reason
            << "; these are the CUDA rows (sizes for an unknown L2 and memory), they cannot run here\n";
  return answered(0);
}

// --device=all: one child gpubench per usable GPU and phase (harness/all_devices.h). With
// --list and no usable GPU, the CUDA rows, as --device=N --list gives them.
int run_all_devices(const std::vector<std::string>& args, const Options& o) {
  std::string reason;
  const int count = usable_cuda_devices(&reason);
  if (count == 0) {
    if (o.list) return list_cuda_rows_without_device(o, "all", reason);
    std::cerr << "gpubench: --device=all: " << reason << "\n";
    return 2;
  }
  const auto plan = plan_all_devices(args, o, count);
  // The files the runs will write must not exist yet (results are never overwritten).
  for (const auto& phase : plan) {
    for (const DeviceRun& run : phase) {
      for (const std::string& a : run.args) {
        if (a.rfind("--out=", 0) == 0 && ::access(a.c_str() + 6, F_OK) == 0) {
          return usage_error("--out: '" + a.substr(6) + "' (GPU " + std::to_string(run.device) +
                             "'s file) already exists (result files are never overwritten)");
        }
      }
    }
  }
  return run_device_plan(plan, "/proc/self/exe");
}

// The rows the filter selects. When listing, only those the backend runs (--list's meaning);
// when running, also those it declares unavailable, which land in the result as skips with
// their reason. Empty (with *error set) when nothing would run.
std::vector<BenchCase> select_rows(const Backend& backend, const Options& o, std::string* error) {
  std::vector<BenchCase> rows;
  std::string first_unavailable;
  bool any_runs = false;
  for (auto& c : chosen_rows(sweep_options(backend.device(), backend.kind(), o.quick), backend.kind(), o)) {
    const std::string why = backend.unavailable_reason(c);
    if (why.empty()) any_runs = true;
    if (!why.empty() && first_unavailable.empty()) first_unavailable = c.name() + ": " + why;
    if (why.empty() || !o.list) rows.push_back(std::move(c));
  }
  if (!any_runs) {
    *error = "--filter=" + o.filter + " matches no benchmark the " + backend.kind() + " backend runs" + scope_note(o) +
             (first_unavailable.empty() ? std::string(" (see --list)") : " (" + first_unavailable + ")");
    rows.clear();
  }
  return rows;
}

// Where the result goes: --out, or the next name in the results store; written to a temporary
// file first and published only when the run completes. Fails now, with one line, if it cannot
// be written there (a read-only or virtual file system), rather than after the run.
struct Destination {
  std::string final_path;  ///< "" when no file is written
  std::string tmp;
  std::string created_folder;  ///< the store's device-key folder when this run made it, else ""
  bool usage = false;          ///< the error is the user's path (shown with the usage), not the store's
};
Destination result_destination(const Backend& backend, const Options& o, std::string* error) {
  Destination d;
  if (o.list) return d;
  d.final_path = o.out;
  if (!o.results_dir.empty()) {
    try {
      bool created = false;
      d.final_path = results_store_path(o.results_dir, backend.device_key(), GPUBENCH_GIT_REVISION, &created);
      if (created) d.created_folder = o.results_dir + "/" + backend.device_key();
    } catch (const std::exception& e) {
      *error = e.what();
      return {};
    }
  }
  if (d.final_path.empty()) return d;
  // Refused before the run, not at its end when the finished result could not take the name.
  const std::size_t slash = d.final_path.find_last_of('/');
  const std::size_t name = slash == std::string::npos ? d.final_path.size() : d.final_path.size() - slash - 1;
  if (const std::size_t most = longest_file_name(d.final_path); name > most) {
    *error = "the result's file name is longer than the " + std::to_string(most) + " bytes a name may have there: '" +
             d.final_path + "'";
    Destination failed;
    failed.usage = true;
    return failed;
  }
  d.tmp = temporary_path_for(d.final_path);
  std::FILE* probe = std::fopen(d.tmp.c_str(), "wx");
  if (probe == nullptr) {
    *error = "cannot write the result next to '" + d.final_path + "': " + std::strerror(errno);
    Destination failed;
    failed.usage = true;
    return failed;
  }
  std::fclose(probe);
  std::remove(d.tmp.c_str());
  return d;
}

// No result: the temporary file goes, and the store folder this run made if it is still empty
// (an interrupted first run of a device left an empty folder in the store).
void discard(const Destination& d) {
  if (!d.tmp.empty()) std::remove(d.tmp.c_str());
  if (!d.created_folder.empty()) (void)::rmdir(d.created_folder.c_str());
}

// gpubench prints its own console table unless --benchmark_format asks for Google Benchmark's
// json or csv (or its console, by name) on stdout.
bool uses_console_table(const Options& o) {
  for (const std::string& p : o.passthrough)
    if (p.rfind("--benchmark_format=", 0) == 0) return false;
  return true;
}

// Google Benchmark's arguments: our defaults unless given, the pass-through flags, and the
// output file. Returns "" or the unrecognized flag. The strings live as long as the process:
// Google Benchmark keeps pointers into them (argv[0] for its "Running ..." line).
// argv[0] as Google Benchmark may write it into the result's "executable": bytes that are not
// UTF-8 text (a Latin-1 folder name) or control characters become '?', or the file would be no
// JSON any reader accepts.
std::string printable_argv0(const char* argv0) {
  std::string out;
  for (const char* p = argv0; *p; ++p) {
    std::size_t len = 1;  // the longest prefix of plain text that starts here
    while (len <= 4 && p[len - 1] != '\0' && !is_plain_text(std::string(p, len))) ++len;
    if (len <= 4 && p[len - 1] != '\0') {
      out.append(p, len);
      p += len - 1;
    } else {
      out += '?';
    }
  }
  return out;
}

std::string init_google_benchmark(const char* argv0, const Options& o, const Destination& dest) {
  static std::vector<std::string> gb;
  gb = {printable_argv0(argv0)};
  if (!has_flag(o.passthrough, "--benchmark_repetitions")) gb.push_back("--benchmark_repetitions=3");
  constexpr bool kMinTimeSuffix = GPUBENCH_GBENCH_MIN_TIME_SUFFIX != 0;
  // A repetition lasts from min_time to about 1.4x it (Google Benchmark's last step up). With
  // --quick 5 ms, two to four samples of kMinSampleSeconds, for a smoke run of every family in
  // under 10 s on an H100; at 0.01 s the timed repetitions of 195 rows alone came to an estimated
  // 8 s (3 x 14 ms a row).
  if (!has_flag(o.passthrough, "--benchmark_min_time"))
    gb.push_back("--benchmark_min_time=" + google_benchmark_min_time(o.quick ? "0.005" : "0.05", kMinTimeSuffix));
  if (!has_flag(o.passthrough, "--benchmark_time_unit")) gb.push_back("--benchmark_time_unit=us");
  // Every registered row runs: gpubench's own filter chose them (--filter, or BENCHMARK_FILTER
  // taken as it). Google Benchmark read BENCHMARK_FILTER into its default before main, so without
  // this flag it filtered again by the variable, over a command line's --filter.
  gb.push_back("--benchmark_filter=.");
  // gpubench's own console table (console_reporter.h) reads every repetition; Google
  // Benchmark's console, asked for with --benchmark_format=console is not, shows aggregates.
  if (!has_flag(o.passthrough, "--benchmark_display_aggregates_only") && !uses_console_table(o))
    gb.push_back("--benchmark_display_aggregates_only=true");
  for (const auto& p : o.passthrough) {
    const std::string min_time = "--benchmark_min_time=";
    gb.push_back(p.rfind(min_time, 0) == 0
                     ? min_time + google_benchmark_min_time(p.substr(min_time.size()), kMinTimeSuffix)
                     : p);
  }
  if (o.list) gb.push_back("--benchmark_list_tests=true");
  if (!dest.tmp.empty()) {
    gb.push_back("--benchmark_out=" + dest.tmp);
    gb.push_back("--benchmark_out_format=json");
  }
  static std::vector<char*> gb_argv;
  gb_argv.clear();
  gb_argv.reserve(gb.size() + 1);
  for (auto& s : gb) gb_argv.push_back(s.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  gb_argv.push_back(nullptr);
  benchmark::Initialize(&gb_argc, gb_argv.data());
  return gb_argc > 1 ? gb_argv[1] : "";
}

// The first SIGINT / SIGTERM asks the run to stop after the current sample; a second one ends
// the process at once, for a sample that never finishes (a hung kernel), removing the partial
// result first. SIGHUP (the terminal closed) and SIGQUIT are taken the same way, and SIGPIPE (the
// reader of the output went away: `gpubench ... | head`) asks for the stop once and is ignored
// after it: every later write to the closed pipe raises it again, which must neither end the
// process at once nor turn an interrupt already asked for into another. The other signals whose
// default action ends a process, and which reach a benchmark in practice, stop it the same way,
// or they left the temporary result behind: SIGUSR1/SIGUSR2 (Slurm's --signal=USR1@N before a
// job's time limit), SIGALRM and SIGVTALRM (a timer of a wrapper), SIGXCPU (`ulimit -t`) and
// SIGXFSZ (`ulimit -f`: the write then fails instead, and the result is not published; like
// SIGPIPE, asking once and ignored after). A
// signal the parent ignored (nohup's SIGHUP) stays ignored. Only async-signal-safe calls in the
// handler.
constexpr int kStopSignals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,   SIGPIPE, SIGUSR1,
                                SIGUSR2, SIGALRM, SIGXCPU, SIGVTALRM, SIGXFSZ};
char g_partial_result[4096] = {};  // the temporary result file ("" when none)
char g_created_folder[4096] = {};  // the store folder this run made ("" when none), removed if left empty
std::atomic<int> g_signals{0};
static_assert(std::atomic<int>::is_always_lock_free, "used from a signal handler");
void on_signal(int sig) {
  // SIGPIPE and SIGXFSZ come again with every later write (to the closed pipe, past the file size
  // limit): the first asks for the stop, the rest are no second signal from anyone.
  if (sig == SIGPIPE || sig == SIGXFSZ) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    (void)sigaction(sig, &ignore, nullptr);
    if (interrupt_signal() == 0) request_interrupt(sig);
    return;
  }
  if (g_signals.fetch_add(1) == 0) {
    request_interrupt(sig);
    return;
  }
  if (g_partial_result[0] != '\0') (void)::unlink(g_partial_result);
  if (g_created_folder[0] != '\0') (void)::rmdir(g_created_folder);  // only when empty
  static const char kMessage[] = "gpubench: stopped at once by a second signal; no result written\n";
  (void)!::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  ::_exit(128 + sig);
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGPIPE: return "SIGPIPE";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGALRM: return "SIGALRM";
    case SIGXCPU: return "SIGXCPU";
    case SIGVTALRM: return "SIGVTALRM";
    case SIGXFSZ: return "SIGXFSZ";
    default: return "signal";
  }
}

// Runs the registered benchmarks (on `console` when given, else Google Benchmark's display),
// `partial_result` being the temporary file they write to (or ""). The stop signals: see
// on_signal. Returns the number run.
std::size_t run_benchmarks(benchmark::BenchmarkReporter* console, const std::string& partial_result,
                           const std::string& created_folder) {
  if (partial_result.size() < sizeof g_partial_result)
    std::memcpy(g_partial_result, partial_result.c_str(), partial_result.size() + 1);
  if (created_folder.size() < sizeof g_created_folder)
    std::memcpy(g_created_folder, created_folder.c_str(), created_folder.size() + 1);
  struct sigaction on_signal_action {};
  on_signal_action.sa_handler = on_signal;
  on_signal_action.sa_flags = SA_RESTART;
  sigemptyset(&on_signal_action.sa_mask);
  for (const int sig : kStopSignals) {
    struct sigaction inherited {};
    if (sigaction(sig, nullptr, &inherited) == 0 && inherited.sa_handler == SIG_IGN) continue;
    sigaction(sig, &on_signal_action, nullptr);
  }
  const std::size_t ran = console ? benchmark::RunSpecifiedBenchmarks(console) : benchmark::RunSpecifiedBenchmarks();
  release_cached_workload();
  benchmark::Shutdown();
  return ran;
}

// The leak check, once every workload is released (run_benchmarks): the memory in use against
// the start's. Its figures go into the result's context, which Google Benchmark wrote at the
// start of the file; a file they cannot be added to is published as it is, saying so.
MemoryCheck check_memory_at_end(Backend& backend, const std::optional<MemoryReading>& start, const Destination& dest,
                                bool device_hung) {
  // A hung device is not asked (a reading may wait for it), and what its lost workload holds
  // is no leak.
  const std::optional<MemoryReading> end = device_hung ? std::nullopt : backend.memory_reading();
  MemoryCheck check = check_memory(start, end);
  if (device_hung) check.summary = "not checked: the device hung";
  std::string error;
  if (!dest.tmp.empty() && !add_context_entries_to_file(dest.tmp, end_memory_context(end, check), &error))
    std::cerr << "gpubench: the memory at the end of the run is not in the result's context (" << error
              << "); the result is published without it\n";
  return check;
}

// Moves the finished result into place: --out never under another name; the results store
// under the next free name if a concurrent run took this one. Returns the exit status.
int publish_result(const Options& o, const Destination& dest, std::string* published_path) {
  if (dest.tmp.empty()) return 0;
  std::string error;
  const std::string published = o.results_dir.empty()
                                    ? (publish_file(dest.tmp, dest.final_path, &error) ? dest.final_path : "")
                                    : publish_store_file(dest.tmp, dest.final_path, &error);
  if (published.empty()) {
    std::cerr << "gpubench: " << error << "; the result is kept in '" << dest.tmp << "'\n";
    return 2;
  }
  std::cerr << "result: " << published << "\n";
  *published_path = published;
  return 0;
}

// The exit status from what happened while running: 1 when a benchmark failed or the device
// was lost, 0 otherwise. Says how many benchmarks failed (and in how many runs), naming the first.
int report_outcome(const RunOutcome& outcome) {
  if (!outcome.device_lost.empty()) std::cerr << "gpubench: device lost: " << outcome.device_lost << "\n";
  if (outcome.failed > 0) {
    const std::size_t benchmarks = outcome.failed_benchmarks.size();
    std::cerr << "gpubench: " << benchmarks << (benchmarks == 1 ? " benchmark" : " benchmarks") << " failed ("
              << outcome.failed << (outcome.failed == 1 ? " run" : " runs") << "; see error_message in the results)";
    if (benchmarks > 0) std::cerr << ", first " << outcome.failed_benchmarks.front();
    std::cerr << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int run_app(int argc, char** argv) { return run_app(argc, argv, &host_workloads); }

// Google Benchmark also takes each of its flags from an environment variable, BENCHMARK_<NAME>
// (a flag on the command line wins), read when the program starts: read past gpubench they
// skipped every check (BENCHMARK_CONTEXT=device_key=forged replaced gpubench's own key). Each one
// set is checked as if its flag were given, and, unless its flag is on the command line, taken as
// that flag and passed on (and left out of the environment of any run started from here).
bool given_on_command_line(const std::vector<std::string>& args, const std::string& flag) {
  for (const std::string& a : args) {
    if (a.rfind("--benchmark_" + flag + "=", 0) == 0) return true;
    if (flag == "filter" && a.rfind("--filter=", 0) == 0) return true;
    if (flag == "out" && a.rfind("--out=", 0) == 0) return true;
  }
  return false;
}

std::string take_benchmark_environment(std::vector<std::string>* args) {
  static const char* const kFlags[] = {"filter",
                                       "min_time",
                                       "min_warmup_time",
                                       "repetitions",
                                       "enable_random_interleaving",
                                       "report_aggregates_only",
                                       "display_aggregates_only",
                                       "format",
                                       "out_format",
                                       "out",
                                       "color",
                                       "counters_tabular",
                                       "perf_counters",
                                       "context",
                                       "time_unit",
                                       "list_tests"};
  for (const char* f : kFlags) {
    std::string var = "BENCHMARK_";
    for (const char* c = f; *c; ++c) var += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    const char* value = std::getenv(var.c_str());
    if (value == nullptr) continue;
    const std::string flag = std::string("--benchmark_") + f + "=" + value;
    ::unsetenv(var.c_str());
    // A value the command line overrides is still checked (BENCHMARK_MIN_TIME=-1 beside
    // --benchmark_min_time ran with no word about it), but for a file name: the command line's
    // stands, and whatever is at the variable's name is no concern of this run.
    const bool overridden = given_on_command_line(*args, f);
    if (overridden && std::string(f) == "out") continue;
    // Named here: "--out and --results-dir are exclusive" would name a flag nobody typed.
    if (!overridden && std::string(f) == "out" && std::any_of(args->begin(), args->end(), [](const std::string& a) {
          return a.rfind("--results-dir", 0) == 0;
        })) {
      std::string why = "environment variable " + var;
      why += " (Google Benchmark's --benchmark_out) and --results-dir are exclusive: unset ";
      why += var;
      why += " or drop --results-dir";
      return why;
    }
    try {
      (void)parse_cli({flag});
    } catch (const UsageError& e) {
      return "environment variable " + var + ": " + e.what();
    }
    if (!overridden) args->push_back(flag);
  }
  return {};
}

namespace {
// A standard descriptor closed by the caller (`gpubench >&-`, some daemon wrappers) would be the
// next file opened - the temporary result - and the console table would be written into it (the
// run then lost as "not written whole"): /dev/null takes its place before anything is opened.
void keep_standard_descriptors_open() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);  // the lowest free: fd
    if (opened >= 0 && opened != fd) {
      dup2(opened, fd);
      close(opened);
    }
  }
}
}  // namespace

int run_app(int argc, char** argv, HostWorkloadSource host_table) {
  keep_standard_descriptors_open();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (const std::string why = take_benchmark_environment(&args); !why.empty()) return usage_error(why);
  if (const std::string why = check_environment(); !why.empty()) return usage_error(why);
  Options o;
  try {
    o = parse_cli(args);
  } catch (const UsageError& e) {
    return usage_error(e.what());
  }
  if (o.help) {
    std::cout << usage_text();
    return answered(0);
  }
  if (o.version) {
    std::cout << "gpubench " << GPUBENCH_VERSION << " (" << GPUBENCH_GIT_REVISION << ")\n";
    return answered(0);
  }
  if (o.device.kind == DeviceChoice::Kind::all) return run_all_devices(args, o);
  if (o.list && o.device.kind == DeviceChoice::Kind::index) {
    std::string reason;
    if (usable_cuda_devices(&reason) == 0)
      return list_cuda_rows_without_device(o, std::to_string(o.device.index), reason);
  }

  std::unique_ptr<Backend> backend;
  std::string note;  // "no usable GPU ...": printed once the arguments are known to be good
  try {
    backend = select_backend(o.device, &note, host_table);
  } catch (const UsageError& e) {
    return usage_error(e.what());
  } catch (const DeviceUnavailable& e) {
    std::cerr << "gpubench: " << e.what() << "\n";
    return 2;
  }

  // A --benchmark_context key among what this device's context holds (the device-dependent keys
  // parse_cli could not know: ECC, PCIe, NVML readings) would be written twice.
  {
    const auto ours = result_context(*backend, o.quick, std::nullopt);
    for (const auto& [key, value] : user_context(o))
      if (ours.count(key) != 0)
        return usage_error("--benchmark_context: '" + key + "' is written by gpubench and cannot be set");
  }

  std::string error;
  const std::vector<BenchCase> rows = select_rows(*backend, o, &error);
  // A GPU of --device=all whose scope holds none of the rows has nothing to do; anyone else is told.
  if (rows.empty() && o.row_scope != Options::RowScope::all && started_by_device_all()) return kNothingInScope;
  if (rows.empty()) return usage_error(error);
  // The GPU's NUMA node, once the run is known to have rows here (not for --list) and before any
  // buffer is allocated, so pinned and pageable memory land there. --numa-bind says in one line
  // what it did or why it could not (no GPU, unknown node) and the run goes on; by default a
  // binding, or a failed attempt, is one line, and a machine where binding cannot matter (one
  // NUMA node, no GPU) says nothing.
  std::string numa_bind = "off (--no-numa-bind)";
  if (o.list) {
    numa_bind = "not asked (--list)";
  } else if (o.numa_bind == Options::NumaBind::on) {
    const pcie::BindResult bound = pcie::bind_to_gpu_node(backend->gpu_numa_node(), pcie::kSysfsRoot);
    std::cerr << "gpubench: " << bound.message << "\n";
    numa_bind = bound.message;
  } else if (o.numa_bind == Options::NumaBind::automatic) {
    const pcie::BindResult bound = pcie::auto_bind_to_gpu_node(backend->gpu_numa_node(), pcie::kSysfsRoot);
    if (bound.ok || bound.message.find("cannot bind") != std::string::npos)
      std::cerr << "gpubench: NUMA " << bound.message << " (--no-numa-bind leaves the CPU affinity as it is)\n";
    numa_bind = bound.message;
  }

  RunOutcome outcome;
  const int registered = register_cases(*backend, rows, outcome);
  const Destination dest = result_destination(*backend, o, &error);
  if (!error.empty()) {
    if (dest.usage) return usage_error(error);
    std::cerr << "gpubench: " << error << "\n";
    return 2;
  }
  if (!note.empty()) std::cerr << note << "\n";
  const std::string unrecognized = init_google_benchmark(argv[0], o, dest);
  if (!unrecognized.empty()) return usage_error("unrecognized flag '" + unrecognized + "'");
  std::optional<MemoryReading> memory_start;
  if (!o.list) {
    memory_start = backend->memory_reading();
    publish_context(*backend, o.quick, memory_start);
    benchmark::AddCustomContext("numa_bind", numa_bind);
    // Which rows this file holds: a --device=all GPU writes its own rows and its link rows apart.
    benchmark::AddCustomContext("row_scope", row_scope_name(o.row_scope));
    benchmark::AddCustomContext("validate", o.validate ? "true" : "false");
  }

  std::unique_ptr<ConsoleReporter> console;
  if (!o.list && uses_console_table(o)) {
    const bool terminal = ::isatty(STDERR_FILENO) != 0;
    const bool progress =
        o.progress == Options::Progress::on || (o.progress == Options::Progress::automatic && terminal);
    console = std::make_unique<ConsoleReporter>(console_header(result_context(*backend, o.quick, memory_start)),
                                                registered, progress, terminal);
  }
  const std::size_t ran = run_benchmarks(console.get(), dest.tmp, dest.created_folder);
  // After work that never finished, nothing that waits for the device may run: not the leak
  // check's reading, not the destructors that free its memory and streams. The process ends
  // here, once what can be said and published is.
  const auto finish = [&outcome](int status) {
    if (outcome.device_hung) {
      std::cout.flush();
      std::cerr << "gpubench: the device is left running work that never finished; exiting without releasing it\n";
      std::cerr.flush();
      std::_Exit(status);
    }
    return status;
  };
  if (const int sig = interrupt_signal(); sig != 0) {
    discard(dest);
    std::cerr << "gpubench: interrupted (" << signal_name(sig) << "); no result written\n";
    return finish(128 + sig);
  }
  if (ran == 0) {
    discard(dest);
    return finish(usage_error("--filter=" + o.filter + " matches no benchmark on the " + backend->kind() +
                              " backend (see --list)"));
  }
  // What watching the device cost (NVML readings in a background thread): a figure to check on
  // a new driver, since some NVML queries hold driver locks.
  if (const std::string cost = backend->telemetry_cost(); !o.list && !cost.empty())
    std::cerr << "gpubench: " << cost << "\n";
  // A result the reporter could not write whole (a full disk) is not published as one.
  if (std::string why; !dest.tmp.empty() && !whole_json_document(dest.tmp, &why)) {
    discard(dest);  // a cut document is no result, and no file is left half written
    std::cerr << "gpubench: the result was not written whole (is the disk full?): " << why << "; nothing published\n";
    return finish(2);
  }
  MemoryCheck memory;
  if (!o.list) memory = check_memory_at_end(*backend, memory_start, dest, outcome.device_hung);
  std::string published;
  if (const int status = publish_result(o, dest, &published); status != 0) return finish(status);
  if (console) {
    for (const std::string& line :
         closing_summary(console->lines(), {published, !dest.tmp.empty(), backend->kind() == "host",
                                            static_cast<double>(backend->device().l2_bytes)}))
      std::cout << line << "\n";
    std::cout.flush();
  }
  const int status = report_outcome(outcome);
  if (!memory.note.empty()) std::cerr << memory.note << "\n";
  if (memory.leaked) {
    std::cerr << memory.line << "\n";
    return finish(1);
  }
  return finish(o.list ? answered(status) : status);
}

}  // namespace gpubench
