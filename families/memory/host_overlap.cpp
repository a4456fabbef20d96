// The host backend's copy/compute overlap row (families/memory/cases.cpp), the analogue of the
// GPU's H2D copy, kernel, D2H copy pipeline over streams:
//
//   memory/overlap/host_threads/threads:N,bytes:S   a source of S bytes of seeded 32-bit words
//     in 32 chunks; per chunk: copy in (memcpy source chunk -> the thread's staging buffer),
//     compute (kernels::transform_word over the staging words, `rounds` steps each), copy out
//     (staging -> destination). N threads, thread t owning chunks i with i % N == t, as stream t
//     would. One operation = the whole pipeline (GB/s counts both copies).
//
// `rounds` is chosen in prepare() so that computing a chunk takes about as long as copying it in:
// the balanced pipeline, where overlap can hide the most. prepare() also times the three stages
// serialized on one thread (all copies in, then all computes, then all copies out), and
// overlap_efficiency = their sum / the time of one concurrent operation: 1 where nothing
// overlaps, up to the number of cores where copies and computes run side by side and memory
// bandwidth does not cap them.
//
// The threads are this workload's own, exactly N of them, started in prepare() and joined in the
// destructor (harness/host/parallel.h's pool always uses every core). gpubench pins its calling
// thread to one CPU, and a new thread inherits that mask, so the workers take the union of the
// shared pool's CPUs: N threads spread over the cores the process was given.
//
// Verification: every destination word == transform_word(source word, rounds).
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "families/memory/host_workloads.h"
#include "families/memory/memory.h"
#include "harness/host/corruptible_output.h"
#include "harness/host/host_buffer.h"
#include "harness/host/host_timer.h"
#include "harness/host/parallel.h"
#include "harness/verify.h"

namespace gpubench::memory {

namespace {

constexpr std::uint64_t kSeed = 0x3c6ef372fe94f82bull;
constexpr int kCalibrationTries = 5;   // timings of each serialized stage, of which the median counts
constexpr int kCalibrationRounds = 8;  // rounds of the trial transform that prices one round
constexpr int kMaxRounds = 1 << 16;

// ---- the workers --------------------------------------------------------------------------

/// The CPUs of the shared pool's workers together: the process's CPUs, whatever the calling
/// thread has been pinned to since.
cpu_set_t process_cpus() {
  std::vector<cpu_set_t> masks(host_threads());
  for (cpu_set_t& m : masks) CPU_ZERO(&m);
  parallel_for(
      masks.size(),
      [&](std::size_t, std::size_t, unsigned t) { (void)sched_getaffinity(0, sizeof(cpu_set_t), &masks[t]); }, 1);
  cpu_set_t all;
  CPU_ZERO(&all);
  for (cpu_set_t& m : masks) CPU_OR(&all, &all, &m);
  return all;
}

/// Exactly `count` threads that run one task together and then wait for the next, so a timed
/// operation pays a wake-up, never a thread start.
class WorkerGroup {
 public:
  WorkerGroup(unsigned count, const cpu_set_t& cpus) {
    try {
      for (unsigned i = 0; i < count; ++i) threads_.emplace_back([this, i, cpus] { work(i, cpus); });
    } catch (const std::system_error& e) {
      stop();
      throw SkipCase(std::string("cannot start the pipeline's threads: ") + e.what());
    }
  }
  ~WorkerGroup() { stop(); }
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  /// Every worker calls task(its index); returns when all have.
  void run(const std::function<void(unsigned)>& task) {
    std::unique_lock<std::mutex> lock(mu_);
    task_ = &task;
    pending_ = static_cast<unsigned>(threads_.size());
    ++generation_;
    start_.notify_all();
    done_.wait(lock, [this] { return pending_ == 0; });
    task_ = nullptr;
  }

