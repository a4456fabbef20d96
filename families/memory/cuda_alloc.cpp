// Allocation rows on a CUDA device (families/memory/cases.cpp): what one allocate + free pair
// costs per allocator, what allocating inside a loop costs a copy kernel, and what a fragmented
// pattern leaves allocatable.
//
// Timing: the host clock around each API call (allocation is a host-side API cost: cudaMalloc
// and cudaFree synchronize; a pool with release threshold 0 gives a freed block back to the
// driver at the stream synchronize, which the miss row times with its pair; the hit row's pair
// is the two calls alone). Every operation's time is kept (OpTimes) for p50/p99.
// Verification: after each run's timed operations, one untimed probe operation of the same kind
// allocates a block, poisons it, writes a seeded pattern (or runs the copy kernel into it),
// copies it back into the workload's output and frees it. A block that was not writable, a
// kernel that did not run, or an output never refreshed (poison() fills it) fails verify(). The
// probe also asks the runtime what the block is (cudaPointerGetAttributes): page-locked host
// memory for cudaMallocHost and cudaHostRegister, this device's memory for the others.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "families/global_memory/global_memory.h"
#include "families/memory/cuda_workloads.h"
#include "families/memory/op_times.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/cuda_workload.h"
#include "harness/cuda/device_buffer.h"
#include "harness/cuda/timing.h"
#include "harness/verify.h"

namespace gpubench::memory {

namespace {

using Clock = std::chrono::steady_clock;

/// Bytes of the pattern each probe writes and reads back (the whole block when smaller).
constexpr std::size_t kProbeBytes = 4096;

enum class Allocator { cuda_malloc, async_pool_miss, async_pool_hit, preallocated, pinned_host, host_register };

bool on_device(Allocator a) { return a != Allocator::pinned_host && a != Allocator::host_register; }
bool pooled(Allocator a) { return a == Allocator::async_pool_miss || a == Allocator::async_pool_hit; }

/// A device block freed on an error path: nothing thrown (the error being reported is another).
/// A pooled block's free is seen complete by the host (a synchronize) before the pool is trimmed:
/// a free the host has not seen complete can count as in use (cudaMemPoolTrimTo).
void free_device_quietly(void* p, bool pooled_block, cudaStream_t stream) noexcept {
  if (pooled_block) {
    (void)cudaFreeAsync(p, stream);
    (void)cudaStreamSynchronize(stream);
  } else {
    (void)cudaFree(p);
  }
  (void)cudaGetLastError();
}

/// The device's current stream-ordered pool (the one cudaMallocAsync draws from: the default
/// pool unless the process set another), its release threshold set for this workload and put
/// back (with the pool trimmed) when it ends, so no benchmark leaves pooled memory behind.
class PoolThreshold {
 public:
  PoolThreshold(int device, std::uint64_t threshold) {
    int supported = 0;
    GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device));
    if (!supported) throw SkipCase("this device or driver has no stream-ordered memory pools (cudaMallocAsync)");
    GPUBENCH_CUDA_CHECK(cudaDeviceGetMemPool(&pool_, device));
    GPUBENCH_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &saved_));
    GPUBENCH_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
  }
  ~PoolThreshold() {
    if (!pool_) return;
    GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &saved_));
    GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaMemPoolTrimTo(pool_, 0));
  }
  PoolThreshold(const PoolThreshold&) = delete;
  PoolThreshold& operator=(const PoolThreshold&) = delete;

  /// Memory the pool holds, in use or not.
  std::uint64_t reserved_bytes() const {
    std::uint64_t reserved = 0;
    GPUBENCH_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved));
    return reserved;
  }
  /// Gives the driver back what the pool holds unused beyond `bytes` (cudaMemPoolTrimTo).
  void trim_to(std::uint64_t bytes) const { GPUBENCH_CUDA_CHECK(cudaMemPoolTrimTo(pool_, bytes)); }

  /// Memory the pool holds and no allocation uses (what it can hand out without the driver).
  std::uint64_t unused_bytes() const {
    const std::uint64_t reserved = reserved_bytes();
    std::uint64_t used = 0;
    GPUBENCH_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &used));
    return reserved > used ? reserved - used : 0;
  }

 private:
  cudaMemPool_t pool_ = nullptr;
  std::uint64_t saved_ = 0;
};

