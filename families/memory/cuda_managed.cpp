// memory/managed/<how>/bytes:S on a CUDA device: how fast a kernel can consume S bytes that
// start on the host, by each route unified memory and its alternatives offer. The consumer is
// the checksum kernel (families/memory/memory.h), whose result proves the data arrived intact.
//
// One operation (timed with events on the stream, its untimed reset and an L2 flush before it;
// the flush, queued first, also holds the stream while the host queues the timed steps, so the
// few microseconds of queueing a launch are not inside the interval; no flush before a prefetch,
// which the driver may hand to a thread of its own when issued into a busy stream: the data
// starts on the host, and the prefetch's host-side work is part of what it costs):
//   demand_fault     reset: the managed buffer prefetched to the host. Timed: the kernel, which
//                    faults the pages over (us_per_4KiB_page, us_per_2MiB_page).
//   prefetch         reset: to the host. Timed: cudaMemPrefetchAsync to the device, then the
//                    kernel (prefetch_GB/s and kernel_GB/s separately; an untimed L2 flush
//                    between them, so the kernel reads device memory, as for explicit_copy).
//   read_mostly      cudaMemAdviseSetReadMostly once; reset: the CPU adds 1 to one word per page,
//                    which drops the device's read-only copies (a stale copy would miss the new
//                    word, and the checksum with it). Timed: the kernel.
//   device_resident  prefetched to the device once. Timed: the kernel (device speed), as the
//                    kernel families time theirs: batches in a CUDA graph, or each operation after
//                    an L2 flush where the data is DRAM-sized (an unflushed 32 MiB would be read
//                    from the 50 MiB L2 of an H100).
//   to_host          reset: prefetched to the device. Timed (host clock): the CPU reads every
//                    word, faulting the pages back.
//   explicit_copy    cudaMemcpyAsync from pinned memory to a device buffer, then the kernel
//                    (copy_GB/s, kernel_GB/s).
//   zero_copy        the kernel reads mapped pinned host memory across the link.
// Managed rows never ask for more than a quarter of the free device memory: oversubscribed
// unified memory thrashes and can stall the GPU for minutes.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "families/memory/cuda_workloads.h"
#include "families/memory/memory.h"
#include "families/memory/reference.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/cuda_workload.h"
#include "harness/cuda/device_buffer.h"
#include "harness/cuda/host_resources.h"
#include "harness/cuda/timing.h"
#include "harness/verify.h"

namespace gpubench::memory {

namespace {

enum class Route { demand_fault, prefetch, read_mostly, device_resident, to_host, explicit_copy, zero_copy };

bool managed_route(Route r) { return r != Route::explicit_copy && r != Route::zero_copy; }

constexpr std::size_t kPage = 4096;
constexpr double kLargePage = 2.0 * 1024 * 1024;

// The CPU's side of unified memory, for cudaMemPrefetchAsync and cudaMemAdvise.
#if CUDART_VERSION >= 13000
cudaMemLocation host_location() { return {cudaMemLocationTypeHost, 0}; }
cudaMemLocation device_location(int device) { return {cudaMemLocationTypeDevice, device}; }
cudaError_t prefetch_to(const void* p, std::size_t bytes, cudaMemLocation where, cudaStream_t s) {
  return cudaMemPrefetchAsync(p, bytes, where, 0, s);
}
cudaError_t advise_read_mostly(const void* p, std::size_t bytes, int device) {
  return cudaMemAdvise(p, bytes, cudaMemAdviseSetReadMostly, device_location(device));
}
#else  // CUDA 12: devices by ordinal, the CPU as cudaCpuDeviceId
int host_location() { return cudaCpuDeviceId; }
int device_location(int device) { return device; }
cudaError_t prefetch_to(const void* p, std::size_t bytes, int where, cudaStream_t s) {
  return cudaMemPrefetchAsync(p, bytes, where, s);
}
cudaError_t advise_read_mostly(const void* p, std::size_t bytes, int device) {
  return cudaMemAdvise(p, bytes, cudaMemAdviseSetReadMostly, device);
}
#endif

/// A managed allocation (cudaMallocManaged, attached globally).
class ManagedBuffer {
 public:
  explicit ManagedBuffer(std::size_t bytes) { GPUBENCH_CUDA_CHECK(cudaMallocManaged(&p_, bytes, cudaMemAttachGlobal)); }
  ~ManagedBuffer() {
    if (p_ && !device_hang_seen()) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaFree(p_));  // a hung device: left
  }
  ManagedBuffer(const ManagedBuffer&) = delete;
  ManagedBuffer& operator=(const ManagedBuffer&) = delete;
  std::uint32_t* words() const { return static_cast<std::uint32_t*>(p_); }

 private:
  void* p_ = nullptr;
};

class ManagedWorkload final : public CudaWorkload {
 public:
  ManagedWorkload(const BenchCase& c, CudaDevice& dev, Route route)
      : CudaWorkload(c, dev), route_(route), bytes_(count_arg("bytes")), n_(bytes_ / 4) {}

