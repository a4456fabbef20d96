// gpubench_kernel_check: every hand-written kernel launched once through its real launcher at
// small odd sizes (tails, partial tiles, partial warps), its output verified by the same checks
// the benchmarks use. Run under compute-sanitizer (memcheck, racecheck, synccheck, initcheck)
// by scripts/device_kit.sh: one short launch per kernel keeps the sanitizer runs to seconds.
//
// Prints one line per check ("ok NAME" / "FAIL NAME: why") and exits 0 when all pass, 1 when any
// check fails, 2 when no CUDA device is usable.
//
// Also built for the host as gpubench_kernel_check_emulated (GPUBENCH_KERNEL_CHECK_EMULATED):
// the same launchers compiled as C++ against kernels/launch.cuh's host side, their kernels
// under the SIMT emulation, a stand-in runtime (tests/cuda/emulated_launch.cpp); ctest runs
// every check there but Thrust and the spin kernel.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "families/gemm/gemm.h"
#include "families/gemm/hopper_probe.h"
#include "families/gemm/reference.h"
#include "families/global_memory/global_memory.h"
#include "families/intensity/intensity.h"
#include "families/intensity/reference.h"
#include "families/intensity/verify.h"
#include "families/memory/memory.h"
#include "families/memory/reference.h"
#include "families/p2p/p2p.h"
#include "families/pcie/pcie.h"
#include "families/smem/reference.h"
#include "families/smem/smem.h"
#include "harness/cuda/cuda_check.h"
#include "harness/random.h"
#include "harness/verify.h"
#include "kernels/half_bits.h"

namespace gpubench {
namespace {

using Coeff = kernels::intensity::Coefficients;

// Sizes chosen odd on purpose: neither a multiple of 16 bytes, of a warp, nor of a tile.
constexpr std::size_t kOddWords = 100003;
constexpr std::size_t kOddBytes = 4 * kOddWords + 3;

/// A device allocation freed on scope exit.
class Dev {
 public:
  explicit Dev(std::size_t bytes) : bytes_(bytes) { GPUBENCH_CUDA_CHECK(cudaMalloc(&p_, bytes)); }
  ~Dev() { GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaFree(p_)); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  void upload(const void* host) const { GPUBENCH_CUDA_CHECK(cudaMemcpy(p_, host, bytes_, cudaMemcpyHostToDevice)); }
  void download(void* host) const { GPUBENCH_CUDA_CHECK(cudaMemcpy(host, p_, bytes_, cudaMemcpyDeviceToHost)); }
  /// Output poisoned on the device, so an unwritten element fails its check.
  void poison() const {
    std::vector<unsigned char> h(bytes_);
    poison_fill(h.data(), bytes_);
    upload(h.data());
  }

