// The device-memory family on a CUDA device: sequential copy (hand-written kernel, copy engine,
// Thrust), read-only (kernel, CUB reduction), write-only, strided copy, random gather (kernel,
// Thrust) and the dependent pointer chase. Names, arguments and work models come from the
// table in families/global_memory/cases.cpp; the kernels from families/global_memory/global_memory.h.
//
// Every workload: inputs are seeded random data (never zeros) generated on the device (the
// seeded words and floats of kernels/seeded_words.h, which the host checks recompute; the
// gather's permutation) or, for the chase ring, built on the host and copied; outputs are
// poisoned by poison() and copied back and checked with the verify.h checkers by verify();
// sizes that do not fit in free device memory are skipped with the reason. Timing
// (graph-batched when cache-resident, one event pair per L2-flushed run otherwise) is
// harness/cuda/timing.h's.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "families/global_memory/global_memory.h"
#include "harness/cuda/cuda_backend.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/cuda_workload.h"
#include "harness/cuda/device_buffer.h"
#include "harness/cuda/timing.h"
#include "harness/family.h"
#include "harness/random.h"
#include "harness/verify.h"

GPUBENCH_FAMILY(global_memory)

namespace gpubench {

namespace {

// A non-negative integral argument; `multiple` is the element size it must divide into.
std::size_t size_arg(const BenchCase& c, const char* key, std::size_t multiple = 1) {
  const double v = c.arg(key);
  if (!(v >= 0) || v > 1e18 || v != static_cast<double>(static_cast<std::uint64_t>(v)))
    throw SkipCase(std::string("argument ") + key + " is not a size: " + std::to_string(v));
  const auto n = static_cast<std::size_t>(v);
  if (n % multiple != 0)
    throw SkipCase(std::string("argument ") + key + "=" + std::to_string(n) + " is not a multiple of " +
                   std::to_string(multiple) + " bytes");
  return n;
}

// Element counts that index with uint32 (gather indices, chase entries).
void require_u32_count(std::size_t n, const char* what) {
  if (n > std::numeric_limits<std::uint32_t>::max()) throw SkipCase(std::string(what) + " has more than 2^32 elements");
}

// What every device-memory workload adds to the CUDA skeleton: buffer rotation and passes.
class CudaMemoryWorkload : public CudaWorkload {
 public:
  using CudaWorkload::CudaWorkload;

  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    std::map<std::string, double> k = CudaWorkload::extra_counters(seconds_per_op);
    // The repetition policy of the row: buffer copies rotated through, passes per launch.
    if (c_.slots > 1) k["slots"] = c_.slots;
    if (passes_ > 0) k["passes_per_launch"] = passes_;
    return k;
  }

 protected:
  /// A DRAM-sized set (the rows that rotate among slots or, with one slot, are larger than 4 x L2).
  bool dram_sized() const { return c_.work.working_set_bytes >= static_cast<double>(dev_.description().l2_bytes) / 2; }
  /// Library references on DRAM-sized sets: issued to the stream as a user would, not captured.
  void library_call_as_issued() {
    if (dram_sized()) timer_.use_stream_launches();
  }

  // ---- rotation and passes (kernels::Passes) ----
  // A streaming row's buffers hold c_.slots copies of its data, slot_stride(bytes) apart.
  static std::size_t slot_stride(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
  std::size_t slotted(std::size_t bytes) const { return slot_stride(bytes) * static_cast<std::size_t>(c_.slots); }
  /// Copies slot 0 of `buffer` (its first `bytes`) into the other slots.
  void replicate_slots(DeviceBuffer& buffer, std::size_t bytes) {
    auto* base = static_cast<unsigned char*>(buffer.get());
    for (int k = 1; k < c_.slots; ++k)
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(base + static_cast<std::size_t>(k) * slot_stride(bytes), base, bytes,
                                          cudaMemcpyDeviceToDevice, stream()));
    GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }

