// --numa-bind on the command line: a switch without a value, off by default, in --help.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/cli.h"

namespace gpubench {
namespace {

TEST(PcieCli, NumaBindIsAnOptInSwitch) {
  EXPECT_FALSE(parse_cli({}).numa_bind);
  EXPECT_FALSE(parse_cli({"--device=host", "--quick"}).numa_bind);
  const Options o = parse_cli({"--numa-bind", "--filter=bandwidth/pcie", "--device=0"});
  EXPECT_TRUE(o.numa_bind);
  EXPECT_EQ(o.filter, "bandwidth/pcie");
  EXPECT_EQ(o.device.kind, DeviceChoice::Kind::index);
}

TEST(PcieCli, NumaBindTakesNoValue) {
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--numa-bind=1"}, std::vector<std::string>{"--numa-bind=0"},
        std::vector<std::string>{"--numa"}}) {
    try {
      parse_cli(bad);
      FAIL() << bad[0] << " was accepted";
    } catch (const UsageError& e) {
      const std::string want = bad[0] == "--numa" ? "unknown flag" : "--numa-bind takes no value";
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

TEST(PcieCli, HelpDocumentsIt) {
  const std::string help = usage_text();
  const auto at = help.find("--numa-bind");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(help.find("NUMA node", at), std::string::npos);
}

}  // namespace
}  // namespace gpubench
