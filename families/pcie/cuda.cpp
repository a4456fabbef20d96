// CUDA workloads of the PCIe family: host<->device transfers through the copy engines
// (cudaMemcpyAsync) and through the SMs (families/pcie/pcie.h: a kernel reading or writing mapped
// pinned memory), one direction at a time or both at once.
//
// Timing (families/pcie/transfer_plan.h; also written to the context as pcie_timing):
//  - pinned / write-combined / mapped transfers, every size: each batch is queued in chunks,
//    each behind its own spin kernel with the start event after it; the host releases a spin
//    kernel once its chunk is queued, so the chunk's transfers run back to back and neither the
//    host's queueing nor the first transfer's submission is timed (as nvbandwidth holds its
//    copies behind a kernel). Two chunks are in flight: the next one is queued while the
//    previous one runs. The result is the sum of the chunks' event intervals.
//  - pageable: cudaMemcpyAsync from pageable memory is synchronous with the host (the driver
//    stages it through pinned buffers), so it cannot be queued behind anything: the host clock
//    around the batch, after a stream synchronize on both ends (a pageable host-to-device copy
//    may return before its last DMA completes).
//  - bidirectional: the measured direction on stream A, the other direction on stream B with
//    counter_transfers(batch) = 2 x batch + 1 transfers released at the same moment, so the
//    measured transfers never run alone; only A is timed; each direction is its own benchmark.
// Verification, after the timed runs: what arrived on the other side is compared byte for
// byte with the seeded words that were sent (random, never zero), recomputed on the host.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "families/pcie/pcie.h"
#include "families/pcie/transfer_plan.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/device_buffer.h"
#include "harness/cuda/host_resources.h"
#include "harness/cuda/timing.h"
#include "harness/family.h"
#include "harness/verify.h"

GPUBENCH_FAMILY(pcie)

namespace gpubench {

namespace {

/// The spin kernel gives up after this: a held chunk is queued in well under a millisecond.
constexpr std::uint64_t kSpinTimeoutNs = 2'000'000'000ull;

constexpr std::uint64_t kSeedH2d = 0x243f6a8885a308d3ull;
constexpr std::uint64_t kSeedD2h = 0x13198a2e03707344ull;

enum class Engine { copy, sm };

/// The spin kernel's release flag and status word, in one mapped pinned allocation the host
/// writes and reads through volatile accesses (the GPU polls it across the link).
class SpinControl {
 public:
  SpinControl() : words_(2 * sizeof(std::uint32_t), HostMemory::mapped) {}
  /// Before launching the spin kernel: not released, not finished.
  void arm() {
    host()[0] = 0;
    host()[1] = kernels::kSpinRunning;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  /// Lets the spin kernel (and everything queued behind it) go.
  void release() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    host()[0] = 1;
  }
  /// The status the spin kernel wrote (read after its stream passed it).
  std::uint32_t status() const { return host()[1]; }
  const std::uint32_t* device_flag() const { return static_cast<const std::uint32_t*>(words_.device_view()); }
  std::uint32_t* device_status() const { return static_cast<std::uint32_t*>(words_.device_view()) + 1; }

 private:
  volatile std::uint32_t* host() const { return static_cast<volatile std::uint32_t*>(words_.get()); }
  HostBuffer words_;
};

/// One direction of transfers: the host side, the device side, and the seed of the words sent
/// (the SeededWords of harness/verify.h, which verification recomputes). Host-to-device: host ->
/// device; device-to-host: device -> host.
struct Direction {
  bool h2d = true;
  HostMemory memory = HostMemory::pinned;
  std::uint64_t seed = 0;
  std::unique_ptr<HostBuffer> host;
  DeviceBuffer device;
};

/// What each benchmark key runs.
struct Spec {
  bool h2d;
  HostMemory memory;
  Engine engine;
  bool bidir;
};

class PcieTransferWorkload final : public Workload {
 public:
  PcieTransferWorkload(const BenchCase& c, CudaDevice& dev, Spec spec)
      : name_(c.name()),
        bytes_(static_cast<std::size_t>(c.arg("bytes"))),
        dev_(dev),
        spec_(spec),
        timing_(pcie::transfer_timer(spec.memory == HostMemory::pageable)) {}

