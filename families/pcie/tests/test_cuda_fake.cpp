// The CUDA PCIe workloads (families/pcie/cuda.cpp) end to end on the host stand-in for
// the CUDA runtime (fake_cuda_runtime.cpp + families/pcie/tests/fake_runtime.cpp): every CUDA row of the PCIe
// table is prepared, poisoned, warmed up, timed and verified as the runner does it; the timing
// plan (host clock, spin-held chunks, events) is followed; mapped memory reaches kernels only
// through its device address; errors (wrong data, a spin kernel that timed out, no mapping, no
// pinned memory) behave as documented; nothing leaks. And the link probe reads sysfs fixtures.
// What this cannot check: the GPU (holding a stream, real transfer speed, real timing).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "families/pcie/tests/fake_runtime.h"
#include "families/pcie/transfer_plan.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/pcie_probe.h"
#include "harness/cuda/timing.h"
#include "harness/family.h"
#include "tests/cuda/fake_backend.h"
#include "tests/cuda/fake_cuda_runtime.h"
#include "tests/sysfs_fixtures.h"

GPUBENCH_FAMILY(pcie)

namespace gpubench {
namespace {

using fake_backend::find_case;
using fake_backend::run_like_the_runner;

// The full sweep's rows up to 16 MiB: the sizes these tests take (64 KiB and 1 MiB among them,
// which --quick no longer runs), none of the 256 MiB and 1 GiB buffers.
std::vector<BenchCase> small_pcie_cases() {
  SweepOptions o;
  o.backend_kind = "cuda";
  std::vector<BenchCase> small;
  for (BenchCase& c : families::pcie::cases(o))
    if (c.arg("bytes") <= 16.0 * 1024 * 1024) small.push_back(std::move(c));
  return small;
}

class FakePcie : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_cuda::state() = fake_cuda::State{};
    fake_pcie::state() = fake_pcie::State{};
  }
  void TearDown() override {
    backend_.reset();
    EXPECT_TRUE(fake_cuda::state().sizes.empty()) << "device memory leaked";
    EXPECT_TRUE(fake_pcie::state().host_allocs.empty()) << "pinned host memory leaked";
    EXPECT_EQ(fake_cuda::state().live_streams, 0);
  }
  fake_backend::FakeBackend& backend() {
    if (!backend_) backend_ = std::make_unique<fake_backend::FakeBackend>(families::pcie::add_cuda_workloads);
    return *backend_;
  }
  std::unique_ptr<fake_backend::FakeBackend> backend_;
  std::vector<BenchCase> cases_ = small_pcie_cases();
};

TEST_F(FakePcie, EveryCudaPcieRowRunsAndVerifies) {
  std::set<std::string> keys;
  for (const BenchCase& c : cases_) {
    if (!backend().supports(c)) {
      EXPECT_EQ(c.variant, "pageable_memcpy") << "only the host backend's rows are missing";
      continue;
    }
    SCOPED_TRACE(c.name());
    auto w = backend().create(c);
    const Verification v = run_like_the_runner(*w, 3);
    EXPECT_TRUE(v.ok) << v.message;
    keys.insert(c.key());
    const auto k = w->extra_counters(1e-3);
    const bool pageable = c.variant.rfind("pageable", 0) == 0;
    EXPECT_EQ(k.at("host_clock_timed"), pageable ? 1.0 : 0.0);
    EXPECT_EQ(k.at("spin_held"), pageable ? 0.0 : 1.0);
    EXPECT_EQ(k.count("sm_copy_blocks"), c.variant == "pinned_sm" ? 1u : 0u);
  }
  EXPECT_EQ(keys.size(), 9u);  // h2d x4, d2h x3, bidir x2
}