 private:
  void* p_ = nullptr;
  std::size_t bytes_;
};

/// Waits for the launch and turns an asynchronous kernel fault into an exception.
void finish(int launch_status) {
  GPUBENCH_CUDA_CHECK(launch_status);
  GPUBENCH_CUDA_CHECK(cudaDeviceSynchronize());
}

int sm_count() {
  int dev = 0, sms = 0;
  GPUBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

Verification copy_check(int sms) {
  std::vector<unsigned char> in(kOddBytes), out(kOddBytes);
  fill_random_u32(in.data(), kOddBytes, 11);
  Dev a(kOddBytes), b(kOddBytes);
  a.upload(in.data());
  b.poison();
  finish(kernels::launch_copy(a.as<void>(), b.as<void>(), kOddBytes, sms, nullptr));
  b.download(out.data());
  return check_copy(in.data(), out.data(), kOddBytes);
}

Verification read_check(int sms) {
  std::vector<std::uint32_t> in(kOddWords);
  fill_random_u32(in.data(), kOddWords * 4, 12);
  constexpr std::size_t kMaxBlocks = 4096;
  Dev a(kOddWords * 4), partial(kMaxBlocks * 4);
  a.upload(in.data());
  partial.poison();
  int blocks = 0;
  finish(kernels::launch_read(a.as<std::uint32_t>(), kOddWords, partial.as<std::uint32_t>(),
                              static_cast<int>(kMaxBlocks), &blocks, sms, nullptr));
  std::vector<std::uint32_t> sums(kMaxBlocks);
  partial.download(sums.data());
  std::uint32_t total = 0;
  for (int i = 0; i < blocks; ++i) total += sums[static_cast<std::size_t>(i)];
  return check_sum_u32(in.data(), kOddWords, total);
}

// Every block of the per-SM cache read sums the whole set over 3 passes (on the device's own
// grid of kBlockSetReadBlocksPerSm blocks per SM).
Verification block_set_read_check(int sms) {
  constexpr std::size_t kWords = 12 * 1024 + 4;  // 48 KiB and one more vector
  constexpr int kPasses = 3;
  std::vector<std::uint32_t> in(kWords);
  fill_random_u32(in.data(), kWords * 4, 21);
  const int blocks = sms * kernels::kBlockSetReadBlocksPerSm;
  Dev a(kWords * 4), partial(static_cast<std::size_t>(blocks) * 4);
  a.upload(in.data());
  partial.poison();
  finish(kernels::launch_block_set_read(a.as<std::uint32_t>(), kWords, partial.as<std::uint32_t>(), blocks, nullptr,
                                        kernels::Passes{kPasses, 1, 0}));
  std::vector<std::uint32_t> sums(static_cast<std::size_t>(blocks));
  partial.download(sums.data());
  for (int b = 0; b < blocks; ++b) {
    const Verification v = check_sum_u32(in.data(), kWords, sums[static_cast<std::size_t>(b)], kPasses);
    if (!v.ok) return Verification::fail("block " + std::to_string(b) + ": " + v.message);
  }
  return Verification::pass();
}

Verification write_check(int sms) {
  Dev a(kOddWords * 4);
  a.poison();
  finish(kernels::launch_write(a.as<std::uint32_t>(), kOddWords, 0x1234567u, sms, nullptr));
  std::vector<std::uint32_t> out(kOddWords);
  a.download(out.data());
  return check_write_pattern(out.data(), kOddWords, 0x1234567u);
}

// The device fill of the seeded inputs against the host's formula: words with a byte tail,
// and floats, into poisoned buffers one word longer than the fill (which must stay poison).
Verification seeded_fill_check(int sms) {
  constexpr std::uint64_t kSeed = 0x5eed5eed5eedull;
  Dev words(kOddBytes + 4), floats(kOddWords * 4 + 4);
  words.poison();
  floats.poison();
  finish(kernels::launch_seeded_fill(words.as<void>(), kOddBytes, kSeed, kernels::SeededData::words, sms, nullptr));
  finish(
      kernels::launch_seeded_fill(floats.as<void>(), kOddWords * 4, kSeed, kernels::SeededData::floats, sms, nullptr));
  std::vector<unsigned char> w(kOddBytes + 4);
  std::vector<float> f(kOddWords + 1);
  words.download(w.data());
  floats.download(f.data());
  Verification v = check_copy(SeededWords{kSeed}, w.data(), kOddBytes);
  if (!v.ok) return Verification::fail("words: " + v.message);
  v = check_copy(SeededFloats{kSeed}, f.data(), kOddWords);
  if (!v.ok) return Verification::fail("floats: " + v.message);
  unsigned char poison[4];
  std::memcpy(poison, &kPoisonU32, 4);
  std::uint32_t after_floats = 0;
  std::memcpy(&after_floats, f.data() + kOddWords, 4);
  if (w[kOddBytes] != poison[kOddBytes % 4] || after_floats != kPoisonU32)
    return Verification::fail("the fill wrote past its end");
  return Verification::pass();
}

Verification strided_check(int sms, int stride) {
  std::vector<float> in(kOddWords), out(kOddWords);
  fill_random_float(in.data(), kOddWords, 13, -1.0f, 1.0f);
  Dev a(kOddWords * 4), b(kOddWords * 4);
  a.upload(in.data());
  b.poison();
  finish(kernels::launch_strided_copy(a.as<float>(), b.as<float>(), kOddWords, stride, sms, nullptr));
  b.download(out.data());
  return check_strided(in.data(), out.data(), kOddWords, stride);
}

Verification gather_check(int sms) {
  std::vector<float> in(kOddWords), out(kOddWords);
  std::vector<std::uint32_t> idx(kOddWords);
  fill_random_float(in.data(), kOddWords, 14, -1.0f, 1.0f);
  make_permutation(idx.data(), kOddWords, 15);
  Dev a(kOddWords * 4), ix(kOddWords * 4), b(kOddWords * 4);
  a.upload(in.data());
  ix.upload(idx.data());
  b.poison();
  finish(kernels::launch_gather(a.as<float>(), ix.as<std::uint32_t>(), b.as<float>(), kOddWords, sms, nullptr));
  b.download(out.data());
  return check_gather(in.data(), idx.data(), out.data(), kOddWords);
}

// Several passes in one launch over 3 slots (kernels::Passes), as the streaming rows run:
// 5 passes touch slots 0, 1, 2, 0, 1; every slot of the copy and the write is complete and the
// read sums each pass.
Verification passes_check(int sms) {
  constexpr int kPasses = 5, kSlots = 3;
  const std::size_t stride = (kOddBytes + 255) / 256 * 256;
  const kernels::Passes plan{kPasses, kSlots, stride};
  std::vector<unsigned char> in(stride * kSlots), out(stride * kSlots);
  fill_random_u32(in.data(), in.size(), 25);
  Dev a(in.size()), b(in.size()), partial(std::size_t{4096} * 4);
  a.upload(in.data());
  b.poison();
  finish(kernels::launch_copy(a.as<void>(), b.as<void>(), kOddBytes, sms, nullptr, plan));
  b.download(out.data());
  for (int k = 0; k < kSlots; ++k) {
    const Verification v = check_copy(in.data() + k * stride, out.data() + k * stride, kOddBytes);
    if (!v.ok) return Verification::fail("copy slot " + std::to_string(k) + ": " + v.message);
  }
  const std::size_t words = kOddBytes / 4;
  int blocks = 0;
  partial.poison();
  finish(kernels::launch_read(a.as<std::uint32_t>(), words, partial.as<std::uint32_t>(), 4096, &blocks, sms, nullptr,
                              plan));
  std::vector<std::uint32_t> sums(4096);
  partial.download(sums.data());
  std::uint32_t got = 0, want = 0;
  for (int i = 0; i < blocks; ++i) got += sums[static_cast<std::size_t>(i)];
  for (int p = 0; p < kPasses; ++p) {
    const auto* slot = reinterpret_cast<const std::uint32_t*>(in.data() + (p % kSlots) * stride);
    for (std::size_t i = 0; i < words; ++i) want += slot[i];
  }
  if (got != want)
    return Verification::fail("read over 5 passes: sum " + std::to_string(got) + ", expected " + std::to_string(want));
  b.poison();
  finish(kernels::launch_write(b.as<std::uint32_t>(), words, 99u, sms, nullptr, plan));
  b.download(out.data());
  for (int k = 0; k < kSlots; ++k) {
    const Verification v =
        check_write_pattern(reinterpret_cast<const std::uint32_t*>(out.data() + k * stride), words, 99u);
    if (!v.ok) return Verification::fail("write slot " + std::to_string(k) + ": " + v.message);
  }
  return Verification::pass();
}

// Shared memory: 3 blocks of 8 KiB (and one of 64 KiB, above the 48 KiB opt-in line), 5 passes.
Verification smem_check(int blocks, std::size_t bytes_per_block) {
  const int passes = 5;
  const std::size_t words = static_cast<std::size_t>(blocks) * bytes_per_block / 4;
  std::vector<std::uint32_t> in(words);
  fill_random_u32(in.data(), words * 4, 17);
  const std::size_t out_words = static_cast<std::size_t>(blocks) * kernels::kSmemBlockThreads;
  Dev a(words * 4), b(out_words * 4);
  a.upload(in.data());
  b.poison();
  finish(kernels::launch_smem_read(a.as<std::uint32_t>(), b.as<std::uint32_t>(), blocks, bytes_per_block, passes,
                                   nullptr));
  std::vector<std::uint32_t> out(out_words);
  b.download(out.data());
  const std::vector<std::uint32_t> want = kernels::smem_reference(in, blocks, bytes_per_block, passes);
  for (std::size_t i = 0; i < out_words; ++i)
    if (out[i] != want[i])
      return Verification::fail("out[" + std::to_string(i) + "] = " + std::to_string(out[i]) + ", expected " +
                                std::to_string(want[i]));
  return Verification::pass();
}

// The device fill of the chase ring against the host's, at an odd size (and a poisoned word after
// it that must stay poison); then the chase kernel over that ring against the formula's end point.
Verification chase_check(int sms) {
  const std::size_t n = 4099, steps = 10007;
  constexpr std::uint64_t kSeed = 16;
  Dev ring(n * 4 + 4), sink(4), cycles(8);
  ring.poison();
  finish(kernels::launch_chase_ring_fill(ring.as<std::uint32_t>(), n, kSeed, sms, nullptr));
  std::vector<std::uint32_t> got(n + 1);
  ring.download(got.data());
  const std::vector<std::uint32_t> want = make_chase_ring(n, kSeed);
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != want[i])
      return Verification::fail("ring fill: next[" + std::to_string(i) + "] = " + std::to_string(got[i]) +
                                ", expected " + std::to_string(want[i]));
  if (got[n] != kPoisonU32) return Verification::fail("the ring fill wrote past its end");
  sink.poison();
  finish(kernels::launch_pointer_chase(ring.as<std::uint32_t>(), steps, 0, sink.as<std::uint32_t>(),
                                       cycles.as<long long>(), nullptr));
  std::uint32_t end = 0;
  sink.download(&end);
  Verification v = check_chase(want.data(), n, 0, steps, end);  // walks the ring: one cycle, and the end
  if (!v.ok) return v;
  if (end != chase_reference(n, kSeed, 0, steps)) return Verification::fail("the formula's end point differs");
  return Verification::pass();
}

#ifndef GPUBENCH_KERNEL_CHECK_EMULATED
Verification permutation_check() {
  Dev ix(kOddWords * 4);
  ix.poison();
  finish(kernels::random_permutation(ix.as<std::uint32_t>(), kOddWords, 17, nullptr));
  std::vector<std::uint32_t> idx(kOddWords);
  ix.download(idx.data());
  std::vector<unsigned char> seen(kOddWords, 0);
  for (std::size_t i = 0; i < kOddWords; ++i) {
    if (idx[i] >= kOddWords || seen[idx[i]])
      return Verification::fail("idx[" + std::to_string(i) + "] = " + std::to_string(idx[i]) +
                                " repeats or is out of range");
    seen[idx[i]] = 1;
  }
  return Verification::pass();
}
#endif

template <class T>
Verification gemm_check(int m, int n, int k, const std::function<int(const T*, const T*, float*)>& launch) {
  std::vector<T> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n);
  std::vector<float> c(static_cast<std::size_t>(m) * n);
  if constexpr (sizeof(T) == 4) {
    fill_random_float(a.data(), a.size(), 18, -1.0f, 1.0f);
    fill_random_float(b.data(), b.size(), 19, -1.0f, 1.0f);
  } else {
    std::vector<float> fa(a.size()), fb(b.size());
    fill_random_float(fa.data(), fa.size(), 18, -1.0f, 1.0f);
    fill_random_float(fb.data(), fb.size(), 19, -1.0f, 1.0f);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = kernels::float_to_half_bits(fa[i]);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = kernels::float_to_half_bits(fb[i]);
  }
  Dev da(a.size() * sizeof(T)), db(b.size() * sizeof(T)), dc(c.size() * 4);
  da.upload(a.data());
  db.upload(b.data());
  dc.poison();
  finish(launch(da.as<T>(), db.as<T>(), dc.as<float>()));
  dc.download(c.data());
  const kernels::GemmMismatch r = kernels::check_gemm_full(a.data(), b.data(), c.data(), m, n, k);
  return r.found ? Verification::fail(r.describe()) : Verification::pass();
}

// True when the current device can run the sm_90a kernels (compute capability 9.0).
bool wgmma_device() {
  int dev = 0, major = 0, minor = 0;
  GPUBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  return kernels::hgemm_wgmma_device_error(major, minor) == nullptr;
}

// The wgmma GEMM's inputs at one shape, multiples of 1/64 in (-2, 2): exact in FP16 and in BF16,
// so the FP16 reference checks the BF16 run of the same values too; and that reference (value and
// tolerance of every element of C), computed once per shape for the four checks that use it (two
// kernels, two input types): at 1100x4104x520 it costs seconds of one host core, and the device
// kit runs the kernel checks five times (plain and under each compute-sanitizer tool).
struct WgmmaCase {
  std::vector<std::uint16_t> a_f16, b_f16, a_bf16, b_bf16;
  std::vector<double> expected, tolerance;  ///< per element of C (m x n, row-major)
};

const WgmmaCase& wgmma_case(int m, int n, int k) {
  static std::map<std::tuple<int, int, int>, WgmmaCase> cases;
  auto it = cases.find({m, n, k});
  if (it != cases.end()) return it->second;
  WgmmaCase w;
  const std::size_t a_n = static_cast<std::size_t>(m) * k, b_n = static_cast<std::size_t>(k) * n;
  std::vector<float> fa(a_n), fb(b_n);
  fill_random_float(fa.data(), a_n, 18, -2.0f, 2.0f);
  fill_random_float(fb.data(), b_n, 19, -2.0f, 2.0f);
  auto encode = [](const std::vector<float>& x, std::vector<std::uint16_t>& f16, std::vector<std::uint16_t>& bf16) {
    f16.resize(x.size());
    bf16.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      float q = std::round(x[i] * 64.0f) / 64.0f;
      if (q == 0.0f) q = 1.0f / 64.0f;
      f16[i] = kernels::float_to_half_bits(q);
      std::uint32_t bits = 0;
      std::memcpy(&bits, &q, sizeof bits);
      bf16[i] = static_cast<std::uint16_t>(bits >> 16);  // exact: the low half is 0
    }
  };
  encode(fa, w.a_f16, w.a_bf16);
  encode(fb, w.b_f16, w.b_bf16);
  w.expected.resize(static_cast<std::size_t>(m) * n);
  w.tolerance.resize(w.expected.size());
  std::vector<double> mag(static_cast<std::size_t>(n));
  for (int i = 0; i < m; ++i) {
    double* ref = w.expected.data() + static_cast<std::size_t>(i) * n;
    kernels::gemm_reference_row(w.a_f16.data(), w.b_f16.data(), n, k, i, ref, mag.data());
    for (int j = 0; j < n; ++j) w.tolerance[static_cast<std::size_t>(i) * n + j] = kernels::gemm_tolerance(k, mag[j]);
  }
  return cases.emplace(std::make_tuple(m, n, k), std::move(w)).first->second;
}

