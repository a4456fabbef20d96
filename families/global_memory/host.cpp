// Host versions of the device-memory kernels: the same access patterns, names, counters and
// checks as the CUDA family, on all cores. Each timed batch runs inside one parallel region
// (every thread repeats its own chunk `batch` times), so thread dispatch is paid once per
// sample, as a CUDA graph pays one launch per batch.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/family.h"
#include "harness/host/corruptible_output.h"
#include "harness/host/host_backend.h"
#include "harness/host/host_buffer.h"
#include "harness/host/host_timer.h"
#include "harness/host/parallel.h"
#include "harness/random.h"
#include "harness/verify.h"

GPUBENCH_FAMILY(global_memory)

namespace gpubench {

namespace {

constexpr std::uint64_t kSeed = 0x9e3779b97f4a7c15ull;

// Copy with 32-byte AVX2 loads; non-temporal stores when the working set is larger than the
// last-level cache (the stores would only evict useful lines), regular stores otherwise.
__attribute__((target("avx2"))) void copy_avx2(const char* src, char* dst, std::size_t n, bool streaming) {
  std::size_t i = 0;
  // Align the destination to 32 bytes for the vector stores.
  while (i < n && (reinterpret_cast<std::uintptr_t>(dst + i) & 31u) != 0) {
    dst[i] = src[i];
    ++i;
  }
  if (streaming) {
    for (; i + 128 <= n; i += 128) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 32));
      const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 64));
      const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 96));
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), a);
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 32), b);
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 64), c);
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 96), d);
    }
    _mm_sfence();
  } else {
    for (; i + 128 <= n; i += 128) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 32));
      const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 64));
      const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 96));
      _mm256_store_si256(reinterpret_cast<__m256i*>(dst + i), a);
      _mm256_store_si256(reinterpret_cast<__m256i*>(dst + i + 32), b);
      _mm256_store_si256(reinterpret_cast<__m256i*>(dst + i + 64), c);
      _mm256_store_si256(reinterpret_cast<__m256i*>(dst + i + 96), d);
    }
  }
  for (; i < n; ++i) dst[i] = src[i];
}

void copy_portable(const char* src, char* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
}

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

// The 32-bit wrapping sum of w[0, n): the read kernels' work. Four independent 32-byte
// accumulators, so the loads and not one chain of dependent adds set the pace: the compiler's
// own loop (one 16-byte accumulator) read an L1-resident set at 22 GB/s per core on a 2-vCPU
// EPYC, this one at 100 GB/s, and block_set_read's per-core cache line fell below DRAM.
__attribute__((target("avx2"))) std::uint32_t sum_u32_avx2(const std::uint32_t* w, std::size_t n) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a = _mm256_add_epi32(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i)));
    b = _mm256_add_epi32(b, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i + 8)));
    c = _mm256_add_epi32(c, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i + 16)));
    d = _mm256_add_epi32(d, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i + 24)));
  }
  alignas(32) std::uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi32(_mm256_add_epi32(a, b), _mm256_add_epi32(c, d)));
  std::uint32_t s = 0;
  for (const std::uint32_t x : lanes) s += x;
  for (; i < n; ++i) s += w[i];
  return s;
}

std::uint32_t sum_u32(const std::uint32_t* w, std::size_t n) {
  if (have_avx2()) return sum_u32_avx2(w, n);
  std::uint32_t s = 0;
  for (std::size_t i = 0; i < n; ++i) s += w[i];  // vectorised by the compiler
  return s;
}

class CopyWorkload final : public Workload, public CorruptibleOutput {
 public:
  CopyWorkload(const BenchCase& c, const Backend& b, bool use_memcpy)
      : bytes_(static_cast<std::size_t>(c.arg("bytes"))),
        streaming_(b.device().l2_bytes > 0 &&
                   2.0 * static_cast<double>(bytes_) > static_cast<double>(b.device().l2_bytes)),
        use_memcpy_(use_memcpy) {}
  void prepare() override {
    in_ = std::make_unique<HostBuffer>(bytes_);
    out_ = std::make_unique<HostBuffer>(bytes_ + kDstOffset);
    fill_random_u32(in_->p, bytes_, kSeed);
  }
  void poison() override { poison_fill(dst(), bytes_); }
  double run(int batch) override {
    const char* src = in_->as<const char>();
    char* dst = this->dst();
    return time_seconds([&] {
      parallel_for(
          bytes_,
          [&](std::size_t b, std::size_t e, unsigned) {
            for (int r = 0; r < batch; ++r) {
              if (use_memcpy_) {
                std::memcpy(dst + b, src + b, e - b);
              } else if (have_avx2()) {
                copy_avx2(src + b, dst + b, e - b, streaming_);
              } else {
                copy_portable(src + b, dst + b, e - b);
              }
            }
          },
          4096);
    });
  }
  Verification verify() override { return check_copy(in_->p, dst(), bytes_); }
  std::size_t output_elements() const override { return bytes_; }
  void corrupt_output_for_test(std::size_t index) override { dst()[index] ^= 0x5a; }