TEST_F(FakePcie, SmallBatchesAreChunkedBehindTheSpinKernel) {
  auto w = backend().create(find_case(cases_, "bandwidth/pcie_h2d/pinned_ce/bytes:4KiB"));
  w->prepare();
  const int after_prepare = fake_pcie::state().spin_launches;
  EXPECT_EQ(after_prepare, 1);  // the preload launch (lazy loading must not happen while held)
  w->poison();
  w->run(300);
  EXPECT_EQ(fake_pcie::state().spin_launches - after_prepare, 3);  // 127 + 127 + 46
  EXPECT_TRUE(w->verify().ok);
  // Two chunks in flight: consecutive chunks are held by two different spin controls, in turn.
  const auto& flags = fake_pcie::state().spin_flags;
  ASSERT_EQ(flags.size(), 4u);
  EXPECT_NE(flags[1], flags[2]);
  EXPECT_EQ(flags[1], flags[3]);

  auto bidir = backend().create(find_case(cases_, "bandwidth/pcie_bidir_d2h/pinned_ce/bytes:64KiB"));
  bidir->prepare();
  const int spins = fake_pcie::state().spin_launches, waits = fake_pcie::state().stream_waits;
  bidir->poison();
  bidir->run(100);
  EXPECT_EQ(fake_pcie::state().spin_launches - spins, 3);  // 42 + 42 + 16
  EXPECT_EQ(fake_pcie::state().stream_waits - waits, 3);   // stream B released with each chunk
  const Verification v = bidir->verify();
  EXPECT_TRUE(v.ok) << v.message;
}

// What a spin-held run queues, in order, and whether the stream was still held (the latest spin
// kernel's release flag unset) as each piece was queued: the fake runs work at once, so this is
// how it sees that every chunk is queued whole behind its spin kernel before the host lets it go.
struct Queued {
  std::string what;
  bool held;
};
std::vector<Queued> queue_log_of_run(Workload& w, int batch) {
  std::vector<Queued> log;
  fake_cuda::state().on_enqueue = [&log](const char* what) {
    const auto& flags = fake_pcie::state().spin_flags;
    // A spin kernel is logged after its flag is recorded: the stream is held from it on.
    const bool held =
        !flags.empty() && *static_cast<const volatile std::uint32_t*>(fake_pcie::host_of(flags.back())) == 0;
    log.push_back({what, held});
  };
  w.run(batch);
  fake_cuda::state().on_enqueue = nullptr;
  return log;
}

TEST_F(FakePcie, EachChunkIsQueuedWholeBehindItsSpinKernelBeforeItsRelease) {
  // Every size: a start event on an idle stream before a batch of large transfers would time
  // the first one's submission too.
  for (const char* name :
       {"bandwidth/pcie_h2d/pinned_ce/bytes:4KiB", "bandwidth/pcie_d2h/pinned_sm/bytes:4KiB",
        "bandwidth/pcie_bidir_d2h/pinned_ce/bytes:64KiB", "bandwidth/pcie_h2d/wc_pinned_ce/bytes:16MiB",
        "bandwidth/pcie_bidir_h2d/pinned_ce/bytes:16MiB"}) {
    SCOPED_TRACE(name);
    auto w = backend().create(find_case(cases_, name));
    w->prepare();
    w->poison();
    const bool large = std::string(name).find("16MiB") != std::string::npos;
    const int batch = large ? 3 : 300;
    const std::vector<Queued> log = queue_log_of_run(*w, batch);
    ASSERT_FALSE(log.empty());
    EXPECT_EQ(log.front().what, "spin") << "something was queued (or the start recorded) before the first spin kernel";
    int spins = 0, transfers = 0;
    bool event_since_spin = false, transfer_since_event = false;
    for (std::size_t i = 0; i < log.size(); ++i) {
      const Queued& q = log[i];
      EXPECT_TRUE(q.held) << q.what << " (entry " << i << ") was queued after its chunk was released";
      if (q.what == "spin") {
        EXPECT_FALSE(transfer_since_event) << "a chunk's last transfer has no stop event after it";
        ++spins;
        event_since_spin = false;
      } else if (q.what == "event") {
        event_since_spin = true;
        transfer_since_event = false;
      } else {
        EXPECT_TRUE(event_since_spin) << q.what << " (entry " << i << ") came before its chunk's start event";
        transfer_since_event = true;
        ++transfers;
      }
    }
    EXPECT_FALSE(transfer_since_event) << "the last chunk's last transfer has no stop event after it";
    const bool bidir = std::string(name).find("bidir") != std::string::npos;
    const std::vector<int> chunks = pcie::spin_chunks(batch, bidir ? 3 : 1);
    int expected = 0;  // each chunk's measured transfers, and with bidir its opposite ones
    for (int n : chunks) expected += n + (bidir ? pcie::counter_transfers(n) : 0);
    EXPECT_EQ(spins, static_cast<int>(chunks.size()));
    EXPECT_EQ(transfers, expected);
    EXPECT_TRUE(w->verify().ok);
  }
}

