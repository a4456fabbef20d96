// The host backend runs every memory workload for real at small sizes and verifies them; a
// sabotaged output must fail verification.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include "harness/family.h"
#include "harness/host/host_backend.h"
#include "harness/host/host_info.h"

GPUBENCH_FAMILY(global_memory)

namespace gpubench {
namespace {

TEST(HostBackend, DescribesTheMachine) {
  auto b = make_host_backend(host_workloads());
  EXPECT_EQ(b->kind(), "host");
  EXPECT_GT(b->device().sm_count, 0);
  EXPECT_GT(b->device().memory_bytes, 0u);
  EXPECT_TRUE(RE2::FullMatch(b->device_key(), RE2("^host_[a-z0-9-]+_[0-9]+cpu_[0-9]+GiB$"))) << b->device_key();
  EXPECT_EQ(b->peaks().dram_GBps, 0);  // unknown, never invented
}

TEST(HostBackend, EveryQuickMemoryCaseRunsAndVerifies) {
  auto b = make_host_backend(host_workloads());
  const SweepOptions o = sweep_options(b->device(), "host", true);  // the host's own thread count
  int ran = 0;
  for (const auto& c : families::global_memory::cases(o)) {
    if (!b->supports(c)) continue;
    if (c.args.count("bytes") && c.arg("bytes") > (1 << 20)) continue;  // keep the unit test fast
    auto w = b->create(c);
    w->prepare();
    w->poison();
    EXPECT_FALSE(w->verify().ok) << c.name() << ": a poisoned output must not verify";
    const double s = w->run(2);
    EXPECT_GT(s, 0) << c.name();
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << c.name() << ": " << v.message;
    ++ran;
  }
  EXPECT_GE(ran, 10);
}

TEST(HostBackend, LacksGpuOnlyVariants) {
  auto b = make_host_backend(host_workloads());
  BenchCase c;
  c.family = "bandwidth";
  c.kernel = "copy";
  c.variant = "memcpy_ce";
  EXPECT_FALSE(b->supports(c));
  c.variant = "memcpy";
  EXPECT_TRUE(b->supports(c));
}

TEST(HostInfo, DeviceKeyIsStableAndHasNoSpaces) {
  DeviceDescription d;
  d.name = "Intel(R) Xeon(R) Processor";
  d.sm_count = 2;
  d.memory_bytes = 24ull << 30;
  EXPECT_EQ(host_device_key(d), "host_intel-r-xeon-r-processor_2cpu_24GiB");
}

}  // namespace
}  // namespace gpubench
