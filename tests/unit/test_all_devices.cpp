// --device=all: the plan of child runs (each GPU's own rows on all GPUs at once, then the rows
// on shared links one GPU at a time; --one-at-a-time runs each GPU whole), and the runner of the
// plan against a stand-in program that records when each run starts and ends.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "harness/all_devices.h"

namespace gpubench {
namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

TEST(AllDevices, OwnRowsTogetherThenLinkRowsOneGpuAtATime) {
  const std::vector<std::string> args = {"--device=all", "--filter=bandwidth", "--results-dir=/tmp"};
  Options o;
  o.device.kind = DeviceChoice::Kind::all;
  o.results_dir = "/tmp";
  const auto plan = plan_all_devices(args, o, 3);
  ASSERT_EQ(plan.size(), 4u);
  ASSERT_EQ(plan[0].size(), 3u);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(joined(plan[0][d].args),
              "--filter=bandwidth --results-dir=/tmp --device=" + std::to_string(d) + " --row-scope=local");
    ASSERT_EQ(plan[1 + d].size(), 1u);
    EXPECT_EQ(joined(plan[1 + d][0].args),
              "--filter=bandwidth --results-dir=/tmp --device=" + std::to_string(d) + " --row-scope=links");
  }
}

TEST(AllDevices, OneAtATimeAndOutFilesPerGpuAndPhase) {
  const std::vector<std::string> args = {"--device=all", "--one-at-a-time", "--out=/tmp/r.json"};
  Options o;
  o.device.kind = DeviceChoice::Kind::all;
  o.one_at_a_time = true;
  o.out = "/tmp/r.json";
  const auto serial = plan_all_devices(args, o, 2);
  ASSERT_EQ(serial.size(), 2u);
  EXPECT_EQ(joined(serial[1][0].args), "--out=/tmp/r.device1.json --device=1");
  o.one_at_a_time = false;
  const auto phased = plan_all_devices({"--device=all", "--out=/tmp/r.json"}, o, 2);
  EXPECT_EQ(joined(phased[0][1].args), "--out=/tmp/r.device1.local.json --device=1 --row-scope=local");
  EXPECT_EQ(joined(phased[2][0].args), "--out=/tmp/r.device1.links.json --device=1 --row-scope=links");
  // A --row-scope given with --device=all keeps only that phase.
  o.row_scope = Options::RowScope::links;
  const auto links = plan_all_devices({"--device=all", "--row-scope=links"}, o, 3);
  ASSERT_EQ(links.size(), 3u);
  EXPECT_EQ(joined(links[2][0].args), "--device=2 --row-scope=links");
  o.row_scope = Options::RowScope::local;
  const auto local = plan_all_devices({"--device=all", "--row-scope=local"}, o, 3);
  ASSERT_EQ(local.size(), 1u);
  EXPECT_EQ(local[0].size(), 3u);
  o.row_scope = Options::RowScope::all;
  // A folder whose name holds ".json" is not cut at it.
  o.out = "/tmp/r.json.d/out";
  EXPECT_EQ(joined(plan_all_devices({"--device=all", "--out=/tmp/r.json.d/out"}, o, 2)[1][0].args),
            "--out=/tmp/r.json.d/out.device0.links.json --device=0 --row-scope=links");
  o.out = "/tmp/r.json";
  // One GPU: nothing to share, one run of everything.
  const auto single = plan_all_devices({"--device=all"}, o, 1);
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(joined(single[0][0].args), "--device=0");
}

