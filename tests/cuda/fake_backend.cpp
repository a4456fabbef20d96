// The fake CUDA backend and helpers shared by the fake-runtime workload tests.
#include "tests/cuda/fake_backend.h"

#include <cctype>

#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/cuda/fake_cuda_runtime.h"

namespace gpubench::fake_backend {

DeviceDescription fake_device(int sm_count) {
  DeviceDescription d;
  d.name = "NVIDIA Fake GPU";
  d.cc_major = fake_cuda::state().cc_major;  // what the fake runtime reports (9.0 unless a test says)
  d.cc_minor = fake_cuda::state().cc_minor;
  d.sm_count = sm_count;
  d.sm_clock_kHz = 1500000;
  d.l2_bytes = kL2Bytes;
  d.memory_bytes = std::uint64_t{80} << 30;
  return d;
}

FakeBackend::FakeBackend(void (*add)(WorkloadTable&), int sm_count)
    : device_(0, fake_device(sm_count), "0000:00:00.0") {
  add(table_);
}
std::string FakeBackend::kind() const { return "cuda"; }
const DeviceDescription& FakeBackend::device() const { return device_.description(); }
const Peaks& FakeBackend::peaks() const { return peaks_; }
std::string FakeBackend::device_key() const { return "fake"; }
std::string FakeBackend::unavailable_reason(const BenchCase& c) const {
  return table_.unavailable_reason(c, device().cc_major * 10 + device().cc_minor);
}
std::unique_ptr<Workload> FakeBackend::create(const BenchCase& c) {
  return table_.find(c, device().cc_major * 10 + device().cc_minor)(c, *this);
}
std::map<std::string, std::string> FakeBackend::context() const { return {}; }
CudaDevice& FakeBackend::cuda_device() { return device_; }

const BenchCase& find_case(const std::vector<BenchCase>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name() == name) return c;
  throw std::logic_error("no case " + name);
}

void expect_plant_caught(Workload& w, fake_cuda::Plant where, std::size_t elem_bytes, const std::string& unit) {
  fake_cuda::state().plant = where;
  fake_cuda::state().plant_elem_bytes = elem_bytes;
  fake_cuda::state().planted = false;
  const Verification v = w.verify();
  fake_cuda::state().plant = fake_cuda::Plant::none;
  ASSERT_TRUE(fake_cuda::state().planted);
  EXPECT_FALSE(v.ok);
  const std::string named = unit + std::to_string(fake_cuda::state().planted_index);
  EXPECT_EQ(v.message.rfind(named, 0), 0u) << v.message;
  EXPECT_FALSE(std::isdigit(static_cast<unsigned char>(v.message[named.size()]))) << v.message;
  EXPECT_TRUE(w.verify().ok) << "the same output, read back intact";
}

Verification verify_with_fault(Backend& backend, const std::vector<BenchCase>& cases, const std::string& name,
                               bool fake_cuda::State::*fault) {
  fake_cuda::state().*fault = false;
  auto good = backend.create(find_case(cases, name));
  const Verification ok = run_like_the_runner(*good, 2);
  EXPECT_TRUE(ok.ok) << ok.message;
  fake_cuda::state().*fault = true;
  auto broken = backend.create(find_case(cases, name));
  const Verification bad = run_like_the_runner(*broken, 2);
  fake_cuda::state().*fault = false;
  EXPECT_FALSE(bad.ok);
  return bad;
}

Verification run_like_the_runner(Workload& w, int batch) {
  w.prepare();
  w.poison();
  EXPECT_GT(w.run(1), 0.0);
  EXPECT_GT(w.run(batch), 0.0);
  w.poison();
  for (int i = 0; i < 2; ++i) EXPECT_GT(w.run(batch), 0.0);
  const Verification v = w.verify();
  if (!v.ok) return v;
  // poison() must reach the output: a good output, poisoned, fails; run again, it passes.
  w.poison();
  EXPECT_FALSE(w.verify().ok) << "poison() left a verified output in place";
  EXPECT_GT(w.run(batch), 0.0);
  return w.verify();
}

}  // namespace gpubench::fake_backend