 private:
  // The destination starts 6.25 KiB past a 2 MiB boundary, while the source starts on one:
  // with both on the same boundary every load and its store hit the same cache set and DRAM
  // bank, and the copy lost 10-15 % (STREAM offsets its arrays for the same reason).
  static constexpr std::size_t kDstOffset = 4096 + 2048 + 256;
  char* dst() const { return out_->as<char>() + kDstOffset; }
  std::size_t bytes_;
  bool streaming_;
  bool use_memcpy_;
  std::unique_ptr<HostBuffer> in_, out_;
};

class ReadWorkload final : public Workload, public CorruptibleOutput {
 public:
  explicit ReadWorkload(const BenchCase& c) : n_(static_cast<std::size_t>(c.arg("bytes")) / 4) {}
  void prepare() override {
    in_ = std::make_unique<HostBuffer>(n_ * 4);
    fill_random_u32(in_->p, n_ * 4, kSeed);
    partial_.assign(host_threads(), 0);
  }
  void poison() override { std::fill(partial_.begin(), partial_.end(), kPoisonU32); }
  double run(int batch) override {
    const std::uint32_t* in = in_->as<const std::uint32_t>();
    // A thread left without a chunk (fewer than 64 words per thread: the 4 KiB row on more than
    // 16 CPUs) adds nothing; its slot must not keep the poison.
    std::fill(partial_.begin(), partial_.end(), 0u);
    return time_seconds([&] {
      parallel_for(n_, [&](std::size_t b, std::size_t e, unsigned t) {
        std::uint32_t s = 0;
        for (int r = 0; r < batch; ++r) {
          s = sum_u32(in + b, e - b);
          benchmark_keep(s);
        }
        partial_[t] = s;
      });
    });
  }
  Verification verify() override {
    std::uint32_t sum = 0;
    for (auto s : partial_) sum += s;
    return check_sum_u32(in_->as<const std::uint32_t>(), n_, sum);
  }
  std::size_t output_elements() const override { return partial_.size(); }
  void corrupt_output_for_test(std::size_t index) override { partial_.at(index) += 1; }

 private:
  // Keeps the per-repetition sum alive so the repetitions are not folded into one.
  static void benchmark_keep(std::uint32_t& v) { asm volatile("" : "+r"(v) : : "memory"); }
  std::size_t n_;
  std::unique_ptr<HostBuffer> in_;
  std::vector<std::uint32_t> partial_;
};

// The per-SM cache read on the host: every thread (one per CPU, pinned) reads the whole set, so
// each core re-reads it from its own L1/L2 while it fits. One operation is every thread's pass.
class BlockSetReadWorkload final : public Workload, public CorruptibleOutput {
 public:
  explicit BlockSetReadWorkload(const BenchCase& c)
      : n_(static_cast<std::size_t>(c.arg("bytes")) / 4), readers_(static_cast<std::size_t>(c.arg("readers"))) {}
  void prepare() override {
    // The work model counts readers x bytes: one reader per pool thread, as the row was made for.
    if (readers_ != host_threads())
      throw std::logic_error("block_set_read made for " + std::to_string(readers_) + " threads, the host runs " +
                             std::to_string(host_threads()));
    in_ = std::make_unique<HostBuffer>(n_ * 4);
    fill_random_u32(in_->p, n_ * 4, kSeed);
    partial_.assign(readers_, 0);
  }
  void poison() override { std::fill(partial_.begin(), partial_.end(), kPoisonU32); }
  double run(int batch) override {
    const std::uint32_t* in = in_->as<const std::uint32_t>();
    const std::size_t n = n_;
    return time_seconds([&] {
      parallel_for(
          readers_,
          [&](std::size_t b, std::size_t e, unsigned) {
            for (std::size_t r = b; r < e; ++r) {
              std::uint32_t s = 0;
              for (int pass = 0; pass < batch; ++pass) {
                s = sum_u32(in, n);
                keep(s);
              }
              partial_[r] = s;
            }
          },
          1);
    });
  }
  Verification verify() override {
    for (std::size_t r = 0; r < partial_.size(); ++r) {
      Verification v = check_sum_u32(in_->as<const std::uint32_t>(), n_, partial_[r]);
      if (!v.ok) return Verification::fail("thread " + std::to_string(r) + ": " + v.message);
    }
    return Verification::pass();
  }
  std::size_t output_elements() const override { return partial_.size(); }
  void corrupt_output_for_test(std::size_t index) override { partial_.at(index) += 1; }

