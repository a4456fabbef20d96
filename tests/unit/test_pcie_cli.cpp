// --numa-bind and --no-numa-bind on the command line: switches without a value, neither by
// default (automatic), exclusive, in --help.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/cli.h"

namespace gpubench {
namespace {

TEST(PcieCli, NumaBindIsAutomaticUnlessAskedOrRefused) {
  EXPECT_EQ(parse_cli({}).numa_bind, Options::NumaBind::automatic);
  EXPECT_EQ(parse_cli({"--device=host", "--quick"}).numa_bind, Options::NumaBind::automatic);
  const Options o = parse_cli({"--numa-bind", "--filter=bandwidth/pcie", "--device=0"});
  EXPECT_EQ(o.numa_bind, Options::NumaBind::on);
  EXPECT_EQ(o.filter, "bandwidth/pcie");
  EXPECT_EQ(o.device.kind, DeviceChoice::Kind::index);
  EXPECT_EQ(parse_cli({"--no-numa-bind", "--device=0"}).numa_bind, Options::NumaBind::off);
  for (const std::vector<std::string>& both : {std::vector<std::string>{"--numa-bind", "--no-numa-bind"},
                                               std::vector<std::string>{"--no-numa-bind", "--numa-bind"}}) {
    try {
      parse_cli(both);
      FAIL() << both[0] << " " << both[1] << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "--numa-bind and --no-numa-bind are exclusive");
    }
  }
}

TEST(PcieCli, NumaBindTakesNoValue) {
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--numa-bind=1"}, std::vector<std::string>{"--numa-bind=0"},
        std::vector<std::string>{"--no-numa-bind=1"}, std::vector<std::string>{"--numa"}}) {
    try {
      parse_cli(bad);
      FAIL() << bad[0] << " was accepted";
    } catch (const UsageError& e) {
      const std::string want = bad[0] == "--numa"                       ? "unknown flag"
                               : bad[0].rfind("--no-numa-bind", 0) == 0 ? "--no-numa-bind takes no value"
                                                                        : "--numa-bind takes no value";
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

TEST(PcieCli, HelpDocumentsIt) {
  const std::string help = usage_text();
  const auto at = help.find("--numa-bind");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(help.find("NUMA node", at), std::string::npos);
  EXPECT_NE(help.find("--no-numa-bind"), std::string::npos);
}

}  // namespace
}  // namespace gpubench
