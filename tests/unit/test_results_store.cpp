// Result files are published atomically and never overwritten.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <fstream>

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
