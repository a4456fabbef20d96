// Whether a result file is one whole JSON document (harness/json_syntax.h), and the check a run
// makes before publishing it (results_store.h whole_json_document): every cut of a real Google
// Benchmark document is refused, whatever byte it stops at, and so is a link in the file's place.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "harness/json_syntax.h"
#include "harness/results_store.h"

namespace gpubench {
namespace {

// As Google Benchmark's JSON reporter writes a result (its NaN and Infinity included), with the
// escapes and number forms a result can hold.
const std::string kDocument = R"({
  "context": {
    "date": "2026-11-25T01:00:00+00:00",
    "host_name": "node \"7\"\\a\u00e9\t",
    "gpubench_device_name": "H100 \u2122",
    "library_build_type": "release"
  },
  "benchmarks": [
    {
      "name": "bandwidth/copy/kernel/bytes:4KiB",
      "run_type": "iteration",
      "repetitions": 3,
      "real_time": 1.2345678901234567e+03,
      "cpu_time": -0.5E-2,
      "GB/s": 0,
      "pct_of_cublas": NaN,
      "limit": Infinity,
      "floor": -Infinity,
      "flags": [true, false, null, [], {}],
      "time_unit": "ns"
    },
    {"name": "b", "real_time": 10}
  ]
}
)";

TEST(JsonSyntax, AcceptsAGoogleBenchmarkDocument) {
  EXPECT_EQ(json_syntax_error(kDocument), "");
  EXPECT_EQ(json_syntax_error("  {}  \n"), "");
  EXPECT_EQ(json_syntax_error("[1, -0, 0.5, 2e9, \"\\u00FF\"]"), "");
}

TEST(JsonSyntax, RefusesEveryCutOfTheDocument) {
  // The trailing newline and the final brace aside, each prefix ends part way: in a string, a
  // number, a literal, between entries, right after an entry's closing brace.
  const std::size_t whole = kDocument.find_last_of('}') + 1;
  for (std::size_t cut = 0; cut < whole; ++cut) {
    const std::string why = json_syntax_error(kDocument.substr(0, cut));
    EXPECT_NE(why, "") << "a cut at byte " << cut << " passed: ..." << kDocument.substr(cut > 40 ? cut - 40 : 0, 40);
  }
  const std::size_t after_entry = kDocument.find("},\n    {\"name\": \"b\"") + 1;
  EXPECT_EQ(json_syntax_error(kDocument.substr(0, after_entry)),
            "ends part way through (" + std::to_string(after_entry) + " bytes)");
}

TEST(JsonSyntax, RefusesWhatIsNotJson) {
  for (const char* bad : {"{\"a\": 1,}",
                          "{\"a\" 1}",
                          "{\"a\": 01}",
                          "{\"a\": 1.}",
                          "{\"a\": .5}",
                          "{\"a\": +1}",
                          "{\"a\": \"x\ny\"}",
                          "{\"a\": \"\\x\"}",
                          "{\"a\": \"\\u12G4\"}",
                          "{a: 1}",
                          "[1 2]",
                          "[1,]",
                          "{\"a\": nan}",
                          "{\"a\": inf}",
                          "{\"a\": tru}",
                          "{} {}",
                          "{}x",
                          "[}",
                          "{]",
                          "",
                          "   ",
                          "{\"a\": [1, {\"b\": 2]}}"}) {
    EXPECT_NE(json_syntax_error(bad), "") << bad;
  }
  EXPECT_EQ(json_syntax_error("{\"a\": 1,}"), "'}' at byte 8 where a key belongs");
  EXPECT_EQ(json_syntax_error("{} {}"), "'{' at byte 3 where the end of the document belongs");
}

TEST(JsonSyntax, AnyDepthWithoutRecursion) {
  const std::size_t depth = 1'000'000;
  const std::string deep = std::string(depth, '[') + std::string(depth, ']');
  EXPECT_EQ(json_syntax_error(deep), "");
  EXPECT_NE(json_syntax_error(deep.substr(0, deep.size() - 1)), "");
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

TEST(WholeJsonDocument, AResultCutRightAfterAnEntryIsNotWhole) {
  // What a full disk (or a file size limit) left and the old check passed: it starts with '{',
  // ends with '}' and holds "benchmarks": [.
  const std::size_t after_entry = kDocument.find("},\n    {\"name\": \"b\"") + 1;
  const std::string path = write("gpubench_cut_after_entry.json", kDocument.substr(0, after_entry));
  std::string error;
  EXPECT_FALSE(whole_json_document(path, &error));
  EXPECT_NE(error.find("ends part way through (" + std::to_string(after_entry) + " bytes)"), std::string::npos)
      << error;
  const std::string ok = write("gpubench_whole.json", kDocument);
  EXPECT_TRUE(whole_json_document(ok, &error)) << error;
  const std::string other = write("gpubench_not_a_result.json", "{\"a\": []}");
  EXPECT_FALSE(whole_json_document(other, &error));
  EXPECT_NE(error.find("holds no Google Benchmark result"), std::string::npos) << error;
  for (const auto& p : {path, ok, other}) std::remove(p.c_str());
}

TEST(WholeJsonDocument, ALinkInTheResultsPlaceIsRefused) {
  const std::string target = write("gpubench_link_target.json", kDocument);
  const std::string link = testing::TempDir() + "gpubench_link.json.tmp.1";
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  std::string error;
  EXPECT_FALSE(whole_json_document(link, &error));
  EXPECT_NE(error.find("is not the regular file the run wrote"), std::string::npos) << error;
  ::unlink(link.c_str());
  std::remove(target.c_str());
}

}  // namespace
}  // namespace gpubench
