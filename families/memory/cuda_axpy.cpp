// memory/axpy/<precision>/bytes:S on a CUDA device: out = a*x + y with S bytes per vector in
// FP64, FP32, FP16 and BF16 (families/memory/memory.h). The same bytes per row, so GB/s should
// be about equal and elements per second scale with 1/element size: "mixed precision halves the
// bytes", measured. Inputs are seeded values in [-1, 1) stored in the row's type; every output
// element is compared bit for bit with memory::axpy_element.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "families/memory/cuda_workloads.h"
#include "families/memory/memory.h"
#include "families/memory/reference.h"
#include "families/memory/values.h"
#include "harness/cuda/cuda_check.h"
#include "harness/cuda/cuda_workload.h"
#include "harness/cuda/device_buffer.h"

namespace gpubench::memory {

namespace {

class AxpyWorkload final : public CudaWorkload {
 public:
  AxpyWorkload(const BenchCase& c, CudaDevice& dev, kernels::AxpyType type)
      : CudaWorkload(c, dev), type_(type), bytes_(count_arg("bytes")) {}

  void prepare() override {
    const std::size_t elem = static_cast<std::size_t>(kernels::axpy_elem_bytes(type_));
    if (bytes_ % elem != 0) throw SkipCase("bytes must be a multiple of the element size");
    n_ = bytes_ / elem;
    begin_prepare(3 * bytes_);
    host_x_.resize(bytes_);
    host_y_.resize(bytes_);
    fill_inputs(type_, host_x_.data(), 0, n_, seed_);
    fill_inputs(type_, host_y_.data(), 0, n_, seed_ + 1);
    x_ = DeviceBuffer(bytes_);
    y_ = DeviceBuffer(bytes_);
    out_ = DeviceBuffer(bytes_);
    copy_to_device(x_.get(), host_x_.data(), bytes_, stream());
    copy_to_device(y_.get(), host_y_.data(), bytes_, stream());
  }

  void poison() override { poison_device(out_.get(), bytes_, stream()); }

  double run(int batch) override {
    const void* x = x_.get();
    const void* y = y_.get();
    void* out = out_.get();
    const std::size_t n = n_;
    const int sm = sms();
    const kernels::AxpyType type = type_;
    return timed(batch,
                 [=](CUstream_st* s, int) { return kernels::launch_axpy(type, kAxpyScalar, x, y, out, n, sm, s); });
  }

  Verification verify() override {
    const std::vector<unsigned char> got = copy_to_host(out_.as<unsigned char>(), bytes_, stream());
    const std::size_t wrong = first_wrong_element(type_, host_x_.data(), host_y_.data(), got.data(), 0, n_);
    return axpy_verdict(type_, host_x_.data(), host_y_.data(), got.data(), wrong, n_);
  }

  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    std::map<std::string, double> k = CudaWorkload::extra_counters(seconds_per_op);
    if (seconds_per_op > 0) k["Gelem_per_s"] = static_cast<double>(n_) / seconds_per_op / 1e9;
    return k;
  }

 private:
  kernels::AxpyType type_;
  std::size_t bytes_, n_ = 0;
  std::vector<unsigned char> host_x_, host_y_;
  DeviceBuffer x_, y_, out_;
};

}  // namespace

void add_cuda_axpy(WorkloadTable& table) {
  table.add("memory/axpy/fp64", make_cuda_workload<AxpyWorkload, kernels::AxpyType::fp64>);
  table.add("memory/axpy/fp32", make_cuda_workload<AxpyWorkload, kernels::AxpyType::fp32>);
  table.add("memory/axpy/fp16", make_cuda_workload<AxpyWorkload, kernels::AxpyType::fp16>);
  table.add("memory/axpy/bf16", make_cuda_workload<AxpyWorkload, kernels::AxpyType::bf16>);
}

}  // namespace gpubench::memory