/// One allocator's allocate and free, as the rows time them.
class AllocatorCalls {
 public:
  AllocatorCalls(Allocator a, std::size_t bytes, CudaDevice& dev) : a_(a), bytes_(bytes), dev_(dev) {}

  void prepare() {
    waiter_ = std::make_unique<StreamWaiter>();
    if (pooled(a_))
      pool_ = std::make_unique<PoolThreshold>(
          dev_.index(), a_ == Allocator::async_pool_hit ? std::numeric_limits<std::uint64_t>::max() : 0);
    if (a_ == Allocator::preallocated) {
      for (auto& b : spare_) b = DeviceBuffer(bytes_);
      for (auto& b : spare_) free_list_.push_back(b.get());
    }
    if (a_ == Allocator::host_register) {
      // malloc'd and touched once, as an application's buffer is before it pins it.
      registered_.reset(static_cast<unsigned char*>(std::malloc(bytes_)));
      if (!registered_) throw SkipCase("cannot allocate " + std::to_string(bytes_) + " bytes of host memory");
      std::memset(registered_.get(), 1, bytes_);
    }
  }

  void* allocate() {
    void* p = nullptr;
    switch (a_) {
      case Allocator::cuda_malloc: GPUBENCH_CUDA_CHECK(cudaMalloc(&p, bytes_)); break;
      case Allocator::async_pool_miss:
      case Allocator::async_pool_hit: GPUBENCH_CUDA_CHECK(cudaMallocAsync(&p, bytes_, dev_.stream())); break;
      case Allocator::preallocated:
        if (free_list_.empty()) throw std::logic_error("the preallocated free list is empty");
        p = free_list_.back();
        free_list_.pop_back();
        break;
      case Allocator::pinned_host: GPUBENCH_CUDA_CHECK(cudaMallocHost(&p, bytes_)); break;
      case Allocator::host_register:
        GPUBENCH_CUDA_CHECK(cudaHostRegister(registered_.get(), bytes_, cudaHostRegisterDefault));
        p = registered_.get();
        break;
    }
    return p;
  }