Verification wgmma_check(int m, int n, int k, kernels::Half16 type, kernels::WgmmaCluster cluster,
                         kernels::WgmmaEpilogue epilogue) {
  const WgmmaCase& w = wgmma_case(m, n, k);
  const bool bf16 = type == kernels::Half16::bf16;
  const std::vector<std::uint16_t>& a = bf16 ? w.a_bf16 : w.a_f16;
  const std::vector<std::uint16_t>& b = bf16 ? w.b_bf16 : w.b_f16;
  std::vector<float> c(w.expected.size());
  Dev da(a.size() * 2), db(b.size() * 2), dc(c.size() * 4);
  da.upload(a.data());
  db.upload(b.data());
  dc.poison();
  finish(kernels::launch_hgemm_wgmma(da.as<std::uint16_t>(), db.as<std::uint16_t>(), dc.as<float>(), m, n, k, type,
                                     cluster, epilogue, nullptr));
  dc.download(c.data());
  for (std::size_t e = 0; e < c.size(); ++e) {
    const double got = c[e];
    if (!(std::fabs(got - w.expected[e]) <= w.tolerance[e])) {  // NaN (poison) fails too
      // Where C is wrong (tiles, consumer halves, B boxes): info lines before the check's line.
      for (const std::string& line : kernels::probe::diagnose_gemm(c.data(), w.expected.data(), w.tolerance.data(), m,
                                                                   n, kernels::kWgmmaTileM, kernels::kWgmmaTileN)) {
        std::printf("info hgemm_wgmma %dx%dx%d: %s\n", m, n, k, line.c_str());
      }
      kernels::GemmMismatch r;
      r.found = true;
      r.row = static_cast<int>(e / static_cast<std::size_t>(n));
      r.col = static_cast<int>(e % static_cast<std::size_t>(n));
      r.expected = w.expected[e];
      r.actual = got;
      r.tolerance = w.tolerance[e];
      return Verification::fail(r.describe());
    }
  }
  return Verification::pass();
}

