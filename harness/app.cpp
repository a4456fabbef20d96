#include "harness/app.h"

#include <benchmark/benchmark.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "harness/cli.h"
#include "harness/context.h"
#include "harness/device_select.h"
#include "harness/families/families.h"
#include "harness/name_filter.h"
#include "harness/pcie/pcie_context.h"
#include "harness/results_store.h"
#include "harness/runner.h"
#include "version.h"

extern char** environ;

namespace gpubench {

namespace {

bool has_flag(const std::vector<std::string>& flags, const std::string& name) {
  for (const auto& f : flags)
    if (f.rfind(name + "=", 0) == 0) return true;
  return false;
}

int usage_error(const std::string& what) {
  std::cerr << "gpubench: " << what << "\n\n" << usage_text();
  return 2;
}

// --device=all: one child gpubench per usable GPU, each writing its own result file.
int run_all_devices(const std::vector<std::string>& args, const Options& o) {
  std::string reason;
  const int count = usable_cuda_devices(&reason);
  if (count == 0) {
    std::cerr << "gpubench: --device=all: " << reason << "\n";
    return 2;
  }
  int worst = 0;
  for (int i = 0; i < count; ++i) {
    std::vector<std::string> child = {"/proc/self/exe"};
    for (const auto& a : args) {
      if (a.rfind("--device=", 0) == 0) {
        child.push_back("--device=" + std::to_string(i));
      } else if (!o.out.empty() && (a.rfind("--out=", 0) == 0 || a.rfind("--benchmark_out=", 0) == 0)) {
        const auto dot = o.out.rfind(".json");
        const std::string base = dot == std::string::npos ? o.out : o.out.substr(0, dot);
        child.push_back("--out=" + base + ".device" + std::to_string(i) + ".json");
      } else {
        child.push_back(a);
      }
    }
    std::vector<char*> cargv;
    cargv.reserve(child.size() + 1);
    for (auto& s : child) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, cargv.data(), environ) != 0) {
      std::cerr << "gpubench: cannot start the run for device " << i << "\n";
      return 1;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    worst = std::max(worst, code);
  }
  return worst;
}

}  // namespace