  /// Frees `p`; returns the seconds of it that are not the allocator's (to take off its time).
  double release(void* p) {
    double untimed = 0;
    switch (a_) {
      case Allocator::cuda_malloc: GPUBENCH_CUDA_CHECK(cudaFree(p)); break;
      case Allocator::async_pool_miss: {
        GPUBENCH_CUDA_CHECK(cudaFreeAsync(p, dev_.stream()));
        // A synchronize is where a pool with release threshold 0 gives its memory back to the
        // driver (an event query is none): after a bounded wait (not the allocator's time), it
        // returns at once, releasing.
        const auto waited = Clock::now();
        waiter_->wait(dev_.stream(), "a pool's free", /*spin=*/true);
        untimed = seconds_since(waited);
        GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(dev_.stream()));
        break;
      }
      case Allocator::async_pool_hit:
        // The pair alone: the next allocation on this stream reuses the block in stream order,
        // with no synchronize (which would cost more than the hit itself).
        GPUBENCH_CUDA_CHECK(cudaFreeAsync(p, dev_.stream()));
        break;
      case Allocator::preallocated: free_list_.push_back(p); break;
      case Allocator::pinned_host: GPUBENCH_CUDA_CHECK(cudaFreeHost(p)); break;
      case Allocator::host_register: GPUBENCH_CUDA_CHECK(cudaHostUnregister(p)); break;
    }
    return untimed;
  }

  /// After the last free of a run, untimed: a pooled free seen complete by the host (a
  /// synchronize, after a bounded wait), or the pool could count the block as in use when
  /// ~PoolThreshold trims it (cudaMemPoolTrimTo) and keep up to 1 GiB past the row.
  void settle() {
    if (!pooled(a_)) return;
    waiter_->wait(dev_.stream(), "a pool's frees");
    GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(dev_.stream()));
  }

  /// release(p) on an error path (free_device_quietly for the device's blocks).
  void release_quietly(void* p) noexcept {
    switch (a_) {
      case Allocator::cuda_malloc:
      case Allocator::async_pool_miss:
      case Allocator::async_pool_hit: free_device_quietly(p, pooled(a_), dev_.stream()); break;
      case Allocator::preallocated: free_list_.push_back(p); break;
      case Allocator::pinned_host: (void)cudaFreeHost(p); break;
      case Allocator::host_register: (void)cudaHostUnregister(p); break;
    }
    (void)cudaGetLastError();
  }

  /// Copies `n` bytes of `pattern` into block `p` and back into `out` (host memory is written
  /// and read directly; device memory through the stream, after poisoning the block). Returns
  /// why the block is not what the allocator promises ("" when it is; see block_kind_error).
  std::string probe(void* p, const unsigned char* pattern, unsigned char* out, std::size_t n) {
    std::string kind_error = block_kind_error(p);
    if (!on_device(a_)) {
      std::memset(p, 0x5a, n);
      std::memcpy(p, pattern, n);
      std::memcpy(out, p, n);
      return kind_error;
    }
    GPUBENCH_CUDA_CHECK(cudaMemsetAsync(p, 0x5a, n, dev_.stream()));
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(p, pattern, n, cudaMemcpyHostToDevice, dev_.stream()));
    // `out` is pageable: the copy back returns once done, so what comes before it is waited for first.
    wait_for_stream(dev_.stream(), "an allocation probe's fill");
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(out, p, n, cudaMemcpyDeviceToHost, dev_.stream()));
    wait_for_stream(dev_.stream(), "an allocation probe's copy back");
    return kind_error;
  }

  /// What the runtime says the block is, against what the allocator promises: page-locked host
  /// memory for cudaMallocHost and cudaHostRegister (a copy through plain pageable memory passes
  /// the data check as well, so only the runtime's own record shows that the pinning took),
  /// memory of this device for the others. "" when it agrees.
  std::string block_kind_error(const void* p) const {
    cudaPointerAttributes attributes{};
    GPUBENCH_CUDA_CHECK(cudaPointerGetAttributes(&attributes, p));
    const cudaMemoryType want = on_device(a_) ? cudaMemoryTypeDevice : cudaMemoryTypeHost;
    if (attributes.type != want)
      return std::string("the block is ") + memory_type_name(attributes.type) + ", not " + memory_type_name(want) +
             " (cudaPointerGetAttributes)";
    if (on_device(a_) && attributes.device != dev_.index())
      return "the block is memory of device " + std::to_string(attributes.device) + ", not of device " +
             std::to_string(dev_.index()) + " (cudaPointerGetAttributes)";
    return {};
  }

  static const char* memory_type_name(cudaMemoryType t) {
    switch (t) {
      case cudaMemoryTypeUnregistered: return "pageable host memory";
      case cudaMemoryTypeHost: return "page-locked host memory";
      case cudaMemoryTypeDevice: return "device memory";
      case cudaMemoryTypeManaged: return "managed memory";
    }
    return "memory of an unknown kind";
  }

  /// Required alignment of what allocate() returns: 256 bytes for device memory and pinned host
  /// memory (what CUDA promises for its allocation routines; a page in practice, but not
  /// documented), malloc's 16 bytes for a registered buffer.
  std::uintptr_t alignment() const { return a_ == Allocator::host_register ? 16 : 256; }

 private:
  struct FreeDeleter {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  Allocator a_;
  std::size_t bytes_;
  CudaDevice& dev_;
  std::unique_ptr<PoolThreshold> pool_;
  std::unique_ptr<StreamWaiter> waiter_;
  DeviceBuffer spare_[2];
  std::vector<void*> free_list_;
  std::unique_ptr<unsigned char, FreeDeleter> registered_;
};

/// memory/alloc/<allocator>/bytes:S: one allocate + free pair per operation.
class AllocWorkload final : public Workload {
 public:
  AllocWorkload(const BenchCase& c, CudaDevice& dev, Allocator a)
      : name_(c.name()),
        bytes_(static_cast<std::size_t>(c.arg("bytes"))),
        probe_bytes_(std::min(bytes_, kProbeBytes)),
        a_(a),
        dev_(dev),
        calls_(a, bytes_, dev),
        seed_(case_seed(c)) {}

  void prepare() override {
    dev_.activate();
    // The pair's block, the preallocated blocks and the pool's reserve at most.
    if (on_device(a_)) require_device_memory(3 * bytes_, name_);
    calls_.prepare();
    pattern_.resize(probe_bytes_);
    fill_random_u32(pattern_.data(), probe_bytes_, seed_);
    out_.assign(probe_bytes_, 0);
  }

  void poison() override { poison_fill(out_.data(), out_.size()); }