 private:
  // Keeps each pass's sum alive so the passes are not folded into one.
  static void keep(std::uint32_t& v) { asm volatile("" : "+r"(v) : : "memory"); }
  std::size_t n_, readers_;
  std::unique_ptr<HostBuffer> in_;
  std::vector<std::uint32_t> partial_;
};

class WriteWorkload final : public Workload, public CorruptibleOutput {
 public:
  explicit WriteWorkload(const BenchCase& c) : n_(static_cast<std::size_t>(c.arg("bytes")) / 4) {}
  void prepare() override { out_ = std::make_unique<HostBuffer>(n_ * 4); }
  void poison() override { poison_fill(out_->p, n_ * 4); }
  double run(int batch) override {
    std::uint32_t* out = out_->as<std::uint32_t>();
    return time_seconds([&] {
      parallel_for(n_, [&](std::size_t b, std::size_t e, unsigned) {
        for (int r = 0; r < batch; ++r) {
          for (std::size_t i = b; i < e; ++i) out[i] = static_cast<std::uint32_t>(kSeed + i);
          asm volatile("" ::: "memory");
        }
      });
    });
  }
  Verification verify() override {
    return check_write_pattern(out_->as<const std::uint32_t>(), n_, static_cast<std::uint32_t>(kSeed));
  }
  std::size_t output_elements() const override { return n_; }
  void corrupt_output_for_test(std::size_t index) override { out_->as<std::uint32_t>()[index] ^= 0x5a5a5a5au; }

 private:
  std::size_t n_;
  std::unique_ptr<HostBuffer> out_;
};

class StridedWorkload final : public Workload, public CorruptibleOutput {
 public:
  explicit StridedWorkload(const BenchCase& c)
      : n_(static_cast<std::size_t>(c.arg("bytes")) / 4), stride_(static_cast<int>(c.arg("stride"))) {}
  void prepare() override {
    in_ = std::make_unique<HostBuffer>(n_ * 4);
    out_ = std::make_unique<HostBuffer>(n_ * 4);
    fill_random_u32(in_->p, n_ * 4, kSeed);
  }
  void poison() override { poison_fill(out_->p, n_ * 4); }
  double run(int batch) override {
    const float* in = in_->as<const float>();
    float* out = out_->as<float>();
    const std::size_t s = static_cast<std::size_t>(stride_);
    return time_seconds([&] {
      // Chunks are aligned to the stride so every thread starts on a touched element.
      parallel_for(
          n_,
          [&](std::size_t b, std::size_t e, unsigned) {
            for (int r = 0; r < batch; ++r) {
              for (std::size_t i = b; i < e; i += s) out[i] = in[i];
              asm volatile("" ::: "memory");
            }
          },
          std::max<std::size_t>(64, s));
    });
  }
  Verification verify() override { return check_strided(in_->as<const float>(), out_->as<const float>(), n_, stride_); }
  std::size_t output_elements() const override { return n_; }
  void corrupt_output_for_test(std::size_t index) override { out_->as<std::uint32_t>()[index] ^= 0x5a5a5a5au; }

 private:
  std::size_t n_;
  int stride_;
  std::unique_ptr<HostBuffer> in_, out_;
};