int run_app(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Options o;
  try {
    o = parse_cli(args);
  } catch (const UsageError& e) {
    return usage_error(e.what());
  }
  if (o.help) {
    std::cout << usage_text();
    return 0;
  }
  if (o.version) {
    std::cout << "gpubench " << GPUBENCH_VERSION << " (" << GPUBENCH_GIT_REVISION << ")\n";
    return 0;
  }
  if (o.device.kind == DeviceChoice::Kind::all) return run_all_devices(args, o);

  std::unique_ptr<Backend> backend;
  std::string note;  // "no usable GPU ...": printed once the arguments are known to be good
  try {
    backend = select_backend(o.device, &note);
  } catch (const UsageError& e) {
    return usage_error(e.what());
  } catch (const DeviceUnavailable& e) {
    std::cerr << "gpubench: " << e.what() << "\n";
    return 2;
  }

  // --numa-bind: before any buffer is allocated, so pinned memory lands on the GPU's node. Not
  // binding (no GPU, unknown node) is said in one line and the run goes on unbound.
  std::string numa_bind = "off";
  if (o.numa_bind) {
    const pcie::BindResult bound = pcie::bind_to_gpu_node(backend->context(), pcie::kSysfsRoot);
    std::cerr << "gpubench: " << bound.message << "\n";
    numa_bind = bound.message;
  }

  SweepOptions sweep;
  sweep.quick = o.quick;
  sweep.backend_kind = backend->kind();
  sweep.l2_bytes = backend->device().l2_bytes;
  sweep.memory_bytes = backend->device().memory_bytes;
  sweep.traffic = traffic_geometry(backend->device(), backend->kind() == "host");
  // Only the benchmarks the filter selects are registered (matched in linear time here, never
  // by Google Benchmark's backtracking std::regex).
  const NameFilter filter(o.filter);
  std::vector<BenchCase> cases;
  for (auto& c : all_cases(sweep))
    if (backend->supports(c) && filter.matches(c.name())) cases.push_back(std::move(c));
  if (cases.empty())
    return usage_error("--filter=" + o.filter + " matches no benchmark on the " + backend->kind() +
                       " backend (see --list)");
  RunOutcome outcome;
  register_cases(*backend, cases, outcome);

  // Where Google Benchmark writes: a temporary file, published only when the run completes.
  std::string final_path = o.out;
  if (!o.results_dir.empty() && !o.list) {
    try {
      final_path = results_store_path(o.results_dir, backend->device_key(), GPUBENCH_GIT_REVISION);
    } catch (const std::exception& e) {
      std::cerr << "gpubench: " << e.what() << "\n";
      return 2;
    }
  }
  const std::string tmp = final_path.empty() ? "" : temporary_path_for(final_path);
  if (!tmp.empty() && !o.list) {
    // Fail now, with one line, if the result cannot be written there (a read-only or virtual
    // file system), rather than after the run.
    std::FILE* probe = std::fopen(tmp.c_str(), "wx");
    if (probe == nullptr) {
      const std::string why = std::strerror(errno);
      return usage_error("cannot write the result next to '" + final_path + "': " + why);
    }
    std::fclose(probe);
    std::remove(tmp.c_str());
  }
  if (!note.empty()) std::cerr << note << "\n";

  std::vector<std::string> gb = {argv[0]};
  if (!has_flag(o.passthrough, "--benchmark_repetitions")) gb.push_back("--benchmark_repetitions=3");
  if (!has_flag(o.passthrough, "--benchmark_min_time"))
    gb.push_back(std::string("--benchmark_min_time=") + (o.quick ? "0.01" : "0.05"));
  if (!has_flag(o.passthrough, "--benchmark_display_aggregates_only"))
    gb.push_back("--benchmark_display_aggregates_only=true");
  for (const auto& p : o.passthrough) gb.push_back(p);
  if (o.list) gb.push_back("--benchmark_list_tests=true");
  if (!tmp.empty() && !o.list) {
    gb.push_back("--benchmark_out=" + tmp);
    gb.push_back("--benchmark_out_format=json");
  }
  std::vector<char*> gb_argv;
  gb_argv.reserve(gb.size() + 1);
  for (auto& s : gb) gb_argv.push_back(s.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  gb_argv.push_back(nullptr);
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (gb_argc > 1) return usage_error(std::string("unrecognized flag '") + gb_argv[1] + "'");

  if (!o.list) {
    publish_context(*backend, o.quick);
    benchmark::AddCustomContext("numa_bind", numa_bind);
  }
  // SIGINT / SIGTERM: finish the current sample, skip the rest, remove the temporary file.
  struct sigaction on_signal {};
  on_signal.sa_handler = [](int sig) { request_interrupt(sig); };
  sigemptyset(&on_signal.sa_mask);
  sigaction(SIGINT, &on_signal, nullptr);
  sigaction(SIGTERM, &on_signal, nullptr);
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks();
  release_cached_workload();
  benchmark::Shutdown();
  if (const int sig = interrupt_signal(); sig != 0) {
    if (!tmp.empty()) std::remove(tmp.c_str());
    std::cerr << "gpubench: interrupted ("
              << (sig == SIGINT    ? "SIGINT"
                  : sig == SIGTERM ? "SIGTERM"
                                   : "signal")
              << "); no result written\n";
    return 128 + sig;
  }
  if (ran == 0) {
    if (!tmp.empty()) std::remove(tmp.c_str());
    return usage_error("--filter=" + o.filter + " matches no benchmark on the " + backend->kind() +
                       " backend (see --list)");
  }
  if (!tmp.empty() && !o.list) {
    std::string error;
    // --out: never another name; the results store: the next free name if a concurrent run
    // took this one.
    const std::string published = o.results_dir.empty() ? (publish_file(tmp, final_path, &error) ? final_path : "")
                                                        : publish_store_file(tmp, final_path, &error);
    if (published.empty()) {
      std::cerr << "gpubench: " << error << "; the result is kept in '" << tmp << "'\n";
      return 2;
    }
    final_path = published;
    std::cerr << "result: " << final_path << "\n";
  }
  if (!outcome.device_lost.empty()) std::cerr << "gpubench: device lost: " << outcome.device_lost << "\n";
  if (outcome.failed > 0) {
    std::cerr << "gpubench: " << outcome.failed << " benchmark run(s) failed (see error_message in the results)\n";
    return 1;
  }
  return 0;
}

}  // namespace gpubench