  void prepare() override {
    dev_.activate();
    if (spec_.engine == Engine::sm) {
      int can_map = 0;
      GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, dev_.index()));
      if (!can_map) throw SkipCase("this device cannot map host memory (SM-driven transfers need it)");
    }
    require_device_memory(bytes_ * (spec_.bidir ? 2 : 1), name_);
    a_ = std::make_unique<OwnedStream>();
    setup(measured_, spec_.h2d, spec_.memory, spec_.h2d ? kSeedH2d : kSeedD2h);
    if (spec_.bidir) {
      b_ = std::make_unique<OwnedStream>();
      go_ = std::make_unique<OrderEvent>();
      setup(counter_, !spec_.h2d, HostMemory::pinned, spec_.h2d ? kSeedD2h : kSeedH2d);
    }
    // The preload uses the first; spin-held rows hold their chunks with both, in turn.
    spins_ = std::vector<SpinControl>(timing_ == pcie::TransferTimer::spin_held ? 2 : 1);
    if (timing_ == pcie::TransferTimer::spin_held) {
      chunk_timers_ = std::vector<EventPair>(2);
      if (spec_.bidir) counter_done_ = std::vector<OrderEvent>(2);
    }
    preload_kernels();
  }

  void poison() override {
    poison_output(measured_);
    if (spec_.bidir) poison_output(counter_);
  }

  double run(int batch) override {
    return timing_ == pcie::TransferTimer::host_clock ? run_host_clock(batch) : run_spin_held(batch);
  }

  Verification verify() override {
    Verification v = verify_direction(measured_);
    if (v.ok && spec_.bidir) {
      v = verify_direction(counter_);
      if (!v.ok) v.message = "the concurrent opposite-direction transfer: " + v.message;
    }
    return v;
  }

  std::map<std::string, double> extra_counters(double) override {
    std::map<std::string, double> k = {{"host_clock_timed", timing_ == pcie::TransferTimer::host_clock ? 1.0 : 0.0},
                                       {"spin_held", timing_ == pcie::TransferTimer::spin_held ? 1.0 : 0.0}};
    if (spec_.engine == Engine::sm) k["sm_copy_blocks"] = kernels::pcie_sm_copy_blocks(bytes_, dev_.sm_count());
    return k;
  }