class GatherWorkload final : public Workload, public CorruptibleOutput {
 public:
  explicit GatherWorkload(const BenchCase& c) : n_(static_cast<std::size_t>(c.arg("bytes")) / 4) {}
  void prepare() override {
    in_ = std::make_unique<HostBuffer>(n_ * 4);
    out_ = std::make_unique<HostBuffer>(n_ * 4);
    idx_ = std::make_unique<HostBuffer>(n_ * 4);
    fill_random_u32(in_->p, n_ * 4, kSeed);
    make_permutation(idx_->as<std::uint32_t>(), n_, kSeed + 1);
  }
  void poison() override { poison_fill(out_->p, n_ * 4); }
  double run(int batch) override {
    const float* in = in_->as<const float>();
    const std::uint32_t* idx = idx_->as<const std::uint32_t>();
    float* out = out_->as<float>();
    return time_seconds([&] {
      parallel_for(n_, [&](std::size_t b, std::size_t e, unsigned) {
        for (int r = 0; r < batch; ++r) {
          for (std::size_t i = b; i < e; ++i) out[i] = in[idx[i]];
          asm volatile("" ::: "memory");
        }
      });
    });
  }
  Verification verify() override {
    return check_gather(in_->as<const float>(), idx_->as<const std::uint32_t>(), out_->as<const float>(), n_);
  }
  std::size_t output_elements() const override { return n_; }
  void corrupt_output_for_test(std::size_t index) override { out_->as<std::uint32_t>()[index] ^= 0x5a5a5a5au; }

 private:
  std::size_t n_;
  std::unique_ptr<HostBuffer> in_, out_, idx_;
};

class ChaseWorkload final : public Workload, public CorruptibleOutput {
 public:
  explicit ChaseWorkload(const BenchCase& c)
      : n_(static_cast<std::size_t>(c.arg("bytes")) / 4), steps_(static_cast<std::size_t>(c.arg("steps"))) {}
  void prepare() override {
    next_ = std::make_unique<HostBuffer>(n_ * 4);
    const std::vector<std::uint32_t> ring = make_chase_ring(n_, kSeed);  // the ring the CUDA backend chases
    std::memcpy(next_->p, ring.data(), n_ * 4);
  }
  void poison() override { sink_ = kPoisonU32; }
  double run(int batch) override {
    const std::uint32_t* next = next_->as<const std::uint32_t>();
    std::uint32_t p = 0;
    const double s = time_seconds([&] {
      for (int r = 0; r < batch; ++r) {
        p = 0;
        for (std::size_t i = 0; i < steps_; ++i) p = next[p];
        asm volatile("" : "+r"(p));
      }
    });
    sink_ = p;
    return s;
  }
  // The entries the chase read against the ring's formula, and its end: min(steps, n) formula
  // evaluations, where walking the whole ring to prove it one cycle took 9 s at 256 MiB.
  Verification verify() override {
    return check_chase_path(next_->as<const std::uint32_t>(), n_, kSeed, 0, steps_, sink_);
  }
  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    return {{"latency_ns", seconds_per_op / static_cast<double>(steps_) * 1e9}};
  }
  std::size_t output_elements() const override { return 1; }  // the index the chase ends on
  void corrupt_output_for_test(std::size_t /*index*/) override { sink_ ^= 1u; }

 private:
  std::size_t n_, steps_;
  std::uint32_t sink_ = kPoisonU32;
  std::unique_ptr<HostBuffer> next_;
};

}  // namespace

void families::global_memory::add_host_workloads(WorkloadTable& table) {
  table.add("bandwidth/copy/kernel", [](const BenchCase& c, Backend& b) -> std::unique_ptr<Workload> {
    return std::make_unique<CopyWorkload>(c, b, false);
  });
  table.add("bandwidth/copy/memcpy", [](const BenchCase& c, Backend& b) -> std::unique_ptr<Workload> {
    return std::make_unique<CopyWorkload>(c, b, true);
  });
  table.add("bandwidth/read/kernel", [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
    return std::make_unique<ReadWorkload>(c);
  });
  table.add("bandwidth/block_set_read/kernel", [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
    return std::make_unique<BlockSetReadWorkload>(c);
  });
  table.add("bandwidth/write/kernel", [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
    return std::make_unique<WriteWorkload>(c);
  });
  table.add("bandwidth/strided/kernel", [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
    return std::make_unique<StridedWorkload>(c);
  });
  table.add("bandwidth/gather/kernel", [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
    return std::make_unique<GatherWorkload>(c);
  });
  table.add("bandwidth/chase/kernel", [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
    return std::make_unique<ChaseWorkload>(c);
  });
  table.not_here("bandwidth/copy/memcpy_ce", "cudaMemcpy on a GPU's copy engine");
  table.not_here("bandwidth/copy/thrust", "Thrust's CUDA backend needs a GPU");
  table.not_here("bandwidth/read/cub", "CUB needs a GPU");
  table.not_here("bandwidth/gather/thrust", "Thrust's CUDA backend needs a GPU");
}

}  // namespace gpubench
