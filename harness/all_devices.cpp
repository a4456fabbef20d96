#include "harness/all_devices.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

extern char** environ;

namespace gpubench {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

const char* row_scope_name(Options::RowScope s) {
  switch (s) {
    case Options::RowScope::local: return "local";
    case Options::RowScope::links: return "links";
    case Options::RowScope::all: break;
  }
  return "all";
}

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> child_args(const std::vector<std::string>& args, const Options& o, int device,
                                    Options::RowScope scope) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    if (starts_with(a, "--device=") || starts_with(a, "--row-scope=") || a == "--one-at-a-time") continue;
    if (!o.out.empty() && (starts_with(a, "--out=") || starts_with(a, "--benchmark_out="))) {
      const std::string stem = ends_with(o.out, ".json") ? o.out.substr(0, o.out.size() - 5) : o.out;
      const std::string phase = scope == Options::RowScope::all ? "" : std::string(".") + row_scope_name(scope);
      std::string file = "--out=" + stem;
      file.append(".device").append(std::to_string(device)).append(phase).append(".json");
      out.push_back(file);
      continue;
    }
    out.push_back(a);
  }
  out.push_back("--device=" + std::to_string(device));
  if (scope != Options::RowScope::all) out.push_back(std::string("--row-scope=") + row_scope_name(scope));
  return out;
}

struct Child {
  pid_t pid = 0;
  std::string out_log;  // the run's standard output, "" when printing straight through
  std::string err_log;  // its standard error, likewise
};

// This process's environment and the marker that makes a run a GPU of --device=all: this
// process's id, which the child compares with its parent's (a marker left in a shell's
// environment by hand names no parent of the run that inherits it). A marker this process
// inherited itself is not passed on.
std::vector<char*> child_environment() {
  static std::string marker = std::string(kDeviceAllChild) + "=" + std::to_string(::getpid());
  const std::string inherited = std::string(kDeviceAllChild) + "=";
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::string(*e).rfind(inherited, 0) != 0) env.push_back(*e);
  env.push_back(marker.data());
  env.push_back(nullptr);
  return env;
}

Child start(const std::string& program, const DeviceRun& run, bool capture) {
  Child child;
  std::vector<char*> env = child_environment();
  std::vector<std::string> argv_strings = {program};
  argv_strings.insert(argv_strings.end(), run.args.begin(), run.args.end());
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Captured, each stream to its own file: stderr carries the "result: PATH" lines that run.sh
  // and nightly.py read there, so it must not end up on stdout.
  int fds[2] = {-1, -1};
  if (capture) {
    std::string* logs[2] = {&child.out_log, &child.err_log};
    const int targets[2] = {STDOUT_FILENO, STDERR_FILENO};
    for (int k = 0; k < 2; ++k) {
      char path[] = "/tmp/gpubench-device-XXXXXX";
      fds[k] = ::mkstemp(path);
      if (fds[k] < 0) continue;
      *logs[k] = path;
      posix_spawn_file_actions_adddup2(&actions, fds[k], targets[k]);
      posix_spawn_file_actions_addclose(&actions, fds[k]);
    }
  }
  if (posix_spawn(&child.pid, program.c_str(), &actions, nullptr, argv.data(), env.data()) != 0) child.pid = 0;
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  posix_spawn_file_actions_destroy(&actions);
  return child;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// The text of a captured stream's file, which is removed ("" for none).
std::string take_log(const std::string& log) {
  if (log.empty()) return "";
  std::string text;
  {
    std::ifstream in(log);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::remove(log.c_str());
  return text;
}

// A captured run's output and errors, each on its own stream under a line naming its GPU; nothing
// for a stream the run printed nothing on (an empty scope prints nothing at all). Read whole:
// streaming an empty buffer into std::cout would set its failbit and silence everything after it.
void print_logs(const DeviceRun& run, const Child& child) {
  const std::string header = "== GPU " + std::to_string(run.device) + " (" + row_scope_name(run.scope) + " rows) ==\n";
  if (const std::string out = take_log(child.out_log); !out.empty()) std::cout << header << out << std::flush;
  if (const std::string err = take_log(child.err_log); !err.empty()) std::cerr << header << err << std::flush;
}

}  // namespace

std::vector<std::vector<DeviceRun>> plan_all_devices(const std::vector<std::string>& args, const Options& o,
                                                     int device_count) {
  std::vector<std::vector<DeviceRun>> plan;
  const auto run = [&](int device, Options::RowScope scope) {
    return DeviceRun{device, scope, child_args(args, o, device, scope)};
  };
  if (o.one_at_a_time || device_count == 1) {
    for (int d = 0; d < device_count; ++d) plan.push_back({run(d, o.row_scope)});
    return plan;
  }
  if (o.row_scope != Options::RowScope::links) {
    std::vector<DeviceRun> together;
    together.reserve(static_cast<std::size_t>(device_count));
    for (int d = 0; d < device_count; ++d) together.push_back(run(d, Options::RowScope::local));
    plan.push_back(together);
  }
  if (o.row_scope != Options::RowScope::local)
    for (int d = 0; d < device_count; ++d) plan.push_back({run(d, Options::RowScope::links)});
  return plan;
}

int run_device_plan(const std::vector<std::vector<DeviceRun>>& plan, const std::string& program) {
  int worst = 0;
  int with_rows = 0;
  for (const auto& phase : plan) {
    const bool capture = phase.size() > 1;
    std::vector<Child> children;
    for (const DeviceRun& run : phase) {
      if (!capture)
        std::cout << "== GPU " << run.device << " (" << row_scope_name(run.scope) << " rows) ==\n" << std::flush;
      children.push_back(start(program, run, capture));
    }
    for (std::size_t i = 0; i < phase.size(); ++i) {
      int code = 1;
      if (children[i].pid != 0) {
        code = wait_for(children[i].pid);
      } else {
        std::cerr << "gpubench: cannot start the run for GPU " << phase[i].device << "\n";
      }
      print_logs(phase[i], children[i]);
      if (code == kNothingInScope) continue;
      ++with_rows;
      worst = std::max(worst, code);
    }
  }
  if (with_rows == 0) {
    std::cerr << "gpubench: --device=all: the filter selects no benchmark any GPU runs (see --list)\n";
    return 2;
  }
  return worst;
}

bool started_by_device_all() {
  const char* marker = std::getenv(kDeviceAllChild);
  return marker != nullptr && std::string(marker) == std::to_string(::getppid());
}

}  // namespace gpubench