  double run(int batch) override {
    times_.start_run(batch);
    for (int i = 0; i < batch; ++i) {
      const auto t0 = Clock::now();
      void* p = calls_.allocate();
      const double allocated = seconds_since(t0);
      check_block(p);
      const auto t1 = Clock::now();
      const double untimed = calls_.release(p);
      times_.add(allocated + seconds_since(t1) - untimed);
    }
    void* p = calls_.allocate();  // the untimed probe (see the top of the file)
    std::string kind_error;
    try {
      kind_error = calls_.probe(p, pattern_.data(), out_.data(), probe_bytes_);
    } catch (const DeviceHung&) {
      throw;  // freeing the block would wait on the hung device: the runner leaves it allocated
    } catch (...) {
      calls_.release_quietly(p);  // a failed copy left a block of up to 1 GiB: the leak check would flag it
      throw;
    }
    if (bad_block_.empty() && !kind_error.empty()) bad_block_ = kind_error;
    (void)calls_.release(p);
    calls_.settle();
    return times_.total();
  }

  Verification verify() override {
    if (!bad_block_.empty()) return Verification::fail(bad_block_);
    return check_copy(pattern_.data(), out_.data(), probe_bytes_);
  }

  std::map<std::string, double> extra_counters(double) override { return times_.counters(); }

 private:
  // Outside the timed calls: a null or misaligned block fails the row (recorded, not thrown, so
  // the message names the first one).
  void check_block(const void* p) {
    if (!bad_block_.empty()) return;
    if (p == nullptr)
      bad_block_ = "the allocator returned a null block";
    else if (reinterpret_cast<std::uintptr_t>(p) % calls_.alignment() != 0)
      bad_block_ =
          "the allocator returned a block aligned to less than " + std::to_string(calls_.alignment()) + " bytes";
  }

  std::string name_;
  std::size_t bytes_, probe_bytes_;
  Allocator a_;
  CudaDevice& dev_;
  AllocatorCalls calls_;
  std::uint64_t seed_;
  OpTimes times_;
  std::vector<unsigned char> pattern_, out_;
  std::string bad_block_;
};

enum class LoopAlloc { cuda_malloc_each, async_pool_each, allocated_once };

/// memory/alloc_loop/<how>/bytes:S: "allocate, run the copy kernel, free" per iteration, against
/// the copy into a destination allocated once. The whole batch on the host clock, ending when the
/// stream has run it (a bounded wait: cudaFree synchronizes inside the loop already; the pool's
/// frees are stream-ordered and need no synchronize: that is what pools are for).
class AllocLoopWorkload final : public CudaWorkload {
 public:
  AllocLoopWorkload(const BenchCase& c, CudaDevice& dev, LoopAlloc how)
      : CudaWorkload(c, dev), bytes_(count_arg("bytes")), how_(how) {}

  void prepare() override {
    begin_prepare(4 * bytes_);  // source, destination or output, the loop's block, the pool's reserve
    waiter_ = std::make_unique<StreamWaiter>();
    if (how_ == LoopAlloc::async_pool_each)
      pool_ = std::make_unique<PoolThreshold>(dev_.index(), std::numeric_limits<std::uint64_t>::max());
    host_src_.resize(bytes_);
    fill_random_u32(host_src_.data(), bytes_, seed_);
    src_ = DeviceBuffer(bytes_);
    out_ = DeviceBuffer(bytes_);
    copy_to_device(src_.get(), host_src_.data(), bytes_, stream());
  }

  void poison() override { poison_device(out_.get(), bytes_, stream()); }

  double run(int batch) override {
    wait_for_stream(stream(), "the stream before an allocation loop");
    const auto t0 = Clock::now();
    for (int i = 0; i < batch; ++i) {
      if (how_ == LoopAlloc::allocated_once) {
        GPUBENCH_CUDA_CHECK(kernels::launch_copy(src_.get(), out_.get(), bytes_, sms(), stream()));
        continue;
      }
      void* dst = allocate();
      try {
        GPUBENCH_CUDA_CHECK(kernels::launch_copy(src_.get(), dst, bytes_, sms(), stream()));
      } catch (...) {
        release_quietly(dst);  // a block of up to 256 MiB: the leak check would flag the run
        throw;
      }
      release(dst);
    }
    waiter_->wait(stream(), "an allocation loop", /*spin=*/true);  // host-timed: seen at once
    const double seconds = seconds_since(t0);
    if (how_ != LoopAlloc::allocated_once) probe();
    return seconds;
  }