  void prepare() override {
    if (bytes_ % kPage != 0) throw SkipCase("managed rows need a whole number of 4 KiB pages");
    dev_.activate();
    require_attribute(cudaDevAttrManagedMemory, managed_route(route_), "managed memory");
    require_attribute(cudaDevAttrConcurrentManagedAccess, managed_route(route_),
                      "on-demand page migration (concurrentManagedAccess)");
    require_attribute(cudaDevAttrCanMapHostMemory, route_ == Route::zero_copy, "mapped host memory");
    std::size_t free_bytes = 0, total = 0;
    GPUBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    if (bytes_ > free_bytes / 4)
      throw SkipCase("managed rows use at most a quarter of the free device memory (" +
                     std::to_string(free_bytes >> 20) + " MiB free): oversubscription can stall the GPU");
    begin_prepare(route_ == Route::explicit_copy ? bytes_ : 0);
    max_blocks_ = 4 * sms();
    partial_ = DeviceBuffer(static_cast<std::size_t>(max_blocks_) * 4);
    expected_ = fill_input();
    events_.resize(2);
    if (route_ == Route::read_mostly) GPUBENCH_CUDA_CHECK(advise_read_mostly(managed_->words(), bytes_, dev_.index()));
    if (route_ == Route::device_resident) to_device();
    if (route_ != Route::to_host && route_ != Route::device_resident) dev_.flusher().allocate(stream());
  }

  void poison() override {
    poison_device(partial_.get(), partial_.bytes(), stream());
    host_sum_ = kPoisonU32;
  }

  double run(int batch) override {
    double seconds = 0;
    if (route_ == Route::device_resident) {
      return timed(batch, [this](CUstream_st* s, int) {
        return kernels::launch_checksum(consumed(), n_, partial_.as<std::uint32_t>(), max_blocks_, &blocks_, sms(), s);
      });
    }
    for (int i = 0; i < batch; ++i) {
      reset();
      if (route_ == Route::to_host) {
        seconds += read_on_host();
        continue;
      }
      // Holds the stream while the steps below are queued; not before a prefetch, which the
      // driver may hand to a thread of its own when issued into a busy stream.
      if (route_ != Route::prefetch) dev_.flusher().flush(stream());
      const bool first_stage = route_ == Route::prefetch || route_ == Route::explicit_copy;
      if (first_stage) {
        events_[0].record_start(stream());
        GPUBENCH_CUDA_CHECK(enqueue_first_stage());
        events_[0].record_stop(stream());
        // Untimed, between the two stages: what the first stage wrote leaves the L2 (at 2-32 MiB
        // the kernel would read it from there, not device memory), and the stream is held while
        // the kernel is queued (its launch latency out of its interval).
        dev_.flusher().flush(stream());
      }
      events_[1].record_start(stream());
      GPUBENCH_CUDA_CHECK(kernels::launch_checksum(consumed(), n_, partial_.as<std::uint32_t>(), max_blocks_, &blocks_,
                                                   sms(), stream()));
      events_[1].record_stop(stream());
      const double first = first_stage ? events_[0].seconds() : 0;
      const double kernel = events_[1].seconds();
      first_stage_seconds_ += first;
      kernel_seconds_ += kernel;
      ++stage_ops_;
      seconds += first + kernel;
    }
    return seconds;
  }

  Verification verify() override {
    std::uint32_t got = host_sum_;
    if (route_ != Route::to_host) {
      const std::vector<std::uint32_t> partials =
          copy_to_host(partial_.as<std::uint32_t>(), static_cast<std::size_t>(blocks_), stream());
      got = checksum_reference(partials.data(), partials.size());
    }
    // Each read_mostly reset added 1 to one word of every page (wrapping, as the sum does).
    const auto pages = static_cast<std::uint32_t>(bytes_ / kPage);
    const std::uint32_t want = expected_ + resets_ * pages;
    if (got != want)
      return Verification::fail("sum of the " + std::to_string(n_) + " words read = " + std::to_string(got) +
                                ", expected " + std::to_string(want));
    return Verification::pass();
  }

  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    std::map<std::string, double> k;
    const double pages = static_cast<double>(bytes_) / kPage;
    // Each stage's mean over every operation since the last counters (the repetition's samples,
    // and before the first repetition its warm-ups), not the last sample's against the
    // repetition's mean: their difference was the kernel's time only when the samples agreed.
    const double ops = static_cast<double>(stage_ops_);
    const double first = ops > 0 ? first_stage_seconds_ / ops : 0;
    const double kernel = ops > 0 ? kernel_seconds_ / ops : 0;
    first_stage_seconds_ = kernel_seconds_ = 0;
    stage_ops_ = 0;
    if (route_ == Route::demand_fault && seconds_per_op > 0) {
      k["us_per_4KiB_page"] = seconds_per_op * 1e6 / pages;
      k["us_per_2MiB_page"] = seconds_per_op * 1e6 / (static_cast<double>(bytes_) / kLargePage);
    }
    if (route_ == Route::prefetch || route_ == Route::explicit_copy) {
      const char* name = route_ == Route::prefetch ? "prefetch_GB/s" : "copy_GB/s";
      if (first > 0) k[name] = static_cast<double>(bytes_) / first / 1e9;
      if (kernel > 0) k["kernel_GB/s"] = static_cast<double>(bytes_) / kernel / 1e9;
    }
    k["pages_4KiB"] = pages;
    return k;
  }