// A hang in a small and a large spin-held row and a host-timed row: each gives up at the wait's limit
// with DeviceHung, and nothing on the way waits without a bound (on a GPU, for ever).
TEST_F(FakePcie, AHungTransferIsDeviceHungWithoutAnUnboundedWait) {
  set_device_wait_limit_seconds(0.1);
  for (const char* name :
       {"bandwidth/pcie_bidir_d2h/pinned_ce/bytes:64KiB", "bandwidth/pcie_bidir_h2d/pinned_ce/bytes:16MiB",
        "bandwidth/pcie_h2d/pageable_ce/bytes:4KiB"}) {
    SCOPED_TRACE(name);
    auto w = backend().create(find_case(cases_, name));
    w->prepare();
    w->poison();
    fake_cuda::state().work_never_finishes = true;
    EXPECT_THROW(w->run(8), DeviceHung);
    EXPECT_EQ(fake_cuda::state().unbounded_waits_on_hung_work, 0);
    fake_cuda::state().work_never_finishes = false;
    // Destroyed after the hang, the row frees nothing (cudaFree and cudaFreeHost would wait).
    w.reset();
    backend_.reset();
    EXPECT_FALSE(fake_cuda::state().sizes.empty()) << "a hung row's device buffers were freed";
    EXPECT_FALSE(fake_pcie::state().host_allocs.empty()) << "a hung row's pinned buffers were freed";
    forget_device_hang();
    SetUp();  // the fake forgets them
  }
  set_device_wait_limit_seconds(0);
}

TEST_F(FakePcie, LargeTransfersAreHeldBehindOneSpinKernelPerChunk) {
  auto w = backend().create(find_case(cases_, "bandwidth/pcie_d2h/pinned_sm/bytes:16MiB"));
  w->prepare();
  const int spins = fake_pcie::state().spin_launches, copies = fake_pcie::state().sm_copy_launches;
  w->poison();
  w->run(2);
  EXPECT_EQ(fake_pcie::state().spin_launches - spins, 1);  // one chunk of two transfers
  EXPECT_EQ(fake_pcie::state().sm_copy_launches - copies, 2);
  EXPECT_TRUE(w->verify().ok);
  EXPECT_EQ(w->extra_counters(1e-3).at("spin_held"), 1.0);
}

// A host-to-device transfer is checked by reading the device buffer back: a wrong byte there,
// first, in the middle or last, fails verification naming it.
TEST_F(FakePcie, AWrongByteAnywhereFailsVerificationNamingIt) {
  for (const char* name : {"bandwidth/pcie_h2d/pinned_ce/bytes:64KiB", "bandwidth/pcie_h2d/pinned_sm/bytes:64KiB"}) {
    for (fake_cuda::Plant where : {fake_cuda::Plant::first, fake_cuda::Plant::middle, fake_cuda::Plant::last}) {
      SCOPED_TRACE(name);
      auto w = backend().create(find_case(cases_, name));
      w->prepare();
      w->run(2);
      fake_backend::expect_plant_caught(*w, where, 1, "byte ");
    }
  }
}

TEST_F(FakePcie, WrongDataFailsVerification) {
  for (const char* name : {"bandwidth/pcie_h2d/pinned_sm/bytes:64KiB", "bandwidth/pcie_d2h/pinned_sm/bytes:16MiB"}) {
    SCOPED_TRACE(name);
    fake_pcie::state().corrupt_sm_copy = true;
    auto w = backend().create(find_case(cases_, name));
    const Verification v = run_like_the_runner(*w, 2);
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.message.rfind("byte 5 of", 0), 0u) << v.message;  // the flipped byte, found first
  }
}