  Verification verify() override {
    return check_copy(host_src_.data(), copy_to_host(out_.as<unsigned char>(), bytes_, stream()).data(), bytes_);
  }

  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    return {{"us_per_iteration", seconds_per_op * 1e6}};
  }

 private:
  void* allocate() {
    void* p = nullptr;
    if (how_ == LoopAlloc::cuda_malloc_each)
      GPUBENCH_CUDA_CHECK(cudaMalloc(&p, bytes_));
    else
      GPUBENCH_CUDA_CHECK(cudaMallocAsync(&p, bytes_, stream()));
    return p;
  }
  void release(void* p) {
    if (how_ == LoopAlloc::cuda_malloc_each)
      GPUBENCH_CUDA_CHECK(cudaFree(p));
    else
      GPUBENCH_CUDA_CHECK(cudaFreeAsync(p, stream()));
  }
  /// release(p) when queueing work into it failed (no wait involved; free_device_quietly).
  void release_quietly(void* p) noexcept { free_device_quietly(p, how_ != LoopAlloc::cuda_malloc_each, stream()); }
  // One untimed iteration whose block is poisoned first and copied into the output: the copy
  // kernel really wrote a block this allocator handed out.
  void probe() {
    void* dst = allocate();
    try {
      GPUBENCH_CUDA_CHECK(cudaMemsetAsync(dst, 0x5a, bytes_, stream()));
      GPUBENCH_CUDA_CHECK(kernels::launch_copy(src_.get(), dst, bytes_, sms(), stream()));
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(out_.get(), dst, bytes_, cudaMemcpyDeviceToDevice, stream()));
    } catch (...) {
      release_quietly(dst);
      throw;
    }
    release(dst);
    wait_for_stream(stream(), "an allocation loop's probe");
    // The run's pooled frees seen complete by the host (a synchronize: the event query above may
    // not count), so that ~PoolThreshold's trim gives their memory back.
    if (how_ == LoopAlloc::async_pool_each) GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }

  std::size_t bytes_;
  LoopAlloc how_;
  std::unique_ptr<PoolThreshold> pool_;
  std::unique_ptr<StreamWaiter> waiter_;
  std::vector<unsigned char> host_src_;
  DeviceBuffer src_, out_;
};

/// memory/fragmentation/<allocator>/small:1MiB,large:64MiB: does a nearly full device, after
/// interleaved allocations and frees, still give one large block? A ballast block (cudaMalloc,
/// held for the row) takes the free memory beyond kFragmentationReserve and a pattern of at most
/// kFragmentationPattern; each round allocates small and large blocks interleaved over that
/// pattern, frees the large ones (holes between the small ones), and finds the largest block the
/// allocator can still hand out by bisection between one large block and everything available
/// (the holes plus the reserve). Only the holes and the reserve are free then, so an allocator
/// that needs contiguous memory reads about reserve / available, and one that maps physical pages
/// into one virtual range (cudaMalloc on current GPUs) close to 100 %; a pool (cudaMallocAsync,
/// memory kept in the pool) shows whether it can hand out what it holds as one block. One
/// operation = one round; its time is the pattern's allocations.
constexpr std::size_t kFragmentationReserve = std::size_t{1} << 30;  ///< free memory left outside the pattern
constexpr std::size_t kFragmentationPattern = std::size_t{8} << 30;  ///< the pattern's extent at most

class FragmentationWorkload final : public Workload {
 public:
  FragmentationWorkload(const BenchCase& c, CudaDevice& dev, bool pool)
      : name_(c.name()),
        small_(static_cast<std::size_t>(c.arg("small"))),
        large_(static_cast<std::size_t>(c.arg("large"))),
        pool_kind_(pool),
        dev_(dev),
        seed_(case_seed(c)) {}

