// Capacity and leaks (harness/memory_check.h): the leak rule and its line, the context entries,
// their insertion into Google Benchmark's JSON (its own reporter's output included), the host's
// reading of /proc, and the runner's memory_used_bytes counter as Google Benchmark runs it.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "harness/context.h"
#include "harness/host/host_info.h"
#include "harness/memory_check.h"
#include "harness/runner.h"
#include "tests/google_benchmark_run.h"

namespace gpubench {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = kMiB << 10;

MemoryReading reading(std::uint64_t used, std::uint64_t tolerance = 64 * kMiB) {
  MemoryReading r;
  r.total_bytes = 8 * kGiB;
  r.free_bytes = r.total_bytes - used;
  r.used_bytes = used;
  r.used_what = "device memory in use";
  r.leak_tolerance_bytes = tolerance;
  return r;
}

// ---- the rule ----

TEST(LeakCheck, UpToTheToleranceIsNoLeak) {
  for (const std::uint64_t end : {std::uint64_t{0}, 100 * kMiB, 164 * kMiB}) {
    const MemoryCheck m = check_memory(reading(100 * kMiB), reading(end));
    EXPECT_FALSE(m.leaked) << end;
    EXPECT_TRUE(m.line.empty());
    EXPECT_EQ(m.summary.rfind("ok: device memory in use: 100.0 MiB at the start, ", 0), 0u) << m.summary;
  }
  EXPECT_EQ(check_memory(reading(100 * kMiB), reading(164 * kMiB)).summary,
            "ok: device memory in use: 100.0 MiB at the start, 164.0 MiB at the end, tolerance 64.0 MiB");
}

TEST(LeakCheck, OneByteAboveTheToleranceIsALeakNamingStartEndAndTolerance) {
  const MemoryCheck m = check_memory(reading(100 * kMiB), reading(164 * kMiB + 1));
  EXPECT_TRUE(m.leaked);
  EXPECT_EQ(m.summary, "leak: device memory in use: 100.0 MiB at the start, 164.0 MiB at the end, tolerance 64.0 MiB");
  const MemoryCheck big = check_memory(reading(512 * kMiB, 800 * kMiB), reading(2048 * kMiB, 800 * kMiB));
  EXPECT_TRUE(big.leaked);
  EXPECT_EQ(big.line,
            "gpubench: memory leak: device memory in use grew from 512.0 MiB at the start of the run to 2048.0 MiB at "
            "its end (+1536.0 MiB), more than the tolerance of 800.0 MiB: a benchmark kept memory after its workload "
            "was released");
  EXPECT_EQ(big.line.find('\n'), std::string::npos);
}

TEST(LeakCheck, TheStartReadingsToleranceApplies) {
  EXPECT_FALSE(check_memory(reading(0, 200 * kMiB), reading(150 * kMiB, 0)).leaked);
  EXPECT_TRUE(check_memory(reading(0, 100 * kMiB), reading(150 * kMiB, 1000 * kMiB)).leaked);
}

// Device-wide memory that grew while another process used the device (a monitoring agent, a
// second job) is not this run's leak: said in a note, not failed; without them it is a leak.
TEST(LeakCheck, GrowthWhileOtherProcessesUsedTheDeviceIsANoteNotALeak) {
  for (const bool at_start : {true, false}) {
    MemoryReading start = reading(100 * kMiB), end = reading(900 * kMiB);
    (at_start ? start : end).shared_with = "1 (pids 4242)";
    const MemoryCheck m = check_memory(start, end);
    EXPECT_FALSE(m.leaked);
    EXPECT_TRUE(m.line.empty());
    EXPECT_EQ(m.summary,
              "not attributed: device memory in use: 100.0 MiB at the start, 900.0 MiB at the end, tolerance 64.0 "
              "MiB; other processes used the device: 1 (pids 4242)");
    EXPECT_EQ(m.note,
              "gpubench: note: device memory in use grew by 800.0 MiB over the run while other processes used the "
              "device (1 (pids 4242)): not counted as this run's leak");
  }
  MemoryReading start = reading(100 * kMiB), end = reading(120 * kMiB);
  start.shared_with = "1 (pids 4242)";
  const MemoryCheck within = check_memory(start, end);  // within the tolerance: ok as ever
  EXPECT_FALSE(within.leaked);
  EXPECT_TRUE(within.note.empty());
  EXPECT_EQ(within.summary.rfind("ok: ", 0), 0u);
  EXPECT_TRUE(check_memory(reading(100 * kMiB), reading(900 * kMiB)).leaked);
}

TEST(LeakCheck, WithoutAReadingTheRunIsNotCheckedNotFailed) {
  const MemoryCheck no_end = check_memory(reading(0), std::nullopt);
  EXPECT_FALSE(no_end.leaked);
  EXPECT_EQ(no_end.summary, "not checked: the memory could not be read at the end");
  const MemoryCheck no_start = check_memory(std::nullopt, reading(0));
  EXPECT_FALSE(no_start.leaked);
  EXPECT_EQ(no_start.summary, "not checked: the memory could not be read at the start");
}

TEST(LeakCheck, Tolerances) {
  EXPECT_EQ(kHostLeakToleranceBytes, 64 * kMiB);
  EXPECT_EQ(cuda_leak_tolerance_bytes(0, 0), 64 * kMiB);
  EXPECT_EQ(cuda_leak_tolerance_bytes(4 * kGiB, 0), 64 * kMiB);         // 1 % is 41 MiB: the floor
  EXPECT_EQ(cuda_leak_tolerance_bytes(80 * kGiB, 0), 80 * kGiB / 100);  // an H100: 819.2 MiB
  EXPECT_EQ(cuda_leak_tolerance_bytes(80 * kGiB, 100 * kMiB), 80 * kGiB / 100 + 100 * kMiB);  // + its 2 x L2
  EXPECT_EQ(cuda_leak_tolerance_bytes(4 * kGiB, 8 * kMiB), 72 * kMiB);
}

// ---- context entries ----

TEST(MemoryContext, StartAndEndEntries) {
  MemoryReading r = reading(3 * kGiB);
  EXPECT_EQ(start_memory_context(r),
            (ContextEntries{{"memory_total_bytes", "8589934592"}, {"memory_free_start_bytes", "5368709120"}}));
  EXPECT_EQ(start_memory_context(std::nullopt),
            (ContextEntries{{"memory_total_bytes", "unknown"}, {"memory_free_start_bytes", "unknown"}}));
  MemoryCheck ok;
  ok.summary = "ok: x";
  EXPECT_EQ(end_memory_context(r, ok),
            (ContextEntries{{"memory_free_end_bytes", "5368709120"}, {"memory_leak_check", "ok: x"}}));
  EXPECT_EQ(end_memory_context(std::nullopt, ok)[0].second, "unknown");
}

// A backend whose only purpose is its context.
class ContextBackend final : public Backend {
 public:
  std::string kind() const override { return "host"; }
  const DeviceDescription& device() const override { return device_; }
  const Peaks& peaks() const override { return peaks_; }
  std::string device_key() const override { return "ctx"; }
  std::string unavailable_reason(const BenchCase&) const override { return {}; }
  std::unique_ptr<Workload> create(const BenchCase&) override { return nullptr; }
  std::map<std::string, std::string> context() const override { return {}; }