// ---- the Hopper probe (families/gemm/hopper_probe.h): the wgmma GEMM's building blocks alone,
// judged against the emulation's model; a failure prints the judge's diagnosis as "info" lines.

/// A verdict as a check's result, its diagnosis printed first.
Verification from_verdict(const std::string& name, const kernels::probe::Verdict& v) {
  for (const std::string& line : v.details) std::printf("info %s: %s\n", name.c_str(), line.c_str());
  return v.ok ? Verification::pass() : Verification::fail(v.summary);
}

/// Fills n elements of device memory with `value` (a status with -1, an output with 0xFFFF).
template <class T>
void fill(const Dev& d, std::size_t n, T value) {
  const std::vector<T> h(n, value);
  d.upload(h.data());
}

template <class T>
std::vector<T> download(const Dev& d, std::size_t n) {
  std::vector<T> h(n);
  d.download(h.data());
  return h;
}

Verification probe_tma_box(const std::string& name, int inner, int box_outer) {
  namespace probe = kernels::probe;
  const std::vector<std::uint16_t> tensor = probe::index_tensor(inner, box_outer);
  const std::size_t n = static_cast<std::size_t>(box_outer) * probe::kTile;
  Dev dt(tensor.size() * 2), dout(n * 2), ds(sizeof(int));
  dt.upload(tensor.data());
  fill<std::uint16_t>(dout, n, 0xFFFF);
  fill<int>(ds, 1, -1);
  finish(probe::launch_tma_box_probe(dt.as<std::uint16_t>(), inner, box_outer, box_outer, dout.as<std::uint16_t>(),
                                     ds.as<int>()));
  const probe::Verdict status = probe::judge_status(download<int>(ds, 1)[0], "the block");
  if (!status.ok) return from_verdict(name, status);
  return from_verdict(name, probe::judge_swizzled_box(download<std::uint16_t>(dout, n).data(), inner, box_outer, 0));
}

// The GEMM epilogue's TMA store of one 16 x 32 FP32 box (probe::kStoreCases): into a tensor as
// wide as the box, into a smaller one that clips it (C's edges), and at (32, 16) clipped on both
// sides, so that x and y are each in their place.
Verification probe_tma_store(const std::string& name) {
  namespace probe = kernels::probe;
  for (const probe::StoreCase& c : probe::kStoreCases) {
    const std::size_t n = static_cast<std::size_t>(probe::kStoreProbeRows) * static_cast<std::size_t>(c.stride);
    Dev dt(n * sizeof(float)), ds(sizeof(int));
    fill<float>(dt, n, std::nanf(""));
    fill<int>(ds, 1, -1);
    finish(probe::launch_tma_store_probe(dt.as<float>(), c, ds.as<int>()));
    probe::Verdict v = probe::judge_status(download<int>(ds, 1)[0], "the block");
    if (v.ok) v = probe::judge_tma_store(download<float>(dt, n).data(), c);
    if (!v.ok) return from_verdict(name, v);
  }
  return Verification::pass();
}

Verification probe_multicast(const std::string& name) {
  namespace probe = kernels::probe;
  const std::vector<std::uint16_t> tensor = probe::index_tensor(probe::kTile, 2 * probe::kTile);
  const std::size_t n = std::size_t{4} * probe::kBoxElements;
  Dev dt(tensor.size() * 2), dout(n * 2), ds(2 * sizeof(int));
  dt.upload(tensor.data());
  fill<std::uint16_t>(dout, n, 0xFFFF);
  fill<int>(ds, 2, -1);
  finish(probe::launch_multicast_probe(dt.as<std::uint16_t>(), dout.as<std::uint16_t>(), ds.as<int>()));
  // Both blocks' statuses: each says what its own barriers did.
  const std::vector<int> status = download<int>(ds, 2);
  probe::Verdict both;
  for (int rank = 0; rank < 2; ++rank) {
    const probe::Verdict v =
        probe::judge_status(status[static_cast<std::size_t>(rank)], "block " + std::to_string(rank));
    if (v.ok) continue;
    both.ok = false;
    both.summary += (both.summary.empty() ? "" : "; ") + v.summary;
  }
  if (!both.ok) return from_verdict(name, both);
  return from_verdict(name, probe::judge_multicast(download<std::uint16_t>(dout, n).data()));
}

/// One wgmma probe run: the kernel's status, then its fragments (into *fragments).
kernels::probe::Verdict run_mma_probe(const kernels::probe::MmaInputs& in, kernels::Half16 type,
                                      const kernels::probe::Descriptors& d, std::vector<float>* fragments) {
  namespace probe = kernels::probe;
  const std::vector<std::uint16_t> a = probe::to_bits(in.a, type), b = probe::to_bits(in.b, type);
  Dev da(a.size() * 2), db(b.size() * 2), dout(probe::kFragmentFloats * sizeof(float)), ds(sizeof(int));
  da.upload(a.data());
  db.upload(b.data());
  dout.poison();
  fill<int>(ds, 1, -1);
  finish(probe::launch_wgmma_probe(da.as<std::uint16_t>(), db.as<std::uint16_t>(), type, d, dout.as<float>(),
                                   ds.as<int>()));
  *fragments = download<float>(dout, probe::kFragmentFloats);
  return probe::judge_status(download<int>(ds, 1)[0], "the warpgroup");
}

/// The wgmma probe: the GEMM's descriptors, and when they are wrong the diagnosis and the
/// variants (probe::probe_mma), each launched on the device.
Verification probe_mma(const std::string& name, kernels::Half16 type) {
  namespace probe = kernels::probe;
  const probe::Descriptors gemm = probe::gemm_descriptors();
  return from_verdict(
      name, probe::probe_mma(gemm, probe::descriptor_variants(gemm),
                             [type](const probe::MmaInputs& in, const probe::Descriptors& d,
                                    std::vector<float>* fragments) { return run_mma_probe(in, type, d, fragments); }));
}

Verification intensity_f32_check(int sms, int fma, int every) {
  const std::size_t n = kOddWords;
  std::vector<float> in(n), out(n);
  fill_intensity_f32(in.data(), n, 20);
  Dev a(n * 4), b(n * 4);
  a.upload(in.data());
  b.poison();
  finish(kernels::launch_intensity_fp32(a.as<float>(), b.as<float>(), n, fma, every, Coeff::kA32, Coeff::kB32, sms,
                                        nullptr));
  b.download(out.data());
  return check_intensity_f32(in.data(), out.data(), n, fma, every, Coeff::kA32, Coeff::kB32, kIntensityF32RelTol);
}