 private:
  // Lazy module loading (the default since CUDA 12.2) loads a kernel at its first launch and
  // may synchronize the context to do it: a first launch queued behind the held spin kernel
  // would wait for it while it waits for the host. Launch both kernels once, unheld, here.
  void preload_kernels() {
    SpinControl& spin = spins_[0];
    spin.arm();
    spin.release();  // the kernel sees the flag set and exits at once
    GPUBENCH_CUDA_CHECK(kernels::launch_pcie_spin(spin.device_flag(), spin.device_status(), kSpinTimeoutNs, a_->get()));
    if (spec_.engine == Engine::sm) {
      DeviceBuffer scratch(32);
      GPUBENCH_CUDA_CHECK(
          kernels::launch_pcie_sm_copy(scratch.as<char>(), scratch.as<char>() + 16, 16, dev_.sm_count(), a_->get()));
      GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(a_->get()));  // before `scratch` is freed
    }
    GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(a_->get()));
    if (spin.status() != kernels::kSpinReleased)
      throw std::runtime_error("the preloaded spin kernel did not see its release flag");
  }

  // The sent words are made where they are sent from: on the host for host-to-device (written
  // once, in sequential runs: write-combined memory's fast path, and it is never read), on the
  // device for device-to-host. No reference copy: verify() recomputes them.
  void setup(Direction& d, bool h2d, HostMemory memory, std::uint64_t seed) {
    d.h2d = h2d;
    d.memory = memory;
    d.seed = seed;
    d.host = std::make_unique<HostBuffer>(bytes_, memory);
    d.device = DeviceBuffer(bytes_);
    if (h2d) {
      fill_random_u32(d.host->get(), bytes_, seed);
    } else {
      fill_seeded_device(d.device.get(), bytes_, SeededWords{seed}, dev_.sm_count(), a_->get());
    }
  }

  void poison_output(Direction& d) {
    if (d.h2d) {
      poison_device(d.device.get(), bytes_, a_->get());
    } else {
      poison_fill(d.host->get(), bytes_);
    }
  }

  Verification verify_direction(const Direction& d) {
    if (d.h2d) return check_copy(SeededWords{d.seed}, fetch_to_host(d.device.get(), bytes_, a_->get()), bytes_);
    return check_copy(SeededWords{d.seed}, d.host->get(), bytes_);
  }

  /// Enqueues one transfer of `d` on `s`.
  int enqueue(const Direction& d, cudaStream_t s) const {
    if (spec_.engine == Engine::sm && &d == &measured_) {
      const void* src = d.h2d ? d.host->device_view() : d.device.get();
      void* dst = d.h2d ? d.device.get() : d.host->device_view();
      return kernels::launch_pcie_sm_copy(src, dst, bytes_, dev_.sm_count(), s);
    }
    if (d.h2d) return cudaMemcpyAsync(d.device.get(), d.host->get(), bytes_, cudaMemcpyHostToDevice, s);
    return cudaMemcpyAsync(d.host->get(), d.device.get(), bytes_, cudaMemcpyDeviceToHost, s);
  }

  /// `n` measured transfers on A; with bidir, counter_transfers(n) opposite ones on B,
  /// interleaved in proportion so B is fed as fast as A.
  void enqueue_batch(int n) {
    const long long counter = spec_.bidir ? pcie::counter_transfers(n) : 0;
    long long queued = 0;
    for (int i = 0; i < n; ++i) {
      GPUBENCH_CUDA_CHECK(enqueue(measured_, a_->get()));
      for (const long long due = counter * (i + 1) / n; queued < due; ++queued) {
        GPUBENCH_CUDA_CHECK(enqueue(counter_, b_->get()));
      }
    }
  }

  double run_host_clock(int batch) {
    wait_for_stream(a_->get(), "the stream before a pageable sample");
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) GPUBENCH_CUDA_CHECK(enqueue(measured_, a_->get()));
    wait_for_stream(a_->get(), "a pageable sample", /*spin=*/true);  // host-timed: seen at once
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // Chunks in flight two at a time: chunk k is queued behind its own spin kernel (control and
  // events k mod 2) while chunk k - 1, already released, runs, so the device no longer idles
  // while the host queues (in run 6 that idling was about 7 s of the run, in 21 rows). Each
  // chunk's events still bracket only its own transfers, all queued before its release. A
  // control is re-armed only after the chunk that last used it was collected (its stop event
  // passed, so its spin kernel has exited).
  double run_spin_held(int batch) {
    double total = 0;
    int in_flight = -1;  // the released chunk not collected yet
    const auto collect = [&](int k) {
      total += chunk_timers_[k % 2].seconds();
      if (spec_.bidir) counter_done_[k % 2].wait();  // stream B's share of the chunk, too
      if (spins_[k % 2].status() != kernels::kSpinReleased) {
        throw std::runtime_error("the spin kernel timed out before the host released it (queueing a chunk took over " +
                                 std::to_string(kSpinTimeoutNs / 1000000) + " ms): the time would include it");
      }
    };
    // Bidirectional chunks queue three operations per measured transfer.
    const std::vector<int> chunks = pcie::spin_chunks(batch, spec_.bidir ? 3 : 1);
    try {
      for (int k = 0; k < static_cast<int>(chunks.size()); ++k) {
        SpinControl& spin = spins_[k % 2];
        EventPair& timer = chunk_timers_[k % 2];
        spin.arm();
        GPUBENCH_CUDA_CHECK(
            kernels::launch_pcie_spin(spin.device_flag(), spin.device_status(), kSpinTimeoutNs, a_->get()));
        if (spec_.bidir) go_->order(a_->get(), b_->get());  // B starts when the spin kernel ends, too
        timer.record_start(a_->get());
        enqueue_batch(chunks[static_cast<std::size_t>(k)]);
        timer.record_stop(a_->get());
        if (spec_.bidir) counter_done_[k % 2].mark(b_->get());
        spin.release();
        if (in_flight >= 0) collect(in_flight);
        in_flight = k;
      }
      if (in_flight >= 0) collect(in_flight);
    } catch (const DeviceHung&) {
      for (SpinControl& spin : spins_) spin.release();  // no wait: the device runs on, hung
      throw;
    } catch (...) {
      // Never leave a stream held behind a failed enqueue, nor chunks running into buffers the
      // caller may free once this throws (the runner drops a failed workload): release both
      // controls and drain both streams, then report the error.
      for (SpinControl& spin : spins_) spin.release();
      GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(a_->get()));
      if (spec_.bidir) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(b_->get()));
      throw;
    }
    return total;
  }

  std::string name_;
  std::size_t bytes_;
  CudaDevice& dev_;
  Spec spec_;
  pcie::TransferTimer timing_;
  std::unique_ptr<OwnedStream> a_, b_;
  std::unique_ptr<OrderEvent> go_;
  // Spin-held chunks, two in flight (created in prepare(), like every CUDA resource here).
  std::vector<SpinControl> spins_;
  std::vector<EventPair> chunk_timers_;
  std::vector<OrderEvent> counter_done_;
  Direction measured_, counter_;
};