  void prepare() override {
    dev_.activate();
    std::size_t free_bytes = 0, total = 0;
    GPUBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    const std::size_t reserve = std::min(kFragmentationReserve, free_bytes / 4);
    pairs_ = std::min(free_bytes - reserve, kFragmentationPattern) / (small_ + large_);
    if (pairs_ < 2) throw SkipCase("too little free device memory for the fragmentation pattern");
    const std::size_t ballast = free_bytes - reserve - pairs_ * (small_ + large_);
    if (ballast > 0) ballast_ = DeviceBuffer(ballast);
    // What the allocator could hand out as one block during the probe, were nothing fragmented
    // (measured again at each probe): the free memory less the ballast and the small blocks.
    available_ = free_bytes - ballast - pairs_ * small_;
    if (pool_kind_) pool_ = std::make_unique<PoolThreshold>(dev_.index(), std::numeric_limits<std::uint64_t>::max());
    pattern_.resize(kProbeBytes);
    fill_random_u32(pattern_.data(), kProbeBytes, seed_);
    out_.assign(2 * kProbeBytes, 0);
  }

  void poison() override { poison_fill(out_.data(), out_.size()); }

  double run(int batch) override {
    double seconds = 0;
    for (int i = 0; i < batch; ++i) seconds += round();
    return seconds;
  }

  Verification verify() override {
    if (largest_ < large_) return Verification::fail("not even one large block could be allocated after the frees");
    Verification v = check_copy(pattern_.data(), out_.data(), kProbeBytes);
    if (v.ok) v = check_copy(pattern_.data(), out_.data() + kProbeBytes, kProbeBytes);
    return v;
  }

  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    constexpr double kMiB = 1 << 20;
    return {{"allocations", static_cast<double>(2 * pairs_)},
            {"us_per_allocation", seconds_per_op * 1e6 / static_cast<double>(2 * pairs_)},
            {"freed_MiB", static_cast<double>(pairs_ * large_) / kMiB},
            {"available_MiB", static_cast<double>(available_) / kMiB},
            {"largest_block_MiB", static_cast<double>(largest_) / kMiB},
            {"largest_block_pct_of_free", 100.0 * static_cast<double>(largest_) / static_cast<double>(available_)}};
  }

 private:
  void* allocate(std::size_t bytes, bool may_fail) {
    void* p = nullptr;
    const cudaError_t e = pool_kind_ ? cudaMallocAsync(&p, bytes, dev_.stream()) : cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation && may_fail) {
      (void)cudaGetLastError();  // an expected refusal: clear it
      return nullptr;
    }
    GPUBENCH_CUDA_CHECK(e);
    return p;
  }
  void release(void* p) {
    if (pool_kind_) {
      GPUBENCH_CUDA_CHECK(cudaFreeAsync(p, dev_.stream()));
      // The free completed as the host sees it (a synchronize, after a bounded wait) before the
      // pool is asked what it holds unused or trimmed.
      wait_for_stream(dev_.stream(), "a pool's free");
      GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(dev_.stream()));
    } else {
      GPUBENCH_CUDA_CHECK(cudaFree(p));
    }
  }

  double round() {
    std::vector<void*> smalls, larges;
    double seconds = 0;
    try {
      for (std::size_t i = 0; i < pairs_; ++i) {
        auto t0 = Clock::now();
        smalls.push_back(allocate(small_, false));
        larges.push_back(allocate(large_, false));
        seconds += seconds_since(t0);
      }
      for (void*& p : larges) {
        release(p);
        p = nullptr;
      }
      largest_ = largest_block();
    } catch (const DeviceHung&) {
      throw;  // every release would wait on the hung device: the runner leaves the blocks
    } catch (...) {
      for (void* p : larges)
        if (p) release_quietly(p);
      for (void* p : smalls) release_quietly(p);
      throw;
    }
    for (void* p : smalls) release(p);
    return seconds;
  }

  // Bisection between one large block (it must fit: one was just freed) and all that is available,
  // to 1/64 of the range; the largest block found is probed at both ends.
  std::size_t largest_block() {
    // What is free now (another process on the device may have taken or given back memory since
    // prepare): the driver's free memory, and what the pool holds unused.
    std::size_t free_now = 0, total = 0;
    GPUBENCH_CUDA_CHECK(cudaMemGetInfo(&free_now, &total));
    available_ = free_now + (pool_ ? static_cast<std::size_t>(pool_->unused_bytes()) : 0);
    // The pool keeps a released probe's memory (its threshold is the maximum), and a pool does
    // not hand its idle memory to the driver for a larger request: every later probe would get
    // that much less, and the search would end below the largest block. Trimmed back to what it
    // held before the search after each probe (which idle memory the driver takes back is its
    // choice: possibly the freed large blocks' instead; the row's description says so).
    const std::uint64_t held_before = pool_ ? pool_->reserved_bytes() : 0;
    const auto release_probe = [&](void* q) {
      release(q);
      if (pool_) pool_->trim_to(held_before);
    };
    std::size_t lo = large_, hi = std::max(available_, large_);
    void* p = allocate(hi, true);
    if (p != nullptr) {
      probe_ends_and_release(p, hi);
      if (pool_) pool_->trim_to(held_before);
      return hi;
    }
    const std::size_t step = std::max<std::size_t>((hi - lo) / 64, 1);
    while (hi - lo > step) {
      const std::size_t mid = lo + (hi - lo) / 2;
      void* q = allocate(mid, true);
      if (q) {
        release_probe(q);
        lo = mid;
      } else {
        hi = mid;
      }
    }
    p = allocate(lo, true);
    if (!p) return 0;
    probe_ends_and_release(p, lo);
    if (pool_) pool_->trim_to(held_before);
    return lo;
  }

  // probe_ends, the block released however it ends (a failed copy would leave a block of up to
  // the whole free memory allocated).
  void probe_ends_and_release(void* p, std::size_t bytes) {
    try {
      probe_ends(p, bytes);
    } catch (const DeviceHung&) {
      throw;
    } catch (...) {
      release_quietly(p);
      throw;
    }
    release(p);
  }

  // release(p) on an error path (free_device_quietly).
  void release_quietly(void* p) noexcept { free_device_quietly(p, pool_kind_, dev_.stream()); }

  // The pattern written at the start and the end of the block and read back into out_.
  void probe_ends(void* p, std::size_t bytes) {
    auto* b = static_cast<unsigned char*>(p);
    for (int end = 0; end < 2; ++end) {
      unsigned char* at = end == 0 ? b : b + bytes - kProbeBytes;
      GPUBENCH_CUDA_CHECK(cudaMemsetAsync(at, 0x5a, kProbeBytes, dev_.stream()));
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(at, pattern_.data(), kProbeBytes, cudaMemcpyHostToDevice, dev_.stream()));
      wait_for_stream(dev_.stream(), "a fragmentation probe's fill");  // before a copy into pageable memory
      GPUBENCH_CUDA_CHECK(
          cudaMemcpyAsync(out_.data() + end * kProbeBytes, at, kProbeBytes, cudaMemcpyDeviceToHost, dev_.stream()));
    }
    wait_for_stream(dev_.stream(), "a fragmentation probe's copies");
  }

  std::string name_;
  std::size_t small_, large_;
  bool pool_kind_;
  CudaDevice& dev_;
  std::uint64_t seed_;
  std::unique_ptr<PoolThreshold> pool_;
  DeviceBuffer ballast_;  ///< the free memory outside the pattern and the reserve, held for the row
  std::size_t pairs_ = 0, available_ = 0, largest_ = 0;
  std::vector<unsigned char> pattern_, out_;
};

}  // namespace