Verification intensity_f16_check(int sms, int fma) {
  const std::size_t n = kOddWords;
  std::vector<std::uint32_t> in(n), out(n);
  fill_intensity_f16x2(in.data(), n, 21);
  const std::uint32_t ha = kernels::intensity::splat_half2(Coeff::kA16);
  const std::uint32_t hb = kernels::intensity::splat_half2(Coeff::kB16);
  Dev a(n * 4), b(n * 4);
  a.upload(in.data());
  b.poison();
  finish(kernels::launch_intensity_fp16x2(a.as<std::uint32_t>(), b.as<std::uint32_t>(), n, fma, ha, hb, sms, nullptr));
  b.download(out.data());
  return check_intensity_f16x2(in.data(), out.data(), n, fma, ha, hb, kIntensityF16Ulps);
}

Verification peak_check(int sms, bool fp32) {
  const std::size_t n = kernels::kPeakTileElems * 37;  // the launcher needs whole tiles
  const int rounds = 3;
  const long long steps = static_cast<long long>(rounds) * kernels::kPeakStepsPerRound;
  Dev a(n * 4), b(n * 4);
  b.poison();
  if (fp32) {
    std::vector<float> in(n), out(n);
    fill_intensity_f32(in.data(), n, 22);
    a.upload(in.data());
    finish(kernels::launch_peak_fp32(a.as<float>(), b.as<float>(), n, rounds, Coeff::kA32, Coeff::kB32, sms, nullptr));
    b.download(out.data());
    return check_intensity_f32(in.data(), out.data(), n, steps, 1, Coeff::kA32, Coeff::kB32, kIntensityF32RelTol);
  }
  std::vector<std::uint32_t> in(n), out(n);
  fill_intensity_f16x2(in.data(), n, 23);
  const std::uint32_t ha = kernels::intensity::splat_half2(Coeff::kA16);
  const std::uint32_t hb = kernels::intensity::splat_half2(Coeff::kB16);
  a.upload(in.data());
  finish(kernels::launch_peak_fp16x2(a.as<std::uint32_t>(), b.as<std::uint32_t>(), n, rounds, ha, hb, sms, nullptr));
  b.download(out.data());
  return check_intensity_f16x2(in.data(), out.data(), n, steps, ha, hb, kIntensityF16Ulps);
}

/// The peer-to-peer SM copy at an odd size between two buffers of this device: the kernel's
/// indexing is the same whichever GPU owns them, so one GPU is enough to check it.
Verification p2p_copy_check(int sms) {
  std::vector<unsigned char> in(kOddBytes), out(kOddBytes);
  fill_random_u32(in.data(), kOddBytes, 25);
  Dev a(kOddBytes), b(kOddBytes);
  a.upload(in.data());
  b.poison();
  finish(kernels::launch_p2p_copy(a.as<void>(), b.as<void>(), kOddBytes, sms, nullptr));
  b.download(out.data());
  return check_copy(in.data(), out.data(), kOddBytes);
}

/// The PCIe SM-copy kernel reading mapped pinned host memory into device memory.
Verification pcie_sm_copy_check(int sms) {
  void* host = nullptr;
  GPUBENCH_CUDA_CHECK(cudaHostAlloc(&host, kOddBytes, cudaHostAllocMapped));
  std::vector<unsigned char> out(kOddBytes);
  fill_random_u32(host, kOddBytes, 24);
  Verification v;
  try {
    void* dev_view = nullptr;
    GPUBENCH_CUDA_CHECK(cudaHostGetDevicePointer(&dev_view, host, 0));
    Dev b(kOddBytes);
    b.poison();
    finish(kernels::launch_pcie_sm_copy(dev_view, b.as<void>(), kOddBytes, sms, nullptr));
    b.download(out.data());
    v = check_copy(host, out.data(), kOddBytes);
  } catch (...) {
    GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(host));
    throw;
  }
  GPUBENCH_CUDA_CHECK(cudaFreeHost(host));
  return v;
}

// ---- memory family: axpy in each precision, checksum, transform ----

const char* axpy_type_name(kernels::AxpyType t) {
  switch (t) {
    case kernels::AxpyType::fp64: return "fp64";
    case kernels::AxpyType::fp32: return "fp32";
    case kernels::AxpyType::fp16: return "fp16";
    case kernels::AxpyType::bf16: return "bf16";
  }
  return "?";
}

/// n random finite elements of `t` (bit patterns, no inf or NaN, so no result is a NaN): half
/// uniform in [-4, 4) rounded to the type (similar magnitudes: at a = 0.5 many sums fall exactly
/// halfway and test round-to-nearest-even), half any finite pattern (denormals, negatives, huge
/// values whose sum overflows to inf).
std::vector<unsigned char> axpy_input(kernels::AxpyType t, std::size_t n, std::uint64_t seed) {
  const std::size_t eb = static_cast<std::size_t>(kernels::axpy_elem_bytes(t));
  std::vector<unsigned char> v(n * eb);
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t bits = 0;
    for (;;) {
      const std::uint64_t r = splitmix64_next(state);
      const bool narrow = (r & 1u) != 0;
      const double u = static_cast<double>(r >> 11) * 0x1.0p-53 * 8.0 - 4.0;
      const auto f = static_cast<float>(u);
      std::uint32_t fb = 0;
      std::memcpy(&fb, &f, 4);
      if (t == kernels::AxpyType::fp64) {
        std::memcpy(&bits, &u, 8);
        if (!narrow) bits = splitmix64_next(state);
        if (((bits >> 52) & 0x7FFu) != 0x7FFu) break;
      } else if (t == kernels::AxpyType::fp32) {
        bits = narrow ? fb : splitmix64_next(state) & 0xFFFFFFFFu;
        if (((bits >> 23) & 0xFFu) != 0xFFu) break;
      } else if (t == kernels::AxpyType::fp16) {
        bits = narrow ? kernels::float_to_half_bits(f) : splitmix64_next(state) & 0xFFFFu;
        if (((bits >> 10) & 0x1Fu) != 0x1Fu) break;
      } else {
        bits = narrow ? memory::float_to_bf16_bits(f) : splitmix64_next(state) & 0xFFFFu;
        if (((bits >> 7) & 0xFFu) != 0xFFu) break;
      }
    }
    std::memcpy(v.data() + i * eb, &bits, eb);  // little-endian: the low bytes
  }
  return v;
}