 private:
  void work(unsigned index, cpu_set_t cpus) {
    if (CPU_COUNT(&cpus) > 0) (void)sched_setaffinity(0, sizeof cpus, &cpus);  // best effort
    unsigned long seen = 0;
    for (;;) {
      const std::function<void(unsigned)>* task = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        start_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stopping_) return;
        task = task_;
      }
      (*task)(index);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      ++generation_;
    }
    start_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  const std::function<void(unsigned)>* task_ = nullptr;
  unsigned long generation_ = 0;
  unsigned pending_ = 0;
  bool stopping_ = false;
};

// ---- the stages ---------------------------------------------------------------------------

// The compute stage: `rounds` LCG steps on every word. Blocks of L words stay in registers
// across the rounds (L / vector width independent chains hide the multiply's latency), so a
// round costs the same whatever the chunk size. Compiled for AVX2 (vpmulld, 8 chains of 8 words)
// and for the baseline, which has no 32-bit vector multiply, picked at run time; `rounds` is
// calibrated against the copy on whichever runs, so the pipeline stays balanced on both.
template <std::size_t L>
__attribute__((always_inline)) inline void transform_blocks(std::uint32_t* words, std::size_t n, int rounds) {
  std::size_t i = 0;
  for (; i + L <= n; i += L) {
    std::uint32_t v[L];
    for (std::size_t l = 0; l < L; ++l) v[l] = words[i + l];
    for (int r = 0; r < rounds; ++r)
      for (std::size_t l = 0; l < L; ++l) v[l] = kernels::transform_step(v[l]);
    for (std::size_t l = 0; l < L; ++l) words[i + l] = v[l];
  }
  for (; i < n; ++i) words[i] = kernels::transform_word(words[i], rounds);
}

void transform_base(std::uint32_t* words, std::size_t n, int rounds) { transform_blocks<16>(words, n, rounds); }

#if defined(__x86_64__)
__attribute__((target("avx2"))) void transform_avx2(std::uint32_t* words, std::size_t n, int rounds) {
  transform_blocks<64>(words, n, rounds);
}
#endif

using Transform = void (*)(std::uint32_t* words, std::size_t n, int rounds);

Transform pick_transform() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) return transform_avx2;
#endif
  return transform_base;
}

/// The median of kCalibrationTries timings of f(): the statistic least moved by a busy machine,
/// in either direction, as the runner's samples are.
template <class F>
double median_seconds(F&& f) {
  std::vector<double> t;
  t.reserve(kCalibrationTries);
  for (int i = 0; i < kCalibrationTries; ++i) t.push_back(time_seconds(f));
  std::nth_element(t.begin(), t.begin() + kCalibrationTries / 2, t.end());
  return t[kCalibrationTries / 2];
}

class OverlapWorkload final : public Workload, public CorruptibleOutput {
 public:
  explicit OverlapWorkload(const BenchCase& c)
      : threads_(static_cast<unsigned>(c.arg("threads"))),
        chunks_(static_cast<std::size_t>(c.arg("chunks"))),
        words_(static_cast<std::size_t>(c.arg("bytes")) / 4) {}