  /// The hand-written streaming kernels: one launch makes passes_ passes (rotating over the
  /// slots), so that it lasts at least min_launch_seconds(); `batch` operations (passes) are
  /// ceil(batch / passes_) launches, and the time returned is that of `batch` passes.
  using PassLaunch = std::function<int(CUstream_st*, kernels::Passes)>;
  double timed_passes(int batch, std::size_t bytes, const PassLaunch& launch) {
    dev_.activate();
    if (passes_ == 0) passes_ = calibrate_passes(bytes, launch);
    if (grown_passes_ > passes_) {
      // A launch ran short of the minimum (see below): more passes from this run on, and the
      // graphs captured with the old count dropped.
      passes_ = grown_passes_;
      timer_.invalidate();
    }
    const kernels::Passes plan{passes_, c_.slots, slot_stride(bytes)};
    const int launches = (std::max(batch, 1) + passes_ - 1) / passes_;
    const double seconds = timer_.time(
        launches, [launch, plan](CUstream_st* s, int) { return launch(s, plan); }, nullptr);
    // The calibrating launch may have run slower than the later ones (the GPU still at its idle
    // clocks, a loaded host): a launch well short of the minimum grows the count for the next run
    // (not this one: verify() reads what the last launch made with passes_).
    const double per_launch = seconds / launches;
    if (per_launch > 0 && per_launch < 0.9 * min_launch_seconds() && passes_ < kMaxPasses / c_.slots * c_.slots)
      grown_passes_ = grown(passes_, 1.25 * min_launch_seconds() / per_launch);
    return seconds * batch / (static_cast<double>(launches) * passes_);
  }
  /// 100 us for cache-resident rows, 200 us for DRAM-sized ones: a kernel boundary (2-3 us on
  /// an H100) stays a small part of every timed launch.
  double min_launch_seconds() const { return c_.slots > 1 ? 200e-6 : 100e-6; }
  int passes() const { return passes_; }

  /// The library references: one call per operation, each on the next slot. The rotation runs
  /// on from one run to the next (warm-ups included), so any two uses of a slot are slots - 1
  /// other operations apart; restarting at slot 0 with every batch put the end of one batch
  /// right before the start of the next and read a slot used a few operations before from the
  /// L2. Rotating rows are DRAM-sized, so their calls are issued, not captured: this runs as
  /// each operation is queued. Marks the slot written for verify().
  std::size_t next_slot_offset(std::size_t stride) {
    const int slot = rotation_;
    rotation_ = (rotation_ + 1) % c_.slots;
    if (written_.empty()) written_.assign(static_cast<std::size_t>(c_.slots), false);
    written_[static_cast<std::size_t>(slot)] = true;
    return static_cast<std::size_t>(slot) * stride;
  }
  /// The slots the library calls wrote since forget_written_slots() (the poison); slot 0 when
  /// none was seen (a captured graph, replayed without calling the enqueue function: one slot).
  std::vector<int> written_slots() const {
    std::vector<int> out;
    for (std::size_t k = 0; k < written_.size(); ++k)
      if (written_[k]) out.push_back(static_cast<int>(k));
    if (out.empty()) out.push_back(0);
    return out;
  }
  void forget_written_slots() { written_.assign(written_.size(), false); }

 private:
  // Times launches of growing pass counts (multiples of the slot count, so every launch covers
  // every slot alike) until one lasts min_launch_seconds(), then keeps a margin of 25 % over it,
  // so that a later launch running faster than the calibrating one (clocks up, a quieter
  // machine) still lasts the minimum. The first launch also loads the module, outside any timing.
  static constexpr int kMaxPasses = 1 << 20;
  /// `passes` x `factor`, up to a multiple of the slot count, at most kMaxPasses.
  int grown(int passes, double factor) const {
    const int slots = c_.slots;
    const double want = std::ceil(static_cast<double>(passes) * factor / slots) * slots;
    return static_cast<int>(std::min(want, static_cast<double>(kMaxPasses / slots * slots)));
  }
  int calibrate_passes(std::size_t bytes, const PassLaunch& launch) {
    const int slots = c_.slots;
    int passes = slots;
    GPUBENCH_CUDA_CHECK(launch(stream(), kernels::Passes{passes, slots, slot_stride(bytes)}));
    GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream()));
    EventPair events;
    for (int round = 0; round < 4 && passes < kMaxPasses; ++round) {
      events.record_start(stream());
      GPUBENCH_CUDA_CHECK(launch(stream(), kernels::Passes{passes, slots, slot_stride(bytes)}));
      events.record_stop(stream());
      const double t = events.seconds();
      const double grow = t > 0 ? std::min(1.25 * min_launch_seconds() / t, 1024.0) : 1024.0;
      if (t >= min_launch_seconds()) {
        if (grow > 1.0) passes = grown(passes, grow);
        break;
      }
      passes = grown(passes, std::max(grow, 2.0));
    }
    return passes;
  }

  int passes_ = 0;             // 0 until calibrated
  int grown_passes_ = 0;       // the count the next run takes, when a launch ran short of the minimum
  int rotation_ = 0;           // the slot of the next library call
  std::vector<bool> written_;  // slots a library call wrote since the poison
};