void add_cuda_alloc(WorkloadTable& table) {
  table.add("memory/alloc/cuda_malloc", make_cuda_workload<AllocWorkload, Allocator::cuda_malloc>);
  table.add("memory/alloc/async_pool_miss", make_cuda_workload<AllocWorkload, Allocator::async_pool_miss>);
  table.add("memory/alloc/async_pool_hit", make_cuda_workload<AllocWorkload, Allocator::async_pool_hit>);
  table.add("memory/alloc/preallocated", make_cuda_workload<AllocWorkload, Allocator::preallocated>);
  table.add("memory/alloc/pinned_host", make_cuda_workload<AllocWorkload, Allocator::pinned_host>);
  table.add("memory/alloc/host_register", make_cuda_workload<AllocWorkload, Allocator::host_register>);
  table.add("memory/alloc_loop/cuda_malloc_each", make_cuda_workload<AllocLoopWorkload, LoopAlloc::cuda_malloc_each>);
  table.add("memory/alloc_loop/async_pool_each", make_cuda_workload<AllocLoopWorkload, LoopAlloc::async_pool_each>);
  table.add("memory/alloc_loop/allocated_once", make_cuda_workload<AllocLoopWorkload, LoopAlloc::allocated_once>);
  table.add("memory/fragmentation/cuda_malloc", make_cuda_workload<FragmentationWorkload, false>);
  table.add("memory/fragmentation/async_pool", make_cuda_workload<FragmentationWorkload, true>);
}

}  // namespace gpubench::memory