template <bool H2d, HostMemory Memory, Engine Eng, bool Bidir>
std::unique_ptr<Workload> make(const BenchCase& c, Backend& b) {
  return std::make_unique<PcieTransferWorkload>(c, cuda_device_of(b), Spec{H2d, Memory, Eng, Bidir});
}

}  // namespace

void families::pcie::add_cuda_workloads(WorkloadTable& table) {
  table.add("bandwidth/pcie_h2d/pinned_ce", make<true, HostMemory::pinned, Engine::copy, false>);
  table.add("bandwidth/pcie_h2d/pageable_ce", make<true, HostMemory::pageable, Engine::copy, false>);
  table.add("bandwidth/pcie_h2d/wc_pinned_ce", make<true, HostMemory::wc_pinned, Engine::copy, false>);
  table.add("bandwidth/pcie_h2d/pinned_sm", make<true, HostMemory::mapped, Engine::sm, false>);
  table.add("bandwidth/pcie_d2h/pinned_ce", make<false, HostMemory::pinned, Engine::copy, false>);
  table.add("bandwidth/pcie_d2h/pageable_ce", make<false, HostMemory::pageable, Engine::copy, false>);
  table.add("bandwidth/pcie_d2h/pinned_sm", make<false, HostMemory::mapped, Engine::sm, false>);
  table.add("bandwidth/pcie_bidir_h2d/pinned_ce", make<true, HostMemory::pinned, Engine::copy, true>);
  table.add("bandwidth/pcie_bidir_d2h/pinned_ce", make<false, HostMemory::pinned, Engine::copy, true>);
  table.not_here("bandwidth/pcie_h2d/pageable_memcpy", "the host backend's stand-in for a transfer");
  table.not_here("bandwidth/pcie_d2h/pageable_memcpy", "the host backend's stand-in for a transfer");
}

}  // namespace gpubench