// The words sent are checked against the seed, not a copy of themselves: device-to-host rows send
// what the device fill wrote, so a fill that writes one word wrong fails them; host-to-device rows
// send words written on the host and still pass.
TEST_F(FakePcie, SentWordsAreCheckedAgainstTheirSeed) {
  fake_cuda::state().break_seeded_fill = true;
  for (const char* name : {"bandwidth/pcie_d2h/pinned_ce/bytes:64KiB", "bandwidth/pcie_d2h/pageable_ce/bytes:64KiB",
                           "bandwidth/pcie_bidir_h2d/pinned_ce/bytes:64KiB"}) {
    SCOPED_TRACE(name);
    auto w = backend().create(find_case(cases_, name));
    const Verification v = run_like_the_runner(*w, 2);
    EXPECT_FALSE(v.ok);
    // The fill's wrong word is the middle one (bit 16 of word 8192: byte 32770).
    EXPECT_NE(v.message.find("byte 32770 of 65536"), std::string::npos) << v.message;
  }
  auto h2d = backend().create(find_case(cases_, "bandwidth/pcie_h2d/pinned_ce/bytes:64KiB"));
  const Verification ok = run_like_the_runner(*h2d, 2);
  EXPECT_TRUE(ok.ok) << ok.message;
}

TEST_F(FakePcie, UnwrittenOutputFailsVerification) {
  // Poisoned after the timed runs, as if the transfers had never happened.
  auto w = backend().create(find_case(cases_, "bandwidth/pcie_d2h/pinned_ce/bytes:64KiB"));
  w->prepare();
  w->run(2);
  w->poison();
  EXPECT_FALSE(w->verify().ok);
  auto h = backend().create(find_case(cases_, "bandwidth/pcie_bidir_h2d/pinned_ce/bytes:1MiB"));
  h->prepare();
  h->run(2);
  h->poison();
  EXPECT_FALSE(h->verify().ok);
}

TEST_F(FakePcie, SpinKernelTimeoutIsAnErrorNotANumber) {
  auto w = backend().create(find_case(cases_, "bandwidth/pcie_h2d/pinned_ce/bytes:4KiB"));
  w->prepare();
  fake_pcie::state().spin_times_out = true;
  try {
    w->run(5);
    FAIL() << "a timed-out spin kernel must not yield a time";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
}

TEST_F(FakePcie, NoMappingOrNoPinnedMemoryIsASkip) {
  fake_cuda::state().can_map_host_memory = false;
  auto sm = backend().create(find_case(cases_, "bandwidth/pcie_h2d/pinned_sm/bytes:4KiB"));
  EXPECT_THROW(sm->prepare(), SkipCase);
  fake_cuda::state().can_map_host_memory = true;
  fake_pcie::state().host_alloc_limit = 1u << 20;  // pinned memory runs out above 1 MiB
  auto big = backend().create(find_case(cases_, "bandwidth/pcie_d2h/pinned_ce/bytes:16MiB"));
  EXPECT_THROW(big->prepare(), SkipCase);
}

// The mapped row's buffer when its device address cannot be had: an error, and the pinned block
// it had allocated is freed (TearDown: no pinned host memory left).
TEST_F(FakePcie, AMappedBufferWithoutItsDeviceAddressFreesItsPinnedMemory) {
  fake_pcie::state().device_view_fails = true;
  auto sm = backend().create(find_case(cases_, "bandwidth/pcie_h2d/pinned_sm/bytes:4KiB"));
  EXPECT_THROW(sm->prepare(), std::runtime_error);
  sm.reset();
  EXPECT_TRUE(fake_pcie::state().host_allocs.empty());
}

TEST_F(FakePcie, ProbeReadsTheLinkAndLoadsItOnlyWhenItLooksDowngraded) {
  const std::string& root = pcie::kSysfsFixtures;
  bool reread = true;
  const pcie::PcieLink full = probe_cuda_pcie_link(0, "0000:5E:00.0", nullptr, &reread, root);
  EXPECT_FALSE(reread);
  EXPECT_EQ(pcie::link_name(full.current), "Gen5 x16");
  EXPECT_EQ(fake_cuda::state().sizes.size(), 0u);

  // Idle at Gen1: re-read while 32 x 64 MiB copies are in flight (the fixture does not change,
  // so it stays downgraded; on a GPU the link trains up).
  const pcie::PcieLink idle = probe_cuda_pcie_link(0, "0000:03:00.0", nullptr, &reread, root);
  EXPECT_TRUE(reread);
  EXPECT_EQ(pcie::link_name(idle.current), "Gen1 x16");
  EXPECT_TRUE(idle.downgraded());

  const pcie::PcieLink bad = probe_cuda_pcie_link(0, "not-a-bus-id", nullptr, &reread, root);
  EXPECT_FALSE(reread);
  EXPECT_FALSE(bad.current.known());
}

}  // namespace
}  // namespace gpubench
