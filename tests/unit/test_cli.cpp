// Command-line parsing: the contract flags and every bad input the issue lists.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "harness/cli.h"

namespace gpubench {
namespace {

Options parse(std::vector<std::string> a) { return parse_cli(a); }

TEST(Cli, Defaults) {
  const Options o = parse({});
  EXPECT_EQ(o.device.kind, DeviceChoice::Kind::automatic);
  EXPECT_TRUE(o.filter.empty());
  EXPECT_FALSE(o.quick);
  EXPECT_FALSE(o.list);
}

TEST(Cli, ContractFlags) {
  const Options o = parse({"--filter=bandwidth", "--quick", "--list", "--device=host"});
  EXPECT_EQ(o.filter, "bandwidth");
  EXPECT_TRUE(o.quick);
  EXPECT_TRUE(o.list);
  EXPECT_EQ(o.device.kind, DeviceChoice::Kind::host);
  EXPECT_EQ(parse({"--device=3"}).device.index, 3);
  EXPECT_EQ(parse({"--device=3"}).device.kind, DeviceChoice::Kind::index);
  EXPECT_EQ(parse({"--device=all"}).device.kind, DeviceChoice::Kind::all);
  EXPECT_EQ(parse({"--benchmark_filter=compute"}).filter, "compute");
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"--version"}).version);
}

TEST(Cli, BenchmarkFlagsPassThrough) {
  const Options o = parse({"--benchmark_repetitions=5", "--benchmark_enable_random_interleaving=true"});
  ASSERT_EQ(o.passthrough.size(), 2u);
  EXPECT_EQ(o.passthrough[0], "--benchmark_repetitions=5");
}

TEST(Cli, BadInputIsAUsageError) {
  EXPECT_THROW(parse({"--frobnicate"}), UsageError);
  EXPECT_THROW(parse({"--device=gpu"}), UsageError);
  EXPECT_THROW(parse({"--device=-1"}), UsageError);
  EXPECT_THROW(parse({"--device="}), UsageError);
  EXPECT_THROW(parse({"--filter=("}), UsageError);
  EXPECT_THROW(parse({"--filter=[a-"}), UsageError);
  EXPECT_THROW(parse({"--out=/no/such/dir/r.json"}), UsageError);
  EXPECT_THROW(parse({"stray"}), UsageError);
  EXPECT_THROW(parse({"--benchmark_repetitions"}), UsageError);
  EXPECT_THROW(parse({"--benchmark_out_format=csv"}), UsageError);
  EXPECT_THROW(parse({"--results-dir=/no/such/dir"}), UsageError);
  EXPECT_THROW(parse({"--out=a.json", "--results-dir=."}), UsageError);
  EXPECT_THROW(parse({"--one-at-a-time"}), UsageError);  // applies to --device=all only
  EXPECT_THROW(parse({"--row-scope=both"}), UsageError);
}

