// memory/overlap/cuda_streams/streams:N,bytes:S on a CUDA device: the copy/compute pipeline the
// articles promise "2-3x" from. S bytes of pinned host memory in 32 chunks; per chunk a
// host-to-device copy, the transform kernel in place (families/memory/memory.h) and a
// device-to-host copy into a second pinned buffer; chunk i on stream i mod N. With one stream
// the three stages run back to back; with more, one chunk's copies overlap another's kernel, and
// with two copy engines the two directions overlap each other.
//
// prepare() calibrates the kernel (rounds of the transform per word) so that it takes about as
// long as a chunk's host-to-device copy: a balanced pipeline, where overlap matters most. It then
// times each stage alone over all chunks on one stream (the serialized sum) and both copy
// directions at once on two streams.
// One operation: the whole pipeline between a start event that every stream waits for and a
// stop event that waits for every stream. Counters: overlap_efficiency = serialized sum / the
// operation's time (1 = no overlap, 3 = all three stages hidden under each other);
// kernel_slowdown = the kernels' summed in-stream time in the pipeline over their time alone
// (concurrent copy traffic, and waiting behind another stream's kernel, both count);
// bidir_copy_speedup = (all H2D alone + all D2H alone) / both at once (about 2 with two copy
// engines, 1 with one); copy_engines = cudaDevAttrAsyncEngineCount.
// Verification: every word copied back equals transform_word(input word, rounds).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "families/memory/cuda_workloads.h"
#include "families/memory/memory.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_device.h"
#include "harness/cuda/cuda_workload.h"
#include "harness/cuda/device_buffer.h"
#include "harness/cuda/host_resources.h"
#include "harness/cuda/timing.h"
#include "harness/verify.h"

namespace gpubench::memory {

namespace {

constexpr int kMaxRounds = 1 << 14;

class OverlapWorkload final : public CudaWorkload {
 public:
  OverlapWorkload(const BenchCase& c, CudaDevice& dev)
      : CudaWorkload(c, dev),
        streams_(static_cast<int>(count_arg("streams"))),
        chunks_(static_cast<int>(count_arg("chunks"))),
        bytes_(count_arg("bytes")) {}

  void prepare() override {
    if (bytes_ % (static_cast<std::size_t>(chunks_) * 16) != 0)
      throw SkipCase("bytes must split into chunks of whole 16-byte vectors");
    chunk_ = bytes_ / static_cast<std::size_t>(chunks_);
    begin_prepare(2 * bytes_);
    GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&copy_engines_, cudaDevAttrAsyncEngineCount, dev_.index()));
    in_ = std::make_unique<HostBuffer>(bytes_, HostMemory::pinned);
    out_ = std::make_unique<HostBuffer>(bytes_, HostMemory::pinned);
    fill_random_u32(in_->get(), bytes_, seed_);
    device_ = DeviceBuffer(bytes_);
    spare_ = DeviceBuffer(bytes_);  // the D2H source while the H2D fills device_ (bidirectional test)
    for (int s = 0; s < std::max(streams_, 2); ++s) lanes_.push_back(std::make_unique<OwnedStream>());
    kernel_events_.resize(static_cast<std::size_t>(chunks_));
    order_ = std::make_unique<OrderEvent>();
    span_ = std::make_unique<EventPair>();
    calibrate();
  }

  void poison() override { poison_fill(out_->get(), bytes_); }

  double run(int batch) override {
    double seconds = 0;
    kernel_seconds_ = 0;
    for (int i = 0; i < batch; ++i) seconds += pipeline();
    last_batch_ = batch;
    return seconds;
  }