// A fresh device buffer of at least `bytes` (`device_bytes` when larger) whose first `bytes` hold
// the seeded inputs of `seed`, filled on the device: words, or (bytes a multiple of 4) floats.
// The host keeps no copy: verify() recomputes them (harness/verify.h's SeededWords and
// SeededFloats checks).
DeviceBuffer seeded_input(std::size_t bytes, std::uint64_t seed, bool floats, int sms, CUstream_st* s,
                          std::size_t device_bytes = 0) {
  DeviceBuffer d(std::max(bytes, device_bytes));
  if (floats) {
    fill_seeded_device(d.as<float>(), bytes / 4, SeededFloats{seed}, sms, s);
  } else {
    fill_seeded_device(d.get(), bytes, SeededWords{seed}, sms, s);
  }
  return d;
}
constexpr bool kFloats = true, kWords = false;

// ---- copy: kernel | memcpy_ce | thrust ----

enum class CopyVariant { kernel, memcpy_ce, thrust };

template <CopyVariant V>
class CopyWorkload final : public CudaMemoryWorkload {
 public:
  using CudaMemoryWorkload::CudaMemoryWorkload;
  void prepare() override {
    // Thrust copies floats, so its size must be whole floats.
    bytes_ = size_arg(c_, "bytes", V == CopyVariant::thrust ? 4 : 1);
    begin_prepare(2 * slotted(bytes_));
    // Thrust copies floats: seeded floats (no NaN patterns); the others copy bytes: seeded words.
    in_ = seeded_input(bytes_, seed_, V == CopyVariant::thrust ? kFloats : kWords, sms(), stream(), slotted(bytes_));
    replicate_slots(in_, bytes_);
    out_ = DeviceBuffer(slotted(bytes_));
    if (V != CopyVariant::kernel) library_call_as_issued();
  }
  void poison() override {
    poison_device(out_.get(), out_.bytes(), stream());
    forget_written_slots();
  }
  double run(int batch) override {
    const auto* in = static_cast<const unsigned char*>(in_.get());
    auto* out = static_cast<unsigned char*>(out_.get());
    const std::size_t bytes = bytes_, stride = slot_stride(bytes_);
    const int sms = this->sms();
    if (V == CopyVariant::kernel) {
      return timed_passes(batch, bytes, [=](CUstream_st* s, kernels::Passes p) {
        return kernels::launch_copy(in, out, bytes, sms, s, p);
      });
    }
    return timed(batch, [=](CUstream_st* s, int) -> int {
      const std::size_t off = next_slot_offset(stride);
      if (V == CopyVariant::memcpy_ce)
        return static_cast<int>(cudaMemcpyAsync(out + off, in + off, bytes, cudaMemcpyDeviceToDevice, s));
      return kernels::thrust_copy(reinterpret_cast<const float*>(in + off), reinterpret_cast<float*>(out + off),
                                  bytes / 4, s);
    });
  }
  Verification verify() override {
    // The kernel's every launch covers every slot; the library calls, the slots they wrote.
    std::vector<int> slots(static_cast<std::size_t>(c_.slots));
    std::iota(slots.begin(), slots.end(), 0);
    if (V != CopyVariant::kernel) slots = written_slots();
    for (int k : slots) {
      const void* got =
          fetch_to_host(static_cast<const unsigned char*>(out_.get()) + k * slot_stride(bytes_), bytes_, stream());
      Verification v = V == CopyVariant::thrust
                           ? check_copy(SeededFloats{seed_}, static_cast<const float*>(got), bytes_ / 4)
                           : check_copy(SeededWords{seed_}, got, bytes_);
      if (!v.ok) return c_.slots > 1 ? Verification::fail("slot " + std::to_string(k) + ": " + v.message) : v;
    }
    return Verification::pass();
  }

 private:
  std::size_t bytes_ = 0;
  DeviceBuffer in_, out_;
};

// ---- read: kernel | cub ----

enum class ReadVariant { kernel, cub };

