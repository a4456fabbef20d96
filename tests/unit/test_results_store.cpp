// Result files are published atomically and never overwritten.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "harness/results_store.h"

namespace gpubench {
namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

TEST(ResultsStore, PublishNeverReplaces) {
  const std::string dir = testing::TempDir();
  const std::string final_path = dir + "gpubench_store_test.json";
  std::remove(final_path.c_str());
  const std::string tmp = temporary_path_for(final_path);
  std::ofstream(tmp) << "first";
  std::string error;
  ASSERT_TRUE(publish_file(tmp, final_path, &error)) << error;
  EXPECT_FALSE(exists(tmp));
  std::ofstream(tmp) << "second";
  EXPECT_FALSE(publish_file(tmp, final_path, &error));
  EXPECT_NE(error.find("never overwritten"), std::string::npos);
  std::ifstream in(final_path);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "first");
  EXPECT_TRUE(exists(tmp));  // the new result is kept, not lost
  std::remove(tmp.c_str());
  std::remove(final_path.c_str());
}

// A name near NAME_MAX: its temporary is a short name in the same folder, so link() still works
// and the run can publish under the name it was given.
TEST(ResultsStore, TemporaryOfANameAtTheLimitIsShortAndBesideIt) {
  const std::string dir = testing::TempDir();
  const std::size_t most = longest_file_name(dir + "x.json");  // NAME_MAX: 255 on ext4, tmpfs, xfs
  ASSERT_GE(most, 16U);
  const std::string short_name = dir + "r.json";
  EXPECT_EQ(temporary_path_for(short_name).rfind(short_name + ".tmp.", 0), 0U) << temporary_path_for(short_name);
  const std::string at_limit = dir + std::string(most - 5, 'r') + ".json";
  const std::string tmp = temporary_path_for(at_limit);
  EXPECT_EQ(tmp.rfind(dir + ".gpubench-result.json.tmp.", 0), 0U) << tmp;
  std::ofstream(tmp) << "result";
  std::string error;
  ASSERT_TRUE(publish_file(tmp, at_limit, &error)) << error;
  EXPECT_TRUE(exists(at_limit));
  EXPECT_FALSE(exists(tmp));
  std::remove(at_limit.c_str());
}

// Runs that finish in the same second into one store: each lands, under the next free name.
TEST(ResultsStore, ConcurrentRunsAllLand) {
  const std::string dir = testing::TempDir();
  const std::string final_path = dir + "20261123T000000Z_abc.json";
  for (const char* n : {"", "-2", "-3"}) std::remove((dir + "20261123T000000Z_abc" + n + ".json").c_str());
  std::vector<std::string> published;
  for (int run = 0; run < 3; ++run) {
    const std::string tmp = final_path + ".tmp.run" + std::to_string(run);
    std::ofstream(tmp) << "run" << run;
    std::string error;
    published.push_back(publish_store_file(tmp, final_path, &error));
    EXPECT_FALSE(published.back().empty()) << error;
    EXPECT_FALSE(exists(tmp));
  }
  EXPECT_EQ(published[0], final_path);
  EXPECT_EQ(published[1], dir + "20261123T000000Z_abc-2.json");
  EXPECT_EQ(published[2], dir + "20261123T000000Z_abc-3.json");
  std::ifstream in(published[2]);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "run2");  // nothing overwritten: each file holds its own run
  for (const auto& p : published) std::remove(p.c_str());
  std::string error;
  EXPECT_EQ(publish_store_file(dir + "no-such-tmp", final_path, &error), "");
  EXPECT_NE(error.find("cannot create"), std::string::npos);
}

// A run whose name already had a suffix when it started ("-3") and finds it taken at the end
// counts on from the same stem: "-4", never "-3-2" (the store's readers skip such names).
TEST(ResultsStore, ASuffixedNameTakenMeanwhileGetsTheNextCount) {
  const std::string dir = testing::TempDir();
  const std::string stem = dir + "20261124T000000Z_abc123-dirty";
  for (const char* n : {"", "-2", "-3", "-4", "-3-2"}) std::remove((stem + n + ".json").c_str());
  for (const char* n : {"", "-2", "-3"}) std::ofstream(stem + n + ".json") << "earlier";
  const std::string tmp = stem + "-3.json.tmp.late";
  std::ofstream(tmp) << "late";
  std::string error;
  EXPECT_EQ(publish_store_file(tmp, stem + "-3.json", &error), stem + "-4.json") << error;
  EXPECT_FALSE(exists(stem + "-3-2.json"));
  std::ifstream in(stem + "-3.json");
  std::string text;
  in >> text;
  EXPECT_EQ(text, "earlier");
  for (const char* n : {"", "-2", "-3", "-4"}) std::remove((stem + n + ".json").c_str());
}

// Every count to 1000 is tried, the last one included.
TEST(ResultsStore, TheLastCountIsTriedToo) {
  const std::string dir = testing::TempDir() + "store_last_count/";
  ::mkdir(dir.c_str(), 0700);
  const std::string stem = dir + "20261124T000000Z_abc";
  for (int n = 1; n <= 1000; ++n) std::remove((stem + (n == 1 ? "" : "-" + std::to_string(n)) + ".json").c_str());
  for (int n = 1; n < 1000; ++n) std::ofstream(stem + (n == 1 ? "" : "-" + std::to_string(n)) + ".json") << "x";
  const std::string tmp = stem + ".json.tmp.last";
  std::ofstream(tmp) << "last";
  std::string error;
  EXPECT_EQ(publish_store_file(tmp, stem + "-999.json", &error), stem + "-1000.json") << error;
  for (int n = 1; n <= 1000; ++n) std::remove((stem + (n == 1 ? "" : "-" + std::to_string(n)) + ".json").c_str());
  ::rmdir(dir.c_str());
}

TEST(ResultsStore, PathsByDeviceKeyAndTime) {
  const std::string dir = testing::TempDir();
  const std::string p1 = results_store_path(dir, "test_device_key", "abc123");
  EXPECT_NE(p1.find("/test_device_key/"), std::string::npos);
  EXPECT_NE(p1.find("Z_abc123.json"), std::string::npos);
  std::ofstream(p1) << "{}";
  const std::string p2 = results_store_path(dir, "test_device_key", "abc123");
  EXPECT_NE(p1, p2);  // the same second: a suffix, never the same name
  std::remove(p1.c_str());
}

}  // namespace
}  // namespace gpubench