  Verification verify() override {
    const auto* in = static_cast<const std::uint32_t*>(in_->get());
    const auto* out = static_cast<const std::uint32_t*>(out_->get());
    const kernels::TransformMap rounds = kernels::transform_map(rounds_);
    for (std::size_t i = 0; i < bytes_ / 4; ++i) {
      const std::uint32_t want = rounds(in[i]);
      if (out[i] != want)
        return Verification::fail("element " + std::to_string(i) + " = " + std::to_string(out[i]) + ", expected " +
                                  std::to_string(want) + " (" + std::to_string(rounds_) + " rounds)");
    }
    return Verification::pass();
  }

  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    std::map<std::string, double> k = {{"rounds", rounds_},
                                       {"copy_engines", copy_engines_},
                                       {"serialized_us", serialized_ * 1e6},
                                       {"h2d_alone_us", h2d_alone_ * 1e6},
                                       {"kernel_alone_us", kernel_alone_ * 1e6},
                                       {"d2h_alone_us", d2h_alone_ * 1e6}};
    if (seconds_per_op > 0) k["overlap_efficiency"] = serialized_ / seconds_per_op;
    if (last_batch_ > 0 && kernel_alone_ > 0) k["kernel_slowdown"] = kernel_seconds_ / last_batch_ / kernel_alone_;
    if (both_directions_ > 0) k["bidir_copy_speedup"] = (h2d_alone_ + d2h_alone_) / both_directions_;
    return k;
  }

 private:
  char* host_in(int i) const { return static_cast<char*>(in_->get()) + static_cast<std::size_t>(i) * chunk_; }
  char* host_out(int i) const { return static_cast<char*>(out_->get()) + static_cast<std::size_t>(i) * chunk_; }
  char* dev(int i) const { return device_.as<char>() + static_cast<std::size_t>(i) * chunk_; }
  cudaStream_t lane(int i) const { return lanes_[static_cast<std::size_t>(i)]->get(); }

  int h2d(int i, cudaStream_t s) const {
    return cudaMemcpyAsync(dev(i), host_in(i), chunk_, cudaMemcpyHostToDevice, s);
  }
  int kernel(int i, cudaStream_t s) const {
    return kernels::launch_transform(reinterpret_cast<std::uint32_t*>(dev(i)), chunk_ / 4, rounds_, sms(), s);
  }
  int d2h(int i, cudaStream_t s) const {
    return cudaMemcpyAsync(host_out(i), dev(i), chunk_, cudaMemcpyDeviceToHost, s);
  }

  // One pass of the pipeline over the row's streams; its time between the fan-out and fan-in
  // events. Adds the kernels' in-stream times to kernel_seconds_.
  double pipeline() {
    const int lanes = streams_;
    order_->order(stream(), lane(0));
    span_->record_start(lane(0));
    for (int s = 1; s < lanes; ++s) order_->order(lane(0), lane(s));
    for (int i = 0; i < chunks_; ++i) {
      cudaStream_t s = lane(i % lanes);
      GPUBENCH_CUDA_CHECK(h2d(i, s));
      kernel_events_[static_cast<std::size_t>(i)].record_start(s);
      GPUBENCH_CUDA_CHECK(kernel(i, s));
      kernel_events_[static_cast<std::size_t>(i)].record_stop(s);
      GPUBENCH_CUDA_CHECK(d2h(i, s));
    }
    for (int s = 1; s < lanes; ++s) order_->order(lane(s), lane(0));
    span_->record_stop(lane(0));
    const double seconds = span_->seconds();
    for (auto& e : kernel_events_) kernel_seconds_ += e.seconds();
    return seconds;
  }

  // All chunks of one stage, one after another on one stream.
  template <class Stage>
  double stage_alone(Stage stage) {
    span_->record_start(lane(0));
    for (int i = 0; i < chunks_; ++i) GPUBENCH_CUDA_CHECK(stage(i, lane(0)));
    span_->record_stop(lane(0));
    return span_->seconds();
  }

  // Both copy directions at once: every chunk's H2D on lane 0, a D2H of `spare_` on lane 1.
  double both_directions() {
    order_->order(stream(), lane(0));
    span_->record_start(lane(0));
    order_->order(lane(0), lane(1));
    for (int i = 0; i < chunks_; ++i) {
      GPUBENCH_CUDA_CHECK(h2d(i, lane(0)));
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(host_out(i), spare_.as<char>() + static_cast<std::size_t>(i) * chunk_, chunk_,
                                          cudaMemcpyDeviceToHost, lane(1)));
    }
    order_->order(lane(1), lane(0));
    span_->record_stop(lane(0));
    return span_->seconds();
  }

  // Rounds such that a chunk's kernel lasts about as long as its H2D copy; then the stage times.
  void calibrate() {
    const auto k = [this](int i, cudaStream_t s) { return kernel(i, s); };
    (void)stage_alone([this](int i, cudaStream_t s) { return h2d(i, s); });  // warm-up (lazy loading, first touch)
    h2d_alone_ = stage_alone([this](int i, cudaStream_t s) { return h2d(i, s); });
    rounds_ = 16;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const double t = stage_alone(k);
      if (!(t > 0)) break;
      const double scaled = std::round(rounds_ * h2d_alone_ / t);
      rounds_ = static_cast<int>(std::clamp(scaled, 1.0, static_cast<double>(kMaxRounds)));
    }
    // The transform is applied in place: stage times are taken before the real input is loaded.
    kernel_alone_ = stage_alone(k);
    d2h_alone_ = stage_alone([this](int i, cudaStream_t s) { return d2h(i, s); });
    serialized_ = h2d_alone_ + kernel_alone_ + d2h_alone_;
    both_directions_ = copy_engines_ >= 1 ? both_directions() : 0;
  }

  int streams_, chunks_;
  std::size_t bytes_, chunk_ = 0;
  int rounds_ = 1, copy_engines_ = 0, last_batch_ = 0;
  double h2d_alone_ = 0, kernel_alone_ = 0, d2h_alone_ = 0, serialized_ = 0, both_directions_ = 0;
  double kernel_seconds_ = 0;
  std::unique_ptr<HostBuffer> in_, out_;
  DeviceBuffer device_, spare_;
  std::vector<std::unique_ptr<OwnedStream>> lanes_;
  std::unique_ptr<OrderEvent> order_;  // created in prepare(): a workload allocates nothing before
  std::unique_ptr<EventPair> span_;
  std::vector<EventPair> kernel_events_;
};

}  // namespace

void add_cuda_overlap(WorkloadTable& table) {
  table.add("memory/overlap/cuda_streams", [](const BenchCase& c, Backend& b) -> std::unique_ptr<Workload> {
    return std::make_unique<OverlapWorkload>(c, cuda_device_of(b));
  });
}

}  // namespace gpubench::memory