template <ReadVariant V>
class ReadWorkload final : public CudaMemoryWorkload {
 public:
  using CudaMemoryWorkload::CudaMemoryWorkload;
  void prepare() override {
    const std::size_t bytes = size_arg(c_, "bytes", 4);
    n_ = bytes / 4;
    if (V == ReadVariant::kernel) {
      max_blocks_ = 64 * std::max(sms(), 1);
      begin_prepare(slotted(bytes) + static_cast<std::size_t>(max_blocks_) * 4);
      in_ = seeded_input(bytes, seed_, kWords, sms(), stream(), slotted(bytes));
      out_ = DeviceBuffer(static_cast<std::size_t>(max_blocks_) * 4);
    } else {
      begin_prepare(slotted(bytes));
      in_ = seeded_input(bytes, seed_, kWords, sms(), stream(), slotted(bytes));
      out_ = DeviceBuffer(4);
      std::size_t temp_bytes = 0;  // size query only: CUB enqueues nothing
      GPUBENCH_CUDA_CHECK(kernels::cub_reduce_sum(in_.as<std::uint32_t>(), n_, out_.as<std::uint32_t>(), nullptr,
                                                  &temp_bytes, stream()));
      require_device_memory(temp_bytes, c_.name() + " (CUB temporary storage)");
      temp_ = DeviceBuffer(std::max<std::size_t>(temp_bytes, 4));
    }
    replicate_slots(in_, bytes);
    if (V != ReadVariant::kernel) library_call_as_issued();
  }
  void poison() override { poison_device(out_.get(), out_.bytes(), stream()); }
  double run(int batch) override {
    const auto* in = in_.as<const std::uint32_t>();
    auto* out = out_.as<std::uint32_t>();
    const std::size_t n = n_, stride_words = slot_stride(n_ * 4) / 4;
    if (V == ReadVariant::kernel) {
      const int max_blocks = max_blocks_, sms = this->sms();
      int* blocks = &blocks_;  // set on the host by each launch (also while being captured)
      return timed_passes(batch, n * 4, [=](CUstream_st* s, kernels::Passes p) {
        return kernels::launch_read(in, n, out, max_blocks, blocks, sms, s, p);
      });
    }
    void* temp = temp_.get();
    const std::size_t temp_bytes = temp_.bytes();
    return timed(batch, [=](CUstream_st* s, int) {
      std::size_t size = temp_bytes;
      return kernels::cub_reduce_sum(in + next_slot_offset(stride_words * 4) / 4, n, out, temp, &size, s);
    });
  }
  Verification verify() override {
    std::uint32_t sum = 0;
    // Every slot holds the same words: a launch of P passes sums them P times.
    std::uint32_t times = 1;
    if (V == ReadVariant::kernel) {
      if (blocks_ < 1 || blocks_ > max_blocks_)
        return Verification::fail("launch_read reported " + std::to_string(blocks_) + " blocks (max " +
                                  std::to_string(max_blocks_) + ")");
      const auto partial = copy_to_host(out_.as<const std::uint32_t>(), static_cast<std::size_t>(blocks_), stream());
      for (std::uint32_t p : partial) sum += p;  // wrapping, like the kernel
      times = static_cast<std::uint32_t>(std::max(passes(), 1));
    } else {
      sum = copy_to_host(out_.as<const std::uint32_t>(), 1, stream())[0];
    }
    return check_sum_u32(SeededWords{seed_}, n_, sum, times);
  }

 private:
  std::size_t n_ = 0;
  int max_blocks_ = 0;
  int blocks_ = 0;
  DeviceBuffer in_, out_, temp_;
};

// ---- block_set_read: kernel ----