/// launch_axpy at an odd size (a partial vector at the end) against memory::axpy_element bit for
/// bit; 64 poisoned bytes after out[n) must stay poisoned. a = 0.5 (the rows' scalar) and
/// a = -1/3 (a*x inexact: only a fused multiply-add in the compute type matches).
Verification axpy_check(int sms, kernels::AxpyType t, double a) {
  const std::size_t n = kOddWords;
  const std::size_t eb = static_cast<std::size_t>(kernels::axpy_elem_bytes(t));
  const std::size_t bytes = n * eb, guard = 64;
  const std::vector<unsigned char> x = axpy_input(t, n, 30 + static_cast<std::uint64_t>(t));
  const std::vector<unsigned char> y = axpy_input(t, n, 40 + static_cast<std::uint64_t>(t));
  std::vector<unsigned char> out(bytes + guard), want(bytes), poisoned(bytes + guard);
  poison_fill(poisoned.data(), poisoned.size());
  Dev dx(bytes), dy(bytes), dout(bytes + guard);
  dx.upload(x.data());
  dy.upload(y.data());
  dout.poison();
  finish(kernels::launch_axpy(t, a, dx.as<void>(), dy.as<void>(), dout.as<void>(), n, sms, nullptr));
  dout.download(out.data());
  for (std::size_t i = 0; i < n; ++i) {
    memory::axpy_element(t, a, x.data(), y.data(), want.data(), i);
    if (std::memcmp(out.data() + i * eb, want.data() + i * eb, eb) != 0) {
      std::uint64_t got = 0, expected = 0, xi = 0, yi = 0;
      std::memcpy(&got, out.data() + i * eb, eb);
      std::memcpy(&expected, want.data() + i * eb, eb);
      std::memcpy(&xi, x.data() + i * eb, eb);
      std::memcpy(&yi, y.data() + i * eb, eb);
      char line[160];
      std::snprintf(line, sizeof line, "out[%zu] = 0x%llx, expected 0x%llx (x 0x%llx, y 0x%llx)", i,
                    static_cast<unsigned long long>(got), static_cast<unsigned long long>(expected),
                    static_cast<unsigned long long>(xi), static_cast<unsigned long long>(yi));
      return Verification::fail(line);
    }
  }
  if (std::memcmp(out.data() + bytes, poisoned.data() + bytes, guard) != 0)
    return Verification::fail("bytes past out[n) written");
  return Verification::pass();
}

/// launch_checksum over n words starting one word past a 16-byte boundary (head, bulk and tail),
/// at most max_blocks partials: they add up to checksum_reference, none is written past *blocks.
Verification checksum_check(int sms, int max_blocks) {
  const std::size_t n = kOddWords - 2;
  std::vector<std::uint32_t> in(kOddWords);
  fill_random_u32(in.data(), kOddWords * 4, 26);
  const auto mb = static_cast<std::size_t>(max_blocks);
  Dev a(kOddWords * 4), partial((mb + 1) * 4);
  a.upload(in.data());
  partial.poison();
  int blocks = 0;
  finish(kernels::launch_checksum(a.as<std::uint32_t>() + 1, n, partial.as<std::uint32_t>(), max_blocks, &blocks, sms,
                                  nullptr));
  if (blocks < 1 || blocks > max_blocks)
    return Verification::fail("blocks = " + std::to_string(blocks) + ", max_blocks " + std::to_string(max_blocks));
  std::vector<std::uint32_t> sums(mb + 1);
  partial.download(sums.data());
  std::uint32_t total = 0;
  for (int i = 0; i < blocks; ++i) total += sums[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(blocks); i <= mb; ++i)
    if (sums[i] != kPoisonU32) return Verification::fail("partial[" + std::to_string(i) + "] written past the grid");
  const std::uint32_t want = memory::checksum_reference(in.data() + 1, n);
  if (total != want)
    return Verification::fail("sum of " + std::to_string(blocks) + " partials " + std::to_string(total) +
                              ", expected " + std::to_string(want));
  return Verification::pass();
}

/// launch_transform in place over n words starting one word past a 16-byte boundary: every word
/// is transform_word(word, rounds), the words around the range unchanged.
Verification transform_check(int sms, int rounds) {
  const std::size_t n = kOddWords - 3;
  std::vector<std::uint32_t> in(kOddWords), out(kOddWords);
  fill_random_u32(in.data(), kOddWords * 4, 27);
  Dev a(kOddWords * 4);
  a.upload(in.data());
  finish(kernels::launch_transform(a.as<std::uint32_t>() + 1, n, rounds, sms, nullptr));
  a.download(out.data());
  for (std::size_t i = 0; i < kOddWords; ++i) {
    const std::uint32_t want = i >= 1 && i <= n ? kernels::transform_word(in[i], rounds) : in[i];
    if (out[i] != want)
      return Verification::fail("word " + std::to_string(i) + " = " + std::to_string(out[i]) + ", expected " +
                                std::to_string(want));
  }
  return Verification::pass();
}

/// Every invalid argument of the three launchers returns cudaErrorInvalidValue and launches
/// nothing (the poisoned output stays poisoned); zero elements is a valid, empty launch (the
/// checksum still writes one partial, 0).
Verification memory_invalid_args_check(int sms) {
  using kernels::AxpyType;
  const std::size_t bytes = 4096;
  Dev a(bytes), b(bytes);
  b.poison();
  const auto* x = a.as<unsigned char>();
  auto* out = b.as<unsigned char>();
  auto* words = b.as<std::uint32_t>();
  int blocks = -1;
  const struct {
    const char* what;
    int status;
  } calls[] = {
      {"axpy: unknown type", kernels::launch_axpy(static_cast<AxpyType>(7), 0.5, x, x, out, 16, sms, nullptr)},
      {"axpy: null x", kernels::launch_axpy(AxpyType::fp32, 0.5, nullptr, x, out, 16, sms, nullptr)},
      {"axpy: null y", kernels::launch_axpy(AxpyType::fp32, 0.5, x, nullptr, out, 16, sms, nullptr)},
      {"axpy: null out", kernels::launch_axpy(AxpyType::fp32, 0.5, x, x, nullptr, 16, sms, nullptr)},
      {"axpy: x not 16-byte aligned", kernels::launch_axpy(AxpyType::fp16, 0.5, x + 8, x, out, 16, sms, nullptr)},
      {"axpy: y not 16-byte aligned", kernels::launch_axpy(AxpyType::fp64, 0.5, x, x + 8, out, 16, sms, nullptr)},
      {"axpy: out not 16-byte aligned", kernels::launch_axpy(AxpyType::bf16, 0.5, x, x, out + 2, 16, sms, nullptr)},
      {"axpy: out is x", kernels::launch_axpy(AxpyType::fp32, 0.5, out, x, out, 16, sms, nullptr)},
      {"axpy: out overlaps y", kernels::launch_axpy(AxpyType::fp32, 0.5, x, out + 16, out, 16, sms, nullptr)},
      {"axpy: sm_count 0", kernels::launch_axpy(AxpyType::fp32, 0.5, x, x, out, 16, 0, nullptr)},
      {"checksum: null in", kernels::launch_checksum(nullptr, 16, words, 4, &blocks, sms, nullptr)},
      {"checksum: null partial",
       kernels::launch_checksum(a.as<std::uint32_t>(), 16, nullptr, 4, &blocks, sms, nullptr)},
      {"checksum: null blocks", kernels::launch_checksum(a.as<std::uint32_t>(), 16, words, 4, nullptr, sms, nullptr)},
      {"checksum: max_blocks 0", kernels::launch_checksum(a.as<std::uint32_t>(), 16, words, 0, &blocks, sms, nullptr)},
      {"checksum: sm_count 0", kernels::launch_checksum(a.as<std::uint32_t>(), 16, words, 4, &blocks, 0, nullptr)},
      {"checksum: in not 4-byte aligned",
       kernels::launch_checksum(reinterpret_cast<const std::uint32_t*>(x + 2), 16, words, 4, &blocks, sms, nullptr)},
      {"transform: null data", kernels::launch_transform(nullptr, 16, 1, sms, nullptr)},
      {"transform: rounds -1", kernels::launch_transform(words, 16, -1, sms, nullptr)},
      {"transform: sm_count 0", kernels::launch_transform(words, 16, 1, 0, nullptr)},
      {"transform: data not 4-byte aligned",
       kernels::launch_transform(reinterpret_cast<std::uint32_t*>(out + 2), 16, 1, sms, nullptr)},
  };
  for (const auto& c : calls) {
    if (c.status != 1) return Verification::fail(std::string(c.what) + ": status " + std::to_string(c.status));
  }
  if (blocks != 0) return Verification::fail("checksum: *blocks = " + std::to_string(blocks) + " after a rejection");
  const int empty_axpy = kernels::launch_axpy(AxpyType::fp16, 0.5, x, x + 2048, out, 0, sms, nullptr);
  const int empty_transform = kernels::launch_transform(words, 0, 3, sms, nullptr);
  GPUBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  if (empty_axpy != 0 || empty_transform != 0) return Verification::fail("n = 0 rejected");
  std::vector<unsigned char> got(bytes), poisoned(bytes);
  b.download(got.data());
  poison_fill(poisoned.data(), bytes);
  if (got != poisoned) return Verification::fail("a rejected or empty launch wrote its output");
  finish(kernels::launch_checksum(a.as<std::uint32_t>(), 0, words, 4, &blocks, sms, nullptr));
  std::uint32_t first = kPoisonU32;
  GPUBENCH_CUDA_CHECK(cudaMemcpy(&first, words, 4, cudaMemcpyDeviceToHost));
  if (blocks != 1 || first != 0)
    return Verification::fail("checksum of 0 words: blocks " + std::to_string(blocks) + ", partial " +
                              std::to_string(first));
  return Verification::pass();
}