// A switch given twice or with a value, a valued flag without one: each named in one line.
TEST(Cli, SwitchesAndValuedFlagsSayWhatIsWrong) {
  const auto message = [](std::vector<std::string> args) {
    try {
      parse(args);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message({"--validate", "--validate"}), "--validate given twice");
  EXPECT_EQ(message({"--quick", "--quick"}), "--quick given twice");
  EXPECT_EQ(message({"--validate=1"}), "--validate takes no value");
  EXPECT_EQ(message({"--device=all", "--one-at-a-time=yes"}), "--one-at-a-time takes no value");
  EXPECT_EQ(message({"--row-scope"}), "--row-scope needs a value (--row-scope=VALUE)");
  EXPECT_EQ(message({"--device"}), "--device needs a value (--device=VALUE)");
  EXPECT_EQ(message({"--device=all", "--one-at-a-time", "--row-scope=links", "--validate"}), "accepted");
}

// Google Benchmark flags it would abort on, accept silently or answer with its usage and exit 0;
// repeated flags; pathological filters that overflow std::regex's recursion.
TEST(Cli, HostileInputIsAUsageError) {
  for (const char* bad :
       {"--benchmark_repetitions=-1", "--benchmark_repetitions=0", "--benchmark_repetitions=x",
        "--benchmark_min_time=-1", "--benchmark_min_time=0", "--benchmark_min_time=nan", "--benchmark_format=bogus",
        "--benchmark_time_unit=xs", "--benchmark_list_tests=true", "--benchmark_context=backend=fake",
        "--benchmark_context=a=1,device_key=x", "--benchmark_enable_random_interleaving=maybe"}) {
    EXPECT_THROW(parse({bad}), UsageError) << bad;
  }
  EXPECT_NO_THROW(parse({"--benchmark_context=site=lab1,rack=7", "--benchmark_min_time=0.5", "--benchmark_format=json",
                         "--benchmark_time_unit=ms"}));
  EXPECT_THROW(parse({"--filter=a", "--filter=b"}), UsageError);
  EXPECT_THROW(parse({"--filter=a", "--benchmark_filter=b"}), UsageError);
  EXPECT_THROW(parse({"--out=a.json", "--benchmark_out=b.json"}), UsageError);
  EXPECT_THROW(parse({"--benchmark_repetitions=2", "--benchmark_repetitions=3"}), UsageError);
  EXPECT_THROW(parse({"--list", "--out=a.json"}), UsageError);
  EXPECT_THROW(parse({"--list", "--results-dir=."}), UsageError);
  EXPECT_THROW(parse({"--filter=" + std::string(100000, 'a')}), UsageError);
  EXPECT_THROW(parse({"--filter=" + std::string(20000, '(') + std::string(20000, ')')}), UsageError);
  EXPECT_NO_THROW(parse({"--filter=((a|b)|(c))"}));
  try {
    parse({"--benchmark_repetitions=-1"});
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--benchmark_repetitions: '-1' is not a whole number from 1 to 100000");
  }
  try {
    parse({"--filter=x", "--filter=y"});
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--filter given twice");
  }
}

TEST(Cli, ErrorMessagesNameTheProblem) {
  try {
    parse({"--frobnicate=1"});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown flag '--frobnicate'");
  }
  try {
    parse({"--out=/no/such/dir/r.json"});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/dir"), std::string::npos);
  }
  // A missing store is not "not a directory"; a file is.
  try {
    parse({"--results-dir=/no/such/store"});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--results-dir: '/no/such/store' does not exist");
  }
  const std::string file = testing::TempDir() + "gpubench_cli_a_file";
  std::ofstream(file) << "x";
  try {
    parse({"--results-dir=" + file});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--results-dir: '" + file + "' is not a directory");
  }
  // strtod's 1e7 is a number: the refusal says the bound it broke.
  try {
    parse({"--benchmark_min_time=1e7"});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--benchmark_min_time: '1e7' is not a number of seconds above 0 and at most 1e6 (e.g. 0.5 or 0.5s)");
  }
}

// Google Benchmark 1.8 reads "0.5s" (and logs a line per benchmark for a bare "0.5"); 1.7 reads
// "0.5" only: either form is taken, and passed on as the linked library reads it.
TEST(Cli, MinTimeInSecondsBareOrWithAnSSuffix) {
  EXPECT_NO_THROW(parse({"--benchmark_min_time=0.5s"}));
  EXPECT_NO_THROW(parse({"--benchmark_min_time=2"}));
  for (const char* bad : {"--benchmark_min_time=100x", "--benchmark_min_time=s", "--benchmark_min_time=0.5ss",
                          "--benchmark_min_time=0.5 s", "--benchmark_min_time=0s", "--benchmark_min_time=2e6s"})
    EXPECT_THROW(parse({bad}), UsageError) << bad;
  EXPECT_EQ(google_benchmark_min_time("0.5s", false), "0.5");
  EXPECT_EQ(google_benchmark_min_time("0.5", false), "0.5");
  EXPECT_EQ(google_benchmark_min_time("0.5", true), "0.5s");
  EXPECT_EQ(google_benchmark_min_time("0.5s", true), "0.5s");
}

// strtod reads hexadecimal, inf and nan: "0x10" was taken as 16 seconds.
TEST(Cli, SecondsArePlainDecimals) {
  for (const char* good : {"0.5", "5", "5.", ".5", "1e-2", "1E+3", "2.5e1"})
    EXPECT_TRUE(plain_decimal(good).has_value()) << good;
  EXPECT_DOUBLE_EQ(*plain_decimal("2.5e1"), 25.0);
  for (const char* bad :
       {"", ".", "0x10", "inf", "nan", "1e", "1e+", "e3", "-1", "+1", " 1", "1 ", "1..2", "1e3e2", "1e400"})
    EXPECT_FALSE(plain_decimal(bad).has_value()) << bad;
  EXPECT_THROW(parse({"--benchmark_min_time=0x10"}), UsageError);
  EXPECT_THROW(parse({"--benchmark_min_warmup_time=0x1"}), UsageError);
  EXPECT_NO_THROW(parse({"--benchmark_min_time=.5s"}));
  EXPECT_EQ(device_wait_seconds("30").value_or(0), 30.0);
  for (const char* bad : {"0", "1e7", "abc", "0x10", "-5"}) EXPECT_FALSE(device_wait_seconds(bad).has_value()) << bad;
}

TEST(Cli, NumbersWithLeadingWhiteSpaceAreRefusedAsTrailingOnesAre) {
  // strtol and strtod skip leading white space: ' 3' and '\n3' were taken, '3 ' refused.
  for (const char* bad : {"--benchmark_repetitions= 3", "--benchmark_repetitions=\n3", "--benchmark_repetitions=3 ",
                          "--benchmark_min_time= 0.5", "--benchmark_min_warmup_time=\t1"}) {
    EXPECT_THROW(parse({bad}), UsageError) << bad;
  }
  EXPECT_NO_THROW(parse({"--benchmark_repetitions=3", "--benchmark_min_time=0.5", "--benchmark_min_warmup_time=1"}));
}

TEST(Cli, NeverOverwritesAnExistingResult) {
  const std::string path = testing::TempDir() + "gpubench_cli_existing.json";
  std::ofstream(path) << "{}";
  EXPECT_THROW(parse({"--out=" + path}), UsageError);
  std::remove(path.c_str());
  EXPECT_NO_THROW(parse({"--out=" + path}));
}

TEST(Cli, UsageMentionsEveryFlag) {
  const std::string u = usage_text();
  for (const char* f : {"--filter", "--list", "--device", "--out", "--quick", "--help", "--version", "--benchmark_"})
    EXPECT_NE(u.find(f), std::string::npos) << f;
}

}  // namespace
}  // namespace gpubench