// Every block of the grid (args["readers"] of them, from the row's work model) reads the whole
// set; each block's sum is checked, so a block that skipped its share is caught.
class BlockSetReadWorkload final : public CudaMemoryWorkload {
 public:
  using CudaMemoryWorkload::CudaMemoryWorkload;
  void prepare() override {
    const std::size_t bytes = size_arg(c_, "bytes", 16);
    n_ = bytes / 4;
    blocks_ = static_cast<int>(size_arg(c_, "readers"));
    // The work model counts readers x bytes per pass: the grid must be what the row was made for.
    if (blocks_ < 1 || blocks_ != sms() * kernels::kBlockSetReadBlocksPerSm)
      throw std::logic_error(c_.name() + ": made for " + std::to_string(blocks_) + " blocks, this device runs " +
                             std::to_string(sms() * kernels::kBlockSetReadBlocksPerSm));
    begin_prepare(bytes + static_cast<std::size_t>(blocks_) * 4);
    in_ = seeded_input(bytes, seed_, kWords, sms(), stream());
    out_ = DeviceBuffer(static_cast<std::size_t>(blocks_) * 4);
  }
  void poison() override { poison_device(out_.get(), out_.bytes(), stream()); }
  double run(int batch) override {
    const auto* in = in_.as<const std::uint32_t>();
    auto* out = out_.as<std::uint32_t>();
    const std::size_t n = n_;
    const int blocks = blocks_;
    return timed_passes(batch, n * 4, [=](CUstream_st* s, kernels::Passes p) {
      return kernels::launch_block_set_read(in, n, out, blocks, s, p);
    });
  }
  Verification verify() override {
    const auto partial = copy_to_host(out_.as<const std::uint32_t>(), static_cast<std::size_t>(blocks_), stream());
    const auto times = static_cast<std::uint32_t>(std::max(passes(), 1));
    // Block 0 against the host's sum; every other block must have read exactly what it did.
    Verification v = check_sum_u32(SeededWords{seed_}, n_, partial.at(0), times);
    if (!v.ok) return Verification::fail("block 0: " + v.message);
    for (std::size_t b = 1; b < partial.size(); ++b)
      if (partial[b] != partial[0])
        return Verification::fail("block " + std::to_string(b) + ": " +
                                  check_sum_u32(SeededWords{seed_}, n_, partial[b], times).message);
    return Verification::pass();
  }

 private:
  std::size_t n_ = 0;
  int blocks_ = 0;
  DeviceBuffer in_, out_;
};

// ---- write: kernel ----

class WriteWorkload final : public CudaMemoryWorkload {
 public:
  using CudaMemoryWorkload::CudaMemoryWorkload;
  void prepare() override {
    const std::size_t bytes = size_arg(c_, "bytes", 4);
    n_ = bytes / 4;
    begin_prepare(slotted(bytes));
    out_ = DeviceBuffer(slotted(bytes));
    pattern_seed_ = static_cast<std::uint32_t>(seed_ >> 32) | 1u;
  }
  void poison() override { poison_device(out_.get(), out_.bytes(), stream()); }
  double run(int batch) override {
    auto* out = out_.as<std::uint32_t>();
    const std::size_t n = n_;
    const std::uint32_t seed = pattern_seed_;
    const int sms = this->sms();
    return timed_passes(batch, n * 4, [=](CUstream_st* s, kernels::Passes p) {
      return kernels::launch_write(out, n, seed, sms, s, p);
    });
  }
  Verification verify() override {
    const std::size_t stride_words = slot_stride(n_ * 4) / 4;
    for (int k = 0; k < c_.slots; ++k) {
      const std::uint32_t* got = fetch_to_host(out_.as<const std::uint32_t>() + k * stride_words, n_, stream());
      Verification v = check_write_pattern(got, n_, pattern_seed_);
      if (!v.ok) return c_.slots > 1 ? Verification::fail("slot " + std::to_string(k) + ": " + v.message) : v;
    }
    return Verification::pass();
  }

 private:
  std::size_t n_ = 0;
  std::uint32_t pattern_seed_ = 0;
  DeviceBuffer out_;
};

// ---- strided: kernel ----

class StridedWorkload final : public CudaMemoryWorkload {
 public:
  using CudaMemoryWorkload::CudaMemoryWorkload;
  void prepare() override {
    const std::size_t bytes = size_arg(c_, "bytes", 4);
    const std::size_t stride = size_arg(c_, "stride");
    if (stride < 1 || stride > (1u << 30)) throw SkipCase("stride out of range: " + std::to_string(stride));
    n_ = bytes / 4;
    stride_ = static_cast<int>(stride);
    begin_prepare(2 * bytes);
    in_ = seeded_input(bytes, seed_, kFloats, sms(), stream());
    out_ = DeviceBuffer(bytes);
  }
  // Every element of out is poisoned, so untouched ones can be checked to still be poison.
  void poison() override { poison_device(out_.get(), out_.bytes(), stream()); }
  double run(int batch) override {
    const auto* in = in_.as<const float>();
    auto* out = out_.as<float>();
    const std::size_t n = n_;
    const int stride = stride_, sms = this->sms();
    return timed(batch, [=](CUstream_st* s, int) { return kernels::launch_strided_copy(in, out, n, stride, sms, s); });
  }
  Verification verify() override {
    return check_strided(SeededFloats{seed_}, fetch_to_host(out_.as<const float>(), n_, stream()), n_, stride_);
  }