#ifndef GPUBENCH_KERNEL_CHECK_EMULATED
/// The spin kernel released by the host through mapped memory (the flag is set before the
/// launch, so the kernel sees it at once and reports kSpinReleased).
Verification pcie_spin_check() {
  std::uint32_t* flag = nullptr;
  GPUBENCH_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&flag), 4, cudaHostAllocMapped));
  *flag = 1;
  Verification v;
  try {
    void* dev_flag = nullptr;
    GPUBENCH_CUDA_CHECK(cudaHostGetDevicePointer(&dev_flag, flag, 0));
    Dev status(4);
    status.poison();
    finish(kernels::launch_pcie_spin(static_cast<const std::uint32_t*>(dev_flag), status.as<std::uint32_t>(),
                                     1000000000ull, nullptr));
    std::uint32_t got = 0;
    status.download(&got);
    v = got == kernels::kSpinReleased
            ? Verification::pass()
            : Verification::fail("spin status " + std::to_string(got) + ", expected released");
  } catch (...) {
    GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(flag));
    throw;
  }
  GPUBENCH_CUDA_CHECK(cudaFreeHost(flag));
  return v;
}
#endif

struct Check {
  std::string name;
  std::function<Verification()> run;
};

std::vector<Check> all_checks(int sms) {
  using U16 = std::uint16_t;
  std::vector<Check> checks = {
      {"copy", [=] { return copy_check(sms); }},
      {"seeded_fill, words and floats", [=] { return seeded_fill_check(sms); }},
      {"read", [=] { return read_check(sms); }},
      {"block_set_read, 3 passes", [=] { return block_set_read_check(sms); }},
      {"write", [=] { return write_check(sms); }},
      {"gather", [=] { return gather_check(sms); }},
      {"copy/read/write, 5 passes over 3 slots", [=] { return passes_check(sms); }},
      {"chase ring fill and chase", [=] { return chase_check(sms); }},
      {"smem 3 x 8 KiB", [] { return smem_check(3, std::size_t{8} * 1024); }},
      {"smem 2 x 64 KiB", [] { return smem_check(2, std::size_t{64} * 1024); }},
      {"sgemm_naive 131x137x73",
       [] {
         return gemm_check<float>(131, 137, 73, [](const float* a, const float* b, float* c) {
           return kernels::launch_sgemm_naive(a, b, c, 131, 137, 73, nullptr);
         });
       }},
      {"sgemm 131x137x73",
       [] {
         return gemm_check<float>(131, 137, 73, [](const float* a, const float* b, float* c) {
           return kernels::launch_sgemm(a, b, c, 131, 137, 73, nullptr);
         });
       }},
      {"hgemm 131x136x72",
       [] {
         GPUBENCH_CUDA_CHECK(kernels::hgemm_configure());
         return gemm_check<U16>(131, 136, 72, [](const U16* a, const U16* b, float* c) {
           return kernels::launch_hgemm(a, b, c, 131, 136, 72, nullptr);
         });
       }},
      {"intensity_fp32 k=1 every=2", [=] { return intensity_f32_check(sms, 1, 2); }},
      {"peak_fp32", [=] { return peak_check(sms, true); }},
      {"peak_fp16x2", [=] { return peak_check(sms, false); }},
      {"pcie_sm_copy", [=] { return pcie_sm_copy_check(sms); }},
      {"p2p_copy", [=] { return p2p_copy_check(sms); }},
  };
#ifndef GPUBENCH_KERNEL_CHECK_EMULATED
  // Only on a GPU: Thrust (a library, not a launcher of ours) and the spin kernel (it reads the
  // GPU's global timer).
  checks.push_back({"random_permutation", [] { return permutation_check(); }});
  checks.push_back({"pcie_spin", [] { return pcie_spin_check(); }});
#endif
  checks.push_back({"hgemm_wmma 128x256x96", [] {
                      return gemm_check<std::uint16_t>(
                          128, 256, 96, [](const std::uint16_t* a, const std::uint16_t* b, float* c) {
                            return kernels::launch_hgemm_wmma(a, b, c, 128, 256, 96, nullptr);
                          });
                    }});
  // Every FMA count of the sweep's dispatch table, so a case that launches the wrong
  // instantiation fails.
  for (int k : kernels::kSweepFmaCounts) {
    checks.push_back({"intensity_fp32 k=" + std::to_string(k), [=] { return intensity_f32_check(sms, k, 1); }});
    checks.push_back({"intensity_fp16x2 k=" + std::to_string(k), [=] { return intensity_f16_check(sms, k); }});
  }
  for (int stride : {1, 3, 8, 32}) {
    checks.push_back({"strided stride=" + std::to_string(stride), [=] { return strided_check(sms, stride); }});
  }
  for (kernels::AxpyType t :
       {kernels::AxpyType::fp64, kernels::AxpyType::fp32, kernels::AxpyType::fp16, kernels::AxpyType::bf16}) {
    const std::string name = std::string("memory axpy ") + axpy_type_name(t);
    checks.push_back({name + " a=0.5", [=] { return axpy_check(sms, t, memory::kAxpyScalar); }});
    checks.push_back({name + " a=-1/3", [=] { return axpy_check(sms, t, -1.0 / 3.0); }});
  }
  checks.push_back({"memory checksum", [=] { return checksum_check(sms, 4096); }});
  checks.push_back({"memory checksum max_blocks=3", [=] { return checksum_check(sms, 3); }});
  for (int rounds : {0, 1, 7}) {
    checks.push_back(
        {"memory transform rounds=" + std::to_string(rounds), [=] { return transform_check(sms, rounds); }});
  }
  checks.push_back({"memory invalid arguments", [=] { return memory_invalid_args_check(sms); }});
  // Last, so that a hang there (the kit's time limit) loses no other check's result: the Hopper
  // wgmma kernel, on compute capability 9.0 only (sm_90a), in 2 x 1 clusters with B
  // multicast and one block per tile: partial tiles in M, N and K, more tiles than a small GPU
  // has SMs, FP16 and BF16 inputs (BF16 patterns of the same values when they are exact: the FP16
  // reference then checks both). 300 rows are 3 tile rows: the second pair's second tile lies
  // wholly below C.
  if (wgmma_device()) {
    // The building blocks first, alone (bounded waits: a load or arrive that never completes is
    // reported, not hung on): the A box (64 x 128) and a B box (64 x 64 of a 256-wide tensor),
    // the wgmma descriptors and accumulator layout, then the epilogue's C store and the cluster
    // multicast - after them, because a fault of a TMA store or of the cluster forms (mapa, remote
    // arrive, multicast) is sticky and would take the mma probes' answers with it.
    checks.push_back({"wgmma_probe tma A box", [] { return probe_tma_box("wgmma_probe tma A box", 64, 128); }});
    checks.push_back({"wgmma_probe tma B box", [] { return probe_tma_box("wgmma_probe tma B box", 256, 64); }});
    for (const kernels::Half16 type : {kernels::Half16::fp16, kernels::Half16::bf16}) {
      const std::string name = std::string("wgmma_probe mma ") + (type == kernels::Half16::fp16 ? "fp16" : "bf16");
      checks.push_back({name, [=] { return probe_mma(name, type); }});
    }
    checks.push_back({"wgmma_probe tma C store", [] { return probe_tma_store("wgmma_probe tma C store"); }});
    checks.push_back({"wgmma_probe multicast", [] { return probe_multicast("wgmma_probe multicast"); }});
    struct WgmmaShape {
      int m, n, k;
    };
    std::vector<WgmmaShape> shapes = {{300, 520, 136}};
#ifndef GPUBENCH_KERNEL_CHECK_EMULATED
    // On a GPU only (minutes under the emulation): 9 x 17 = 153 tiles, more than an H100's 132
    // SMs, so persistent blocks take a second tile with the ring's phase carried over (clusters:
    // 5 x 17 = 85 tile pairs on at most 66 clusters, the last pair row's second tiles below C);
    // 9 K stages wrap the 4-stage ring; the last tile column and K stage are partial.
    shapes.push_back({1100, 4104, 520});
#endif
    // The threads' own stores before the TMA's (a fault of a TMA store would be sticky, and take
    // every later answer with it), and within each one block per tile first (a hang of the
    // cluster kernel then leaves the one-block kernel's result in the log). None had run on a GPU.
    struct WgmmaVariant {
      kernels::WgmmaCluster cluster;
      kernels::WgmmaEpilogue epilogue;
      const char* name;
    };
    constexpr WgmmaVariant kVariants[] = {
        {kernels::WgmmaCluster::single, kernels::WgmmaEpilogue::direct, "hgemm_wgmma_unclustered_direct_store"},
        {kernels::WgmmaCluster::pair, kernels::WgmmaEpilogue::direct, "hgemm_wgmma_direct_store"},
        {kernels::WgmmaCluster::single, kernels::WgmmaEpilogue::tma_store, "hgemm_wgmma_unclustered"},
        {kernels::WgmmaCluster::pair, kernels::WgmmaEpilogue::tma_store, "hgemm_wgmma"}};
    for (const WgmmaShape& s : shapes) {
      for (const WgmmaVariant& v : kVariants) {
        for (const kernels::Half16 type : {kernels::Half16::fp16, kernels::Half16::bf16}) {
          const std::string name = std::string(v.name) + (type == kernels::Half16::fp16 ? " fp16 " : " bf16 ") +
                                   std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
          const kernels::WgmmaCluster cluster = v.cluster;
          const kernels::WgmmaEpilogue epilogue = v.epilogue;
          const bool first = &s == &shapes.front() && &v == &kVariants[0] && type == kernels::Half16::fp16;
          checks.push_back(
              {name, [=] {
                 GPUBENCH_CUDA_CHECK(kernels::hgemm_wgmma_configure());
                 const std::string why = kernels::hgemm_wgmma_register_error(kernels::hgemm_wgmma_entry_registers());
                 if (!why.empty()) return Verification::fail(why);
                 if (first) {
                   // How many SMs the pair kernel's persistent grid gets (GPCs with an
                   // odd number of SMs can leave some idle): a figure only a GPU gives.
                   std::printf(
                       "info hgemm_wgmma: cudaOccupancyMaxActiveClusters: %d clusters of 2 "
                       "blocks resident at once, %d SMs; %d registers per thread at entry\n",
                       kernels::hgemm_wgmma_resident_clusters(), sms, kernels::hgemm_wgmma_entry_registers());
                 }
                 return wgmma_check(s.m, s.n, s.k, type, cluster, epilogue);
               }});
        }
      }
    }
  }
  return checks;
}

}  // namespace
}  // namespace gpubench

