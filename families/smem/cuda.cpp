// The shared-memory family on a CUDA device: bandwidth/smem/kernel (rows from cases.cpp, the
// kernel in smem.cuh). Random input words (never zeros), filled into each block's shared array
// by the kernel itself; the output (one word per thread) is poisoned before the timed runs and
// compared word for word with the host reference (reference.h) after them.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "families/smem/reference.h"
#include "families/smem/smem.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_workload.h"
#include "harness/cuda/device_buffer.h"
#include "harness/family.h"
#include "harness/verify.h"

GPUBENCH_FAMILY(smem)

namespace gpubench {

namespace {

class SmemWorkload final : public CudaWorkload {
 public:
  SmemWorkload(const BenchCase& c, CudaDevice& dev)
      : CudaWorkload(c, dev),
        bytes_(count_arg("bytes")),
        blocks_(static_cast<int>(count_arg("blocks"))),
        passes_(static_cast<int>(count_arg("passes"))) {}

  void prepare() override {
    if (!kernels::smem_args_ok(bytes_, passes_))
      throw SkipCase("no launch for " + std::to_string(bytes_) + " bytes per block and " + std::to_string(passes_) +
                     " passes (bytes a multiple of 4 KiB)");
    dev_.activate();
    std::size_t max_bytes = 0;
    GPUBENCH_CUDA_CHECK(kernels::smem_device_max_bytes_per_block(&max_bytes));
    if (bytes_ > max_bytes)
      throw SkipCase("needs " + std::to_string(bytes_) + " bytes of shared memory per block; this device allows " +
                     std::to_string(max_bytes));
    const std::size_t in_words = static_cast<std::size_t>(blocks_) * bytes_ / 4;
    const std::size_t out_words = static_cast<std::size_t>(blocks_) * kernels::kSmemBlockThreads;
    begin_prepare((in_words + out_words) * 4);
    host_in_.assign(in_words, 0);
    fill_random_u32(host_in_.data(), in_words * 4, seed_);
    in_ = DeviceBuffer(in_words * 4);
    out_ = DeviceBuffer(out_words * 4);
    copy_to_device(in_.get(), host_in_.data(), in_words * 4, stream());
  }

  void poison() override { poison_device(out_.get(), out_.bytes(), stream()); }

  double run(int batch) override {
    const auto* in = in_.as<const std::uint32_t>();
    auto* out = out_.as<std::uint32_t>();
    const int blocks = blocks_, passes = passes_;
    const std::size_t bytes = bytes_;
    return timed(batch,
                 [=](CUstream_st* s, int) { return kernels::launch_smem_read(in, out, blocks, bytes, passes, s); });
  }

  Verification verify() override {
    const std::vector<std::uint32_t> want = kernels::smem_reference(host_in_, blocks_, bytes_, passes_);
    const std::vector<std::uint32_t> got = copy_to_host(out_.as<std::uint32_t>(), want.size(), stream());
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (got[i] != want[i])
        return Verification::fail("out[" + std::to_string(i) + "] (block " + std::to_string(i / 256) + ", thread " +
                                  std::to_string(i % 256) + ") = " + std::to_string(got[i]) + ", expected " +
                                  std::to_string(want[i]));
    }
    return Verification::pass();
  }

  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    std::map<std::string, double> k = CudaWorkload::extra_counters(seconds_per_op);
    k["blocks"] = blocks_;
    k["passes_per_launch"] = passes_;
    return k;
  }

 private:
  std::size_t bytes_;  ///< shared array per block
  int blocks_;
  int passes_;
  std::vector<std::uint32_t> host_in_;
  DeviceBuffer in_, out_;
};

}  // namespace

void families::smem::add_cuda_workloads(WorkloadTable& table) {
  table.add("bandwidth/smem/kernel", [](const BenchCase& c, Backend& b) -> std::unique_ptr<Workload> {
    return std::make_unique<SmemWorkload>(c, cuda_device_of(b));
  });
}

}  // namespace gpubench