// A stand-in for gpubench: appends "start <args>" and "end <args>" to a log, 0.3 s apart (a
// GPU's own rows only once both GPUs' have started, or after 10 s: run one after the other, they
// would wait that long; at once, a slow start of one does not make them look sequential), prints
// "output of <args>" and, on stderr, "result: <args>" (where gpubench names its result) - except GPU 0's own rows,
// which print nothing and exit 4 (nothing in that scope, as gpubench does); GPU 1's own rows exit 1.
std::string write_stand_in(const std::string& dir) {
  const std::string path = dir + "/stand_in.sh";
  const std::string log = dir + "/log";
  std::ofstream(path) << "#!/bin/sh\n"
                      << "echo \"start $*\" >> " << log << "\n"
                      << "case \"$*\" in *--row-scope=local*) i=0\n"
                      << "  while [ \"$(grep -c '^start .*row-scope=local' " << log
                      << ")\" -lt 2 ] && [ $i -lt 200 ]; do\n"
                      << "    sleep 0.05; i=$((i + 1)); done;; esac\n"
                      << "sleep 0.3\n"
                      << "echo \"end $*\" >> " << log << "\n"
                      << "case \"$*\" in *--device=0*--row-scope=local*) exit 4;; esac\n"
                      << "echo \"output of $*\"\n"
                      << "echo \"result: $*\" >&2\n"
                      << "case \"$*\" in *--device=1*--row-scope=local*) exit 1;; esac\n"
                      << "exit 0\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(AllDevices, APhaseRunsAtOnceAndTheWorstStatusWins) {
  char dir_template[] = "/tmp/gpubench-all-XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  const std::string program = write_stand_in(dir);
  Options o;
  o.device.kind = DeviceChoice::Kind::all;
  const auto plan = plan_all_devices({"--device=all"}, o, 2);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const auto t0 = std::chrono::steady_clock::now();
  const int status = run_device_plan(plan, program);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "after the plan\n";  // still printed: a silent run must not silence std::cout
  const std::string err = testing::internal::GetCapturedStderr();
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(status, 1);  // GPU 1's own rows failed; GPU 0's "nothing in scope" is not an error
  // Two runs at once, then two one after another: about 3 x 0.3 s, far from the 10 s the local
  // runs would have waited for each other one after the other (the log's order below is the
  // proof; this bound leaves a loaded machine seconds of room).
  EXPECT_LT(seconds, 5.0) << out;
  EXPECT_GE(seconds, 0.85) << out;
  // A captured run printed under a line naming its GPU; a run that printed nothing, not at all;
  // the one-run phases straight through, in GPU order.
  EXPECT_EQ(out.find("== GPU 0 (local rows) =="), std::string::npos) << out;
  const auto gpu1 = out.find("== GPU 1 (local rows) ==\noutput of --device=1 --row-scope=local");
  const auto links0 = out.find("== GPU 0 (links rows) ==\noutput of --device=0 --row-scope=links");
  const auto links1 = out.find("== GPU 1 (links rows) ==\noutput of --device=1 --row-scope=links");
  EXPECT_NE(gpu1, std::string::npos) << out;
  EXPECT_NE(links0, std::string::npos) << out;
  EXPECT_NE(links1, std::string::npos) << out;
  EXPECT_LT(gpu1, links0);
  EXPECT_LT(links0, links1);
  EXPECT_NE(out.find("after the plan"), std::string::npos) << out;
  // Each stream stays itself: the captured run's "result:" line on stderr under its GPU's line,
  // where run.sh and nightly.py read result lines (on stdout, run.sh drew none of that phase).
  EXPECT_EQ(out.find("result:"), std::string::npos) << out;
  EXPECT_NE(err.find("== GPU 1 (local rows) ==\nresult: --device=1 --row-scope=local"), std::string::npos) << err;
  EXPECT_NE(err.find("result: --device=0 --row-scope=links"), std::string::npos) << err;
  EXPECT_EQ(err.find("== GPU 0 (local rows) =="), std::string::npos) << err;
  std::ifstream log(dir + "/log");
  std::stringstream all;
  all << log.rdbuf();
  // The two local runs both started before either ended; the link runs one after the other.
  const std::string text = all.str();
  EXPECT_LT(text.find("start --device=1 --row-scope=local"), text.find("end --device=0 --row-scope=local")) << text;
  EXPECT_LT(text.find("end --device=0 --row-scope=links"), text.find("start --device=1 --row-scope=links")) << text;
  std::remove((dir + "/log").c_str());
  std::remove(program.c_str());
  ::rmdir(dir.c_str());
}

TEST(AllDevices, NoRunWithRowsIsAnError) {
  char dir_template[] = "/tmp/gpubench-all-XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  const std::string program = dir + "/nothing.sh";
  std::ofstream(program) << "#!/bin/sh\nexit 4\n";
  ::chmod(program.c_str(), 0755);
  Options o;
  o.device.kind = DeviceChoice::Kind::all;
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_device_plan(plan_all_devices({"--device=all"}, o, 2), program), 2);
  (void)testing::internal::GetCapturedStdout();
  EXPECT_NE(testing::internal::GetCapturedStderr().find("selects no benchmark any GPU runs"), std::string::npos);
  std::remove(program.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace gpubench
