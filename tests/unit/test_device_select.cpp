// --device=auto on a machine whose NVIDIA driver shows a GPU that CUDA cannot use: an error
// naming the driver and the fix, not a silent run on the host. The driver's view is read from
// /proc and /dev; here from fixture trees.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/device_select.h"
#include "harness/nvidia_driver.h"

namespace gpubench {
namespace {

namespace fs = std::filesystem;

class DriverTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("gpubench_driver_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc" / "driver" / "nvidia" / "gpus");
    fs::create_directories(root_ / "dev");
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string proc() const { return (root_ / "proc").string(); }
  std::string dev() const { return (root_ / "dev").string(); }
  void add_gpu() { fs::create_directories(root_ / "proc" / "driver" / "nvidia" / "gpus" / "0000:3b:00.0"); }
  void write_version(const std::string& line) {
    std::ofstream(root_ / "proc" / "driver" / "nvidia" / "version") << line << "\n";
  }
  fs::path root_;
};

TEST_F(DriverTree, AGpuShowsUnderProcOrAsADeviceNode) {
  EXPECT_FALSE(nvidia_gpu_present(proc(), dev()));  // the module loaded, no GPU listed
  add_gpu();
  EXPECT_TRUE(nvidia_gpu_present(proc(), dev()));
  fs::remove_all(root_ / "proc");
  EXPECT_FALSE(nvidia_gpu_present(proc(), dev()));
  std::ofstream(root_ / "dev" / "nvidia0") << "";
  EXPECT_TRUE(nvidia_gpu_present(proc(), dev()));
}

TEST_F(DriverTree, DriverVersionFromTheKernelModule) {
  EXPECT_EQ(nvidia_driver_version(proc()), "");
  write_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023");
  EXPECT_EQ(nvidia_driver_version(proc()), "535.104.05");
  write_version("garbage without the word");
  EXPECT_EQ(nvidia_driver_version(proc()), "");
}

TEST(AutoFallback, AGpuCudaCannotUseIsAnError) {
  const std::string reason = "NVIDIA driver too old: it supports CUDA 12.2, older than the CUDA runtime 13.0";
  const std::string e = auto_fallback_error(true, "535.104.05", nullptr, reason);
  EXPECT_NE(e.find("an NVIDIA GPU is present (driver 535.104.05)"), std::string::npos) << e;
  EXPECT_NE(e.find(reason), std::string::npos) << e;
  EXPECT_NE(e.find("--device=host"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);  // one line
  // no GPU at all: the host, as before
  EXPECT_EQ(auto_fallback_error(false, "", nullptr, "no NVIDIA driver"), "");
  // GPUs hidden on purpose (CUDA_VISIBLE_DEVICES set): the host
  EXPECT_EQ(auto_fallback_error(true, "580.159.04", "", "no CUDA device"), "");
  EXPECT_EQ(auto_fallback_error(true, "580.159.04", "-1", "no CUDA device"), "");
}

}  // namespace
}  // namespace gpubench