 private:
  DeviceDescription device_;
  Peaks peaks_;
};

TEST(MemoryContext, ResultContextCarriesTheStartAndEveryMemoryKeyIsReserved) {
  ContextBackend b;
  const auto c = result_context(b, true, reading(kGiB));
  EXPECT_EQ(c.at("memory_total_bytes"), "8589934592");
  EXPECT_EQ(c.at("memory_free_start_bytes"), "7516192768");
  EXPECT_EQ(result_context(b, true).at("memory_free_start_bytes"), "unknown");
  // Reserved: --benchmark_context cannot set them (a duplicate key in the file).
  std::vector<std::string> keys;
  for (const char* const* k = required_context_keys(); *k; ++k) keys.emplace_back(*k);
  for (const char* k : {"memory_total_bytes", "memory_free_start_bytes", "memory_free_end_bytes", "memory_leak_check"})
    EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
}

// ---- insertion into the JSON ----

const ContextEntries kEnd = {{"memory_free_end_bytes", "123"}, {"memory_leak_check", "ok: say \"hi\"\\\n\t"}};
const std::string kEndText =
    "    \"memory_free_end_bytes\": \"123\",\n"
    "    \"memory_leak_check\": \"ok: say \\\"hi\\\"\\\\\\u000a\\u0009\",\n";

TEST(ContextInsertion, AtTheHeadOfTheContextEscapedAndIndentedLikeItsEntries) {
  const std::string head = "{\n  \"context\": {\n";
  const std::string rest = "    \"date\": \"2026-11-23\",\n    \"x\": \"}\"\n  },\n  \"benchmarks\": []\n}\n";
  std::string doc = head + rest;
  std::string error;
  ASSERT_TRUE(insert_context_entries(doc, kEnd, &error)) << error;
  EXPECT_EQ(doc, head + kEndText + rest);
}

TEST(ContextInsertion, IntoAnEmptyContextWithoutATrailingComma) {
  std::string doc = "{\n  \"context\": {\n  },\n  \"benchmarks\": []\n}\n";
  std::string error;
  ASSERT_TRUE(insert_context_entries(doc, {{"a", "1"}, {"b", "2"}}, &error)) << error;
  EXPECT_EQ(doc, "{\n  \"context\": {\n    \"a\": \"1\",\n    \"b\": \"2\"\n  },\n  \"benchmarks\": []\n}\n");
}

TEST(ContextInsertion, OtherLayoutsAreLeftUnchangedWithTheReason) {
  for (const std::string& bad :
       {std::string(""), std::string("[]"), std::string("{\"benchmarks\": []}"),
        std::string("{\n  \"context\": {\"date\": \"x\"}\n}\n"), std::string("{\n  \"context\": {\n    42\n  }\n}\n"),
        std::string("{\n  \"context\": {\n")}) {
    std::string doc = bad;
    std::string error;
    EXPECT_FALSE(insert_context_entries(doc, kEnd, &error)) << bad;
    EXPECT_EQ(doc, bad);
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(ContextInsertion, IntoWhatGoogleBenchmarksOwnJsonReporterWrites) {
  std::ostringstream out, err;
  benchmark::JSONReporter reporter;
  reporter.SetOutputStream(&out);
  reporter.SetErrorStream(&err);
  ASSERT_TRUE(reporter.ReportContext(benchmark::BenchmarkReporter::Context()));
  reporter.ReportRuns({});
  reporter.Finalize();
  const std::string written = out.str();
  std::string doc = written;
  std::string error;
  ASSERT_TRUE(insert_context_entries(doc, kEnd, &error)) << error << "\n" << written.substr(0, 200);
  const std::string head = "{\n  \"context\": {\n";
  ASSERT_EQ(written.rfind(head, 0), 0u) << written.substr(0, 200);
  EXPECT_EQ(doc, head + kEndText + written.substr(head.size()));
  EXPECT_EQ(written.compare(head.size(), 12, "    \"date\": "), 0) << "an entry follows, so the comma is right";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ContextInsertion, TheFileIsReplacedWholeOrLeftAsItWas) {
  const std::string path = testing::TempDir() + "gpubench_memory_context.json";
  const std::string head = "{\n  \"context\": {\n";
  const std::string rest = "    \"date\": \"x\"\n  },\n  \"benchmarks\": []\n}\n";
  { std::ofstream(path, std::ios::binary) << head << rest; }
  std::string error;
  ASSERT_TRUE(add_context_entries_to_file(path, kEnd, &error)) << error;
  EXPECT_EQ(slurp(path), head + kEndText + rest);
  const std::string side = testing::TempDir() + ".gpubench-context.tmp." + std::to_string(::getpid());
  EXPECT_FALSE(std::ifstream(side).good()) << "the side file is gone";

  { std::ofstream(path, std::ios::binary | std::ios::trunc) << "not json"; }
  EXPECT_FALSE(add_context_entries_to_file(path, kEnd, &error));
  EXPECT_EQ(slurp(path), "not json");
  std::remove(path.c_str());

  error.clear();
  EXPECT_FALSE(add_context_entries_to_file(path, kEnd, &error));
  EXPECT_NE(error.find("cannot read"), std::string::npos) << error;
  EXPECT_FALSE(std::ifstream(path).good()) << "no file made up";
}

TEST(ContextInsertion, NeverWritesThroughALinkLeftAtTheSideFilesName) {
  // A link planted where the side file goes (its name is predictable: the folder and the pid)
  // would have had the new document written into its target, and the result published as a link.
  const std::string path = testing::TempDir() + "gpubench_memory_context_link.json";
  const std::string victim = testing::TempDir() + "gpubench_memory_context_victim.txt";
  const std::string side = testing::TempDir() + ".gpubench-context.tmp." + std::to_string(::getpid());
  const std::string doc = "{\n  \"context\": {\n    \"date\": \"x\"\n  },\n  \"benchmarks\": []\n}\n";
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << doc; }
  { std::ofstream(victim, std::ios::binary | std::ios::trunc) << "precious"; }
  ::unlink(side.c_str());
  ASSERT_EQ(::symlink(victim.c_str(), side.c_str()), 0);
  std::string error;
  EXPECT_FALSE(add_context_entries_to_file(path, kEnd, &error));
  EXPECT_NE(error.find("cannot create '" + side + "'"), std::string::npos) << error;
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_EQ(slurp(path), doc) << "the result as it was";
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  ::unlink(side.c_str());
  std::remove(victim.c_str());
  std::remove(path.c_str());
}

// ---- the host's reading ----

TEST(HostMemory, ProcFields) {
  const std::string meminfo = "MemTotal:       16314500 kB\nMemFree:         1000 kB\nMemAvailable:   12000 kB\n";
  EXPECT_EQ(proc_field_bytes(meminfo, "MemTotal"), std::uint64_t{16314500} * 1024);
  EXPECT_EQ(proc_field_bytes(meminfo, "MemAvailable"), std::uint64_t{12000} * 1024);
  EXPECT_EQ(proc_field_bytes(meminfo, "Mem"), std::nullopt);
  EXPECT_EQ(proc_field_bytes(meminfo, "SwapTotal"), std::nullopt);
  const std::string status = "Name:\tgpubench\nVmRSS:\t    5120 kB\nRssAnon:\t    2048 kB\nThreads:\t3\n";
  EXPECT_EQ(proc_field_bytes(status, "RssAnon"), std::uint64_t{2048} * 1024);
  EXPECT_EQ(proc_field_bytes(status, "VmRSS"), std::uint64_t{5120} * 1024);
  EXPECT_EQ(proc_field_bytes(status, "Name"), std::nullopt);
  EXPECT_EQ(proc_field_bytes(status, "Threads"), std::nullopt);                         // no unit
  EXPECT_EQ(proc_field_bytes("RssAnon:\t12 kB", "RssAnon"), std::uint64_t{12} * 1024);  // no final newline
}

// The used figure follows this process's own allocations, and comes back down when they are
// freed, large (mmap) and small (heap, handed back by malloc_trim) alike.
TEST(HostMemory, UsedFollowsThisProcessAndComesBackWhenFreed) {
  const auto start = host_memory_reading();
  ASSERT_TRUE(start.has_value());
  EXPECT_GT(start->total_bytes, 0u);
  EXPECT_LE(start->free_bytes, start->total_bytes);
  EXPECT_GT(start->used_bytes, 0u);
  EXPECT_EQ(start->leak_tolerance_bytes, kHostLeakToleranceBytes);
  {
    std::vector<char> big(128 * kMiB, 1);  // touched: resident
    const auto held = host_memory_reading();
    ASSERT_TRUE(held.has_value());
    EXPECT_GE(held->used_bytes, start->used_bytes + 120 * kMiB);
    EXPECT_EQ(big[12345], 1);
  }
  {
    std::vector<std::unique_ptr<char[]>> small;
    for (int i = 0; i < 100000; ++i) {
      small.emplace_back(new char[1000]);
      small.back()[0] = 1;
      small.back()[999] = 1;
    }
    const auto held = host_memory_reading();
    ASSERT_TRUE(held.has_value());
    EXPECT_GE(held->used_bytes, start->used_bytes + 80 * kMiB);
  }
  const auto end = host_memory_reading();
  ASSERT_TRUE(end.has_value());
  EXPECT_FALSE(check_memory(start, end).leaked) << check_memory(start, end).summary;
  EXPECT_LT(end->used_bytes, start->used_bytes + 16 * kMiB);
}

// ---- the runner's counter ----

// A backend keeping a ledger of its workloads' memory: prepare() takes `prepare_bytes`, the
// first run() a workspace of `workspace_bytes` kept to the end; both are given back when the
// workload is destroyed.
struct Ledger {
  std::uint64_t used = 100 * kMiB;  // what the process holds before any workload
  bool readable = true;
  int readings = 0;
};

class LedgerWorkload final : public Workload {
 public:
  LedgerWorkload(Ledger* ledger, std::uint64_t prepare_bytes, std::uint64_t workspace_bytes)
      : ledger_(ledger), prepare_bytes_(prepare_bytes), workspace_bytes_(workspace_bytes) {}
  ~LedgerWorkload() override { ledger_->used -= held_; }
  LedgerWorkload(const LedgerWorkload&) = delete;
  LedgerWorkload& operator=(const LedgerWorkload&) = delete;
  void prepare() override { take(prepare_bytes_); }
  void poison() override {}
  double run(int batch) override {
    if (!ran_) take(workspace_bytes_);
    ran_ = true;
    return batch * 1e-5;
  }
  Verification verify() override { return Verification::pass(); }

 private:
  void take(std::uint64_t bytes) {
    ledger_->used += bytes;
    held_ += bytes;
  }
  Ledger* ledger_;
  std::uint64_t prepare_bytes_, workspace_bytes_, held_ = 0;
  bool ran_ = false;
};

class LedgerBackend final : public Backend {
 public:
  std::string kind() const override { return "host"; }
  const DeviceDescription& device() const override { return device_; }
  const Peaks& peaks() const override { return peaks_; }
  std::string device_key() const override { return "ledger"; }
  std::string unavailable_reason(const BenchCase&) const override { return {}; }
  std::unique_ptr<Workload> create(const BenchCase& c) override {
    ++creates;
    return std::make_unique<LedgerWorkload>(&ledger, static_cast<std::uint64_t>(c.arg("prepare")),
                                            static_cast<std::uint64_t>(c.arg("workspace")));
  }
  std::map<std::string, std::string> context() const override { return {}; }
  std::optional<MemoryReading> memory_reading() override {
    ++ledger.readings;
    if (!ledger.readable) return std::nullopt;
    return reading(ledger.used);
  }
  Ledger ledger;
  int creates = 0;

 private:
  DeviceDescription device_;
  Peaks peaks_;
};

BenchCase ledger_case(const std::string& variant, std::uint64_t prepare, std::uint64_t workspace) {
  BenchCase c;
  c.family = "bandwidth";
  c.kernel = "copy";
  c.variant = variant;
  c.params = "bytes:test";
  c.args = {{"prepare", static_cast<double>(prepare)}, {"workspace", static_cast<double>(workspace)}};
  c.work = copy_work(static_cast<double>(prepare));
  return c;
}

std::map<std::string, test_run::Runs> run_ledger(LedgerBackend& backend, const std::vector<BenchCase>& rows) {
  RunOutcome outcome;
  test_run::Reported reported = test_run::run_rows(backend, rows, outcome, 3);
  EXPECT_EQ(outcome.failed, 0);
  return reported.by_name;
}

TEST(MemoryUsedCounter, ThePeakOverPrepareAndTheTimedRunsOfEachBenchmarkAlone) {
  LedgerBackend backend;
  const BenchCase big = ledger_case("big", 48 * kMiB, 16 * kMiB);
  const BenchCase small = ledger_case("small", 3 * kMiB, 0);
  const auto runs = run_ledger(backend, {big, small});
  ASSERT_EQ(runs.at(big.name()).size(), 3u);
  for (const auto& r : runs.at(big.name())) EXPECT_EQ(r.counters.at("memory_used_bytes").value, 64.0 * kMiB);
  // The second benchmark starts from what the process held once the first was freed.
  ASSERT_EQ(runs.at(small.name()).size(), 3u);
  for (const auto& r : runs.at(small.name())) EXPECT_EQ(r.counters.at("memory_used_bytes").value, 3.0 * kMiB);
  EXPECT_EQ(backend.creates, 2) << "created once per benchmark, kept across repetitions";
  EXPECT_EQ(backend.ledger.used, 100 * kMiB) << "every workload released";
}

TEST(MemoryUsedCounter, LeftOutWhereTheBackendCannotReadItsMemory) {
  LedgerBackend backend;
  backend.ledger.readable = false;
  const BenchCase row = ledger_case("unread", kMiB, 0);
  const auto runs = run_ledger(backend, {row});
  ASSERT_FALSE(runs.at(row.name()).empty());
  for (const auto& r : runs.at(row.name())) {
    EXPECT_EQ(r.counters.count("memory_used_bytes"), 0u);
    EXPECT_EQ(r.counters.at("verified").value, 1);
  }
}

}  // namespace
}  // namespace gpubench