 private:
  std::size_t n_ = 0;
  int stride_ = 1;
  DeviceBuffer in_, out_;
};

// ---- gather: kernel | thrust ----

enum class GatherVariant { kernel, thrust };

template <GatherVariant V>
class GatherWorkload final : public CudaMemoryWorkload {
 public:
  using CudaMemoryWorkload::CudaMemoryWorkload;
  void prepare() override {
    const std::size_t bytes = size_arg(c_, "bytes", 4);
    n_ = bytes / 4;
    require_u32_count(n_, "the gather");
    begin_prepare(3 * bytes);  // in, idx, out
    in_ = seeded_input(bytes, seed_, kFloats, sms(), stream());
    idx_ = DeviceBuffer(n_ * 4);
    out_ = DeviceBuffer(bytes);
    // The permutation is generated on the device (large index arrays cost no host time); verify()
    // reads it back beside the output.
    GPUBENCH_CUDA_CHECK(kernels::random_permutation(idx_.as<std::uint32_t>(), n_, seed_ ^ 0x5bd1e995u, stream()));
  }
  void poison() override { poison_device(out_.get(), out_.bytes(), stream()); }
  double run(int batch) override {
    const auto* in = in_.as<const float>();
    const auto* idx = idx_.as<const std::uint32_t>();
    auto* out = out_.as<float>();
    const std::size_t n = n_;
    const int sms = this->sms();
    return timed(batch, [=](CUstream_st* s, int) {
      return V == GatherVariant::kernel ? kernels::launch_gather(in, idx, out, n, sms, s)
                                        : kernels::thrust_gather(in, idx, out, n, s);
    });
  }
  Verification verify() override {
    const float* got = fetch_to_host(out_.as<const float>(), n_, stream());
    const std::uint32_t* idx = fetch_to_host(idx_.as<const std::uint32_t>(), n_, stream(), StagingSlot::second);
    return check_gather(SeededFloats{seed_}, idx, got, n_);  // the indices' range too
  }

 private:
  std::size_t n_ = 0;
  DeviceBuffer in_, idx_, out_;
};

// ---- chase: kernel ----