int main(int argc, char** argv) {
  using namespace gpubench;
  // Optional: a substring selects the checks whose name has it; "-substring" the others.
  const char* pick = argc > 1 ? argv[1] : nullptr;
  const bool exclude = pick != nullptr && pick[0] == '-';
  const std::string pattern = pick == nullptr ? "" : exclude ? pick + 1 : pick;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "gpubench_kernel_check: no usable CUDA device\n");
    return 2;
  }
  int failed = 0, ran = 0;
  try {
    const int sms = sm_count();
    for (const auto& c : all_checks(sms)) {
      const bool named = c.name.find(pattern) != std::string::npos;
      if (pick != nullptr && named == exclude) continue;
      ++ran;
      // Before it runs, so that a check that hangs is named in the log when it is stopped.
      std::fprintf(stderr, "checking %s\n", c.name.c_str());
      std::fflush(stderr);
      Verification v;
      try {
        v = c.run();
      } catch (const std::exception& e) {
        v = Verification::fail(e.what());
      }
      if (v.ok) {
        std::printf("ok   %s\n", c.name.c_str());
      } else {
        std::printf("FAIL %s: %s\n", c.name.c_str(), v.message.c_str());
        ++failed;
      }
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::printf("FAIL setup: %s\n", e.what());
    return 1;
  }
  std::printf("%d of %d kernel checks passed\n", ran - failed, ran);
  return failed == 0 && ran > 0 ? 0 : 1;
}