  void prepare() override {
    if (threads_ == 0 || chunks_ == 0) throw SkipCase("the pipeline needs at least one thread and one chunk");
    src_ = std::make_unique<HostBuffer>(words_ * 4);
    dst_ = std::make_unique<HostBuffer>(words_ * 4);
    for (unsigned t = 0; t < threads_; ++t) staging_.push_back(std::make_unique<HostBuffer>(largest_chunk() * 4));
    fill_random_u32(src_->p, words_ * 4, kSeed);
    calibrate_and_time_stages();
    workers_ = std::make_unique<WorkerGroup>(threads_, process_cpus());
  }
  void poison() override { poison_fill(dst_->p, words_ * 4); }
  double run(int batch) override {
    const std::function<void(unsigned)> pipeline = [this](unsigned t) { run_chunks_of(t); };
    return time_seconds([&] {
      for (int i = 0; i < batch; ++i) workers_->run(pipeline);
    });
  }
  Verification verify() override {
    const std::uint32_t* src = src_->as<const std::uint32_t>();
    const std::uint32_t* dst = dst_->as<const std::uint32_t>();
    const std::size_t i = first_wrong_word(src, dst);
    if (i == words_) return Verification::pass();
    std::ostringstream s;
    s << "element " << i << " of " << words_ << " (" << rounds_ << " rounds): expected 0x" << std::hex
      << kernels::transform_map(rounds_)(src[i]) << ", got 0x" << dst[i];
    return Verification::fail(s.str());
  }
  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    const double serialized = copy_in_s_ + compute_s_ + copy_out_s_;
    return {{"overlap_efficiency", seconds_per_op > 0 ? serialized / seconds_per_op : 0},
            {"rounds", rounds_},
            {"copy_in_serial_us", copy_in_s_ * 1e6},
            {"compute_serial_us", compute_s_ * 1e6},
            {"copy_out_serial_us", copy_out_s_ * 1e6}};
  }
  std::size_t output_elements() const override { return words_; }
  void corrupt_output_for_test(std::size_t index) override { dst_->as<std::uint32_t>()[index] ^= 0x5a5a5a5au; }

 private:
  // Chunk c holds words [first_word(c), first_word(c + 1)): sizes differ by at most one word.
  std::size_t first_word(std::size_t c) const { return c * words_ / chunks_; }
  std::size_t chunk_words(std::size_t c) const { return first_word(c + 1) - first_word(c); }
  std::size_t largest_chunk() const { return std::max<std::size_t>(1, (words_ + chunks_ - 1) / chunks_); }
  std::uint32_t* staging(unsigned t) const { return staging_[t]->as<std::uint32_t>(); }

  void copy_in(std::size_t c, std::uint32_t* stage) const {
    std::memcpy(stage, src_->as<const std::uint32_t>() + first_word(c), chunk_words(c) * 4);
  }
  void compute(std::size_t c, std::uint32_t* stage) const { transform_(stage, chunk_words(c), rounds_); }
  void copy_out(std::size_t c, const std::uint32_t* stage) const {
    std::memcpy(dst_->as<std::uint32_t>() + first_word(c), stage, chunk_words(c) * 4);
  }

  // Worker t's share of one operation: its chunks, each through the three stages in order.
  void run_chunks_of(unsigned t) const {
    std::uint32_t* stage = staging(t);
    for (std::size_t c = t; c < chunks_; c += threads_) {
      copy_in(c, stage);
      compute(c, stage);
      copy_out(c, stage);
    }
  }

  // Each stage alone over every chunk on one thread: the time where nothing overlaps. The rounds
  // are chosen after timing the copies in, so that computing every chunk takes about as long as
  // copying every chunk in (passes over all chunks, as the pipeline streams them, rather than
  // one chunk that would sit in the cache).
  void calibrate_and_time_stages() {
    std::uint32_t* stage = staging(0);
    copy_in_s_ = median_seconds([&] {
      for (std::size_t c = 0; c < chunks_; ++c) copy_in(c, stage);
    });
    rounds_ = balanced_rounds(copy_in_s_, stage);
    compute_s_ = median_seconds([&] {
      for (std::size_t c = 0; c < chunks_; ++c) compute(c, stage);
    });
    copy_out_s_ = median_seconds([&] {
      for (std::size_t c = 0; c < chunks_; ++c) copy_out(c, stage);
    });
  }

  // A compute pass costs a fixed part (reading and writing every staging word) plus a part per
  // round; two trial passes, of kCalibrationRounds and twice that, give both, and the rounds
  // that make the pass last `copy_s` follow (at least 1: where the fixed part alone outlasts the
  // copy, compute stays the longer stage, and the serialized times show it).
  int balanced_rounds(double copy_s, std::uint32_t* stage) const {
    const auto pass = [&](int rounds) {
      return median_seconds([&] {
        for (std::size_t c = 0; c < chunks_; ++c) transform_(stage, chunk_words(c), rounds);
      });
    };
    const double trial_s = pass(kCalibrationRounds), double_trial_s = pass(2 * kCalibrationRounds);
    double per_round = (double_trial_s - trial_s) / kCalibrationRounds;
    double fixed = trial_s - kCalibrationRounds * per_round;
    if (!(per_round > 0) || fixed < 0) {  // timings too noisy to split: no fixed part
      per_round = trial_s / kCalibrationRounds;
      fixed = 0;
    }
    if (!(per_round > 0)) return 1;
    return static_cast<int>(std::clamp(std::lround((copy_s - fixed) / per_round), 1L, static_cast<long>(kMaxRounds)));
  }

  // The lowest index whose destination word is wrong (words_ when none), searched on all cores.
  std::size_t first_wrong_word(const std::uint32_t* src, const std::uint32_t* dst) const {
    std::vector<std::size_t> firsts(host_threads(), words_);
    const kernels::TransformMap rounds = kernels::transform_map(rounds_);
    parallel_for(words_, [&](std::size_t b, std::size_t e, unsigned t) {
      for (std::size_t i = b; i < e; ++i)
        if (dst[i] != rounds(src[i])) {
          firsts[t] = i;
          return;
        }
    });
    return *std::min_element(firsts.begin(), firsts.end());
  }

  unsigned threads_;
  std::size_t chunks_;
  std::size_t words_;
  Transform transform_ = pick_transform();
  int rounds_ = 1;
  double copy_in_s_ = 0, compute_s_ = 0, copy_out_s_ = 0;  ///< the serialized stage times
  std::unique_ptr<HostBuffer> src_, dst_;
  std::vector<std::unique_ptr<HostBuffer>> staging_;  ///< one chunk per worker
  std::unique_ptr<WorkerGroup> workers_;              ///< last: joined before the buffers go
};

}  // namespace

void add_host_overlap(WorkloadTable& table) {
  table.add("memory/overlap/host_threads", [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
    return std::make_unique<OverlapWorkload>(c);
  });
}

}  // namespace gpubench::memory