// Each launch of a batch chases `steps` entries from its own seeded starting entry and writes
// its own end point and cycle count; every end point is checked against the host walk. (With
// the table's 65536 steps, a DRAM-sized ring runs ~40 ms per launch, so its batches are 1 and
// the L2 is flushed before it; rings small enough to batch are cache-resident by design.)
class ChaseWorkload final : public CudaMemoryWorkload {
 public:
  using CudaMemoryWorkload::CudaMemoryWorkload;
  void prepare() override {
    const std::size_t bytes = size_arg(c_, "bytes", 4);
    n_ = bytes / 4;
    steps_ = size_arg(c_, "steps");
    if (n_ == 0 || steps_ == 0) throw SkipCase("empty pointer chase");
    require_u32_count(n_, "the chase ring");
    begin_prepare(bytes + kSlotReserve * 12);
    next_ = DeviceBuffer(bytes);
    // Made on the device from the ring's formula; verification computes each chase's end from it.
    GPUBENCH_CUDA_CHECK(kernels::launch_chase_ring_fill(next_.as<std::uint32_t>(), n_, seed_, sms(), stream()));
  }
  void poison() override {
    if (sinks_.get()) poison_device(sinks_.get(), sinks_.bytes(), stream());
    if (cycles_.get()) poison_device(cycles_.get(), cycles_.bytes(), stream());
  }
  double run(int batch) override {
    reserve_slots(batch);
    last_batch_ = batch;
    cycles_host_.clear();
    const auto* next = next_.as<const std::uint32_t>();
    auto* sinks = sinks_.as<std::uint32_t>();
    auto* cycles = cycles_.as<long long>();
    const std::size_t steps = steps_, n = n_;
    const std::uint64_t seed = seed_;
    const double seconds = timed(batch, [=](CUstream_st* s, int k) {
      return kernels::launch_pointer_chase(next, steps, chase_start(n, seed, k), sinks + k, cycles + k, s);
    });
    // The SM clock right after the run, before an idle GPU lowers it, converts cycles to ns.
    sm_clock_MHz_ = dev_.sm_clock_MHz_now();
    return seconds;
  }
  Verification verify() override {
    if (last_batch_ < 1) return Verification::fail("the chase never ran");
    const auto sinks = copy_to_host(sinks_.as<const std::uint32_t>(), static_cast<std::size_t>(last_batch_), stream());
    const auto& cycles = cycles_of_last_run();
    // The ring as the chases read it (made on the device): each launch's path and end point.
    const std::uint32_t* ring = fetch_to_host(next_.as<const std::uint32_t>(), n_, stream());
    for (int k = 0; k < last_batch_; ++k) {
      const Verification v = check_chase_path(ring, n_, seed_, chase_start(n_, seed_, k), steps_, sinks[k]);
      if (!v.ok) return Verification::fail("launch " + std::to_string(k) + ": " + v.message);
      if (cycles[k] <= 0 || cycles[k] == kPoisonCycles)
        return Verification::fail("launch " + std::to_string(k) + ": cycle count not written (" +
                                  std::to_string(cycles[k]) + ")");
    }
    return Verification::pass();
  }
  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    auto counters = CudaMemoryWorkload::extra_counters(seconds_per_op);
    const auto& cycles = cycles_of_last_run();
    if (cycles.empty()) return counters;
    double sum = 0;
    for (long long c : cycles) sum += static_cast<double>(c);
    const double per_load = sum / static_cast<double>(cycles.size()) / static_cast<double>(steps_);
    counters["latency_cycles"] = per_load;
    if (sm_clock_MHz_ > 0) counters["latency_ns"] = per_load * 1e3 / sm_clock_MHz_;
    return counters;
  }

 private:
  static constexpr std::size_t kSlotReserve = 4096;  // the runner's largest batch
  static constexpr long long kPoisonCycles =
      static_cast<long long>((static_cast<std::uint64_t>(kPoisonU32) << 32) | kPoisonU32);

  // Per-launch result slots; growing them changes the captured pointers, so the cached graph
  // is dropped. Allocation synchronizes: it happens here, before any event is recorded.
  void reserve_slots(int batch) {
    const auto want = static_cast<std::size_t>(batch);
    if (sinks_.bytes() >= want * 4) return;
    sinks_ = DeviceBuffer(want * 4);
    cycles_ = DeviceBuffer(want * 8);
    poison_device(sinks_.get(), sinks_.bytes(), stream());
    poison_device(cycles_.get(), cycles_.bytes(), stream());
    timer_.invalidate();
  }

  const std::vector<long long>& cycles_of_last_run() {
    if (cycles_host_.empty() && last_batch_ > 0)
      cycles_host_ = copy_to_host(cycles_.as<const long long>(), static_cast<std::size_t>(last_batch_), stream());
    return cycles_host_;
  }

  std::size_t n_ = 0;
  std::size_t steps_ = 0;
  int last_batch_ = 0;
  double sm_clock_MHz_ = 0;
  std::vector<long long> cycles_host_;
  DeviceBuffer next_, sinks_, cycles_;
};

template <class W>
std::unique_ptr<Workload> make(const BenchCase& c, Backend& b) {
  return std::make_unique<W>(c, cuda_device_of(b));
}

}  // namespace

void families::global_memory::add_cuda_workloads(WorkloadTable& t) {
  t.add("bandwidth/copy/kernel", &make<CopyWorkload<CopyVariant::kernel>>);
  t.add("bandwidth/copy/memcpy_ce", &make<CopyWorkload<CopyVariant::memcpy_ce>>);
  t.add("bandwidth/copy/thrust", &make<CopyWorkload<CopyVariant::thrust>>);
  t.add("bandwidth/read/kernel", &make<ReadWorkload<ReadVariant::kernel>>);
  t.add("bandwidth/read/cub", &make<ReadWorkload<ReadVariant::cub>>);
  t.add("bandwidth/block_set_read/kernel", &make<BlockSetReadWorkload>);
  t.add("bandwidth/write/kernel", &make<WriteWorkload>);
  t.add("bandwidth/strided/kernel", &make<StridedWorkload>);
  t.add("bandwidth/gather/kernel", &make<GatherWorkload<GatherVariant::kernel>>);
  t.add("bandwidth/gather/thrust", &make<GatherWorkload<GatherVariant::thrust>>);
  t.add("bandwidth/chase/kernel", &make<ChaseWorkload>);
  t.not_here("bandwidth/copy/memcpy", "the host's memcpy is the host backend's reference");
}

}  // namespace gpubench