 private:
  void require_attribute(cudaDeviceAttr attr, bool needed, const char* what) const {
    if (!needed) return;
    int value = 0;
    GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, dev_.index()));
    if (!value) throw SkipCase(std::string("this device (or driver) lacks ") + what);
  }

  // The input on the host side of its route, seeded words; returns their sum.
  std::uint32_t fill_input() {
    std::vector<std::uint32_t> words(n_);
    fill_random_u32(words.data(), bytes_, seed_);
    if (managed_route(route_)) {
      managed_ = std::make_unique<ManagedBuffer>(bytes_);
      std::memcpy(managed_->words(), words.data(), bytes_);  // first touch on the CPU: resident there
    } else {
      host_ =
          std::make_unique<HostBuffer>(bytes_, route_ == Route::zero_copy ? HostMemory::mapped : HostMemory::pinned);
      std::memcpy(host_->get(), words.data(), bytes_);
      if (route_ == Route::explicit_copy) device_ = DeviceBuffer(bytes_);
    }
    return checksum_reference(words.data(), n_);
  }

  void to_device() {
    GPUBENCH_CUDA_CHECK(prefetch_to(managed_->words(), bytes_, device_location(dev_.index()), stream()));
    wait_for_stream(stream(), "a prefetch to the device");
  }

  // Untimed: puts the data where the route's operation starts.
  void reset() {
    switch (route_) {
      case Route::demand_fault:
      case Route::prefetch:
        GPUBENCH_CUDA_CHECK(prefetch_to(managed_->words(), bytes_, host_location(), stream()));
        wait_for_stream(stream(), "a prefetch to the host");
        break;
      case Route::read_mostly: {
        // A CPU write to a read-mostly page invalidates its copies elsewhere; a new value, so
        // that a kernel reading a stale copy gets a wrong checksum.
        volatile std::uint32_t* w = managed_->words();
        for (std::size_t i = 0; i < n_; i += kPage / 4) w[i] = w[i] + 1u;
        ++resets_;
        break;
      }
      case Route::to_host: to_device(); break;
      case Route::device_resident:
      case Route::explicit_copy:
      case Route::zero_copy: break;
    }
  }

  // The timed step before the kernel of the prefetch and explicit_copy routes.
  int enqueue_first_stage() {
    if (route_ == Route::prefetch)
      return prefetch_to(managed_->words(), bytes_, device_location(dev_.index()), stream());
    if (route_ == Route::explicit_copy)
      return cudaMemcpyAsync(device_.get(), host_->get(), bytes_, cudaMemcpyHostToDevice, stream());
    return 0;
  }

  // What the kernel reads.
  const std::uint32_t* consumed() const {
    if (managed_route(route_)) return managed_->words();
    if (route_ == Route::explicit_copy) return device_.as<const std::uint32_t>();
    return static_cast<const std::uint32_t*>(host_->device_view());
  }

  double read_on_host() {
    const auto t0 = std::chrono::steady_clock::now();
    host_sum_ = checksum_reference(managed_->words(), n_);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  Route route_;
  std::size_t bytes_, n_;
  int max_blocks_ = 0, blocks_ = 1;
  std::uint32_t expected_ = 0, host_sum_ = 0;
  std::uint32_t resets_ = 0;                             ///< read_mostly resets so far (each adds `pages` to the sum)
  double first_stage_seconds_ = 0, kernel_seconds_ = 0;  ///< the two stages' event times, summed
  long stage_ops_ = 0;                                   ///< operations in those sums
  std::unique_ptr<ManagedBuffer> managed_;
  std::unique_ptr<HostBuffer> host_;
  DeviceBuffer device_, partial_;
  std::vector<EventPair> events_;
};

}  // namespace

void add_cuda_managed(WorkloadTable& table) {
  table.add("memory/managed/demand_fault", make_cuda_workload<ManagedWorkload, Route::demand_fault>);
  table.add("memory/managed/prefetch", make_cuda_workload<ManagedWorkload, Route::prefetch>);
  table.add("memory/managed/read_mostly", make_cuda_workload<ManagedWorkload, Route::read_mostly>);
  table.add("memory/managed/device_resident", make_cuda_workload<ManagedWorkload, Route::device_resident>);
  table.add("memory/managed/to_host", make_cuda_workload<ManagedWorkload, Route::to_host>);
  table.add("memory/managed/explicit_copy", make_cuda_workload<ManagedWorkload, Route::explicit_copy>);
  table.add("memory/managed/zero_copy", make_cuda_workload<ManagedWorkload, Route::zero_copy>);
}

}  // namespace gpubench::memory
