// The host backend's allocation rows (families/memory/cases.cpp):
//
//   memory/alloc/{malloc,mmap,pool}/bytes:S   one operation = allocate S bytes and free them:
//     malloc + free; mmap + munmap of private anonymous memory; pop + push on a free list of
//     blocks allocated in prepare() (the reuse baseline, what a caching allocator costs). Each
//     pair is timed on its own (steady clock), so p50_us and p99_us describe the pairs of the
//     last sample; the blocks are never touched inside a pair: an untouched allocation is what
//     the API costs, page faults are first_touch's measurement (host_pages.cpp). The pool's
//     pair takes a few nanoseconds, below what two steady_clock reads cost (tens of ns), so its
//     latency is that floor: the row says "reuse costs nothing measurable", not a number.
//   memory/alloc_loop/{malloc_each,allocated_once}/bytes:S   one operation = malloc a
//     destination + memcpy a seeded source of S bytes into it + free it, against the same memcpy
//     into a destination allocated once (us_per_iteration; GB/s of the copy).
//
// glibc's malloc serves sizes from 128 KiB by mmap only until it frees a block it mmap'd; then it
// raises its mmap threshold to that block's size (32 MiB at most) and serves such sizes from the
// heap, whose pages it keeps. So below 32 MiB, malloc rows are heap allocations from the second
// pair on and malloc_each faults few or no pages in, while from 32 MiB every malloc is a fresh mmap and
// malloc_each faults its whole destination in every iteration: what a program gets either way.
// page_faults_per_iteration (the calling thread's minor faults over the run) says which.
//
// Verification. alloc: every block handed out during the last run was non-null, aligned as its
// allocator promises, one of the pool's own blocks (pool), and did not overlap the block the
// workload holds live the whole time (allocated in prepare() the same way); then verify()
// allocates one more block the same way, writes a seeded pattern over it and reads it back.
// alloc_loop: the last timed iteration's destination is kept alive until the next iteration
// frees it (the allocator sees the same malloc, free, malloc, free sequence as a loop that frees
// at its end), so verify() checks real output of the timed runs byte for byte, and poison()
// overwrites it.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "families/memory/host_workloads.h"
#include "families/memory/op_times.h"
#include "harness/host/corruptible_output.h"
#include "harness/host/host_buffer.h"
#include "harness/host/host_timer.h"
#include "harness/host/parallel.h"
#include "harness/verify.h"

namespace gpubench::memory {

namespace {

constexpr std::uint64_t kSeed = 0x6a09e667f3bcc908ull;

using Clock = std::chrono::steady_clock;

std::string hex(std::uintptr_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// Minor page faults of the calling thread so far (the operations run on it).
long thread_minor_faults() {
  rusage usage{};
  return getrusage(RUSAGE_THREAD, &usage) == 0 ? usage.ru_minflt : 0;
}

// ---- allocators --------------------------------------------------------------------------

/// One way to get and give back `bytes` of host memory; allocate() throws SkipCase on failure.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate() = 0;
  virtual void release(void* block) = 0;
  /// The alignment every block is promised to have.
  virtual std::size_t alignment() const = 0;
  /// Why `block` is not one this allocator may hand out, "" when it may (beyond alignment).
  virtual std::string foreign(std::uintptr_t /*block*/) const { return {}; }
};

class MallocAllocator final : public Allocator {
 public:
  explicit MallocAllocator(std::size_t bytes) : bytes_(bytes) {}
  void* allocate() override {
    void* p = std::malloc(bytes_);
    if (p == nullptr) throw SkipCase("malloc of " + std::to_string(bytes_) + " bytes failed");
    return p;
  }
  void release(void* block) override { std::free(block); }
  std::size_t alignment() const override { return alignof(std::max_align_t); }

 private:
  std::size_t bytes_;
};

class MmapAllocator final : public Allocator {
 public:
  explicit MmapAllocator(std::size_t bytes) : bytes_(bytes) {}
  void* allocate() override {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw SkipCase("mmap of " + std::to_string(bytes_) + " bytes failed: " + std::strerror(errno));
    return p;
  }
  void release(void* block) override { (void)munmap(block, bytes_); }
  std::size_t alignment() const override { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

 private:
  std::size_t bytes_;
};

/// A LIFO free list of blocks malloc'd up front: an allocation pops one, a free pushes it back.
class PoolAllocator final : public Allocator {
 public:
  PoolAllocator(std::size_t bytes, int blocks) {
    MallocAllocator source(bytes);
    owned_.reserve(static_cast<std::size_t>(blocks));
    free_list_.reserve(static_cast<std::size_t>(blocks));  // push never reallocates in a timed pair
    for (int i = 0; i < blocks; ++i) {
      owned_.emplace_back(source.allocate());
      free_list_.push_back(owned_.back().get());
    }
  }
  void* allocate() override {
    if (free_list_.empty()) throw SkipCase("the pool is empty");
    void* p = free_list_.back();
    free_list_.pop_back();
    return p;
  }
  void release(void* block) override { free_list_.push_back(block); }
  std::size_t alignment() const override { return alignof(std::max_align_t); }
  std::string foreign(std::uintptr_t block) const override {
    for (const auto& b : owned_)
      if (reinterpret_cast<std::uintptr_t>(b.get()) == block) return {};
    return "is not one of the pool's blocks";
  }

 private:
  struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<void, FreeDeleter>> owned_;
  std::vector<void*> free_list_;
};

/// Two blocks: the one the workload keeps live, and the one every pair pops and pushes back.
constexpr int kPoolBlocks = 2;

std::unique_ptr<Allocator> make_allocator(const std::string& variant, std::size_t bytes) {
  if (variant == "malloc") return std::make_unique<MallocAllocator>(bytes);
  if (variant == "mmap") return std::make_unique<MmapAllocator>(bytes);
  return std::make_unique<PoolAllocator>(bytes, kPoolBlocks);
}

// ---- memory/alloc -------------------------------------------------------------------------

class AllocWorkload final : public Workload, public CorruptibleOutput {
 public:
  explicit AllocWorkload(const BenchCase& c) : variant_(c.variant), bytes_(static_cast<std::size_t>(c.arg("bytes"))) {}
  ~AllocWorkload() override {
    if (allocator_ && resident_ != nullptr) allocator_->release(resident_);
  }
  void prepare() override {
    allocator_ = make_allocator(variant_, bytes_);
    resident_ = allocator_->allocate();
  }
  void poison() override { handouts_.clear(); }
  double run(int batch) override {
    handouts_.assign(static_cast<std::size_t>(batch), Handout{});
    double total = 0;
    for (Handout& h : handouts_) {
      const auto t0 = Clock::now();
      void* block = allocator_->allocate();
      asm volatile("" : : "r"(block) : "memory");  // the pair is not folded away
      allocator_->release(block);
      const auto t1 = Clock::now();
      h.block = reinterpret_cast<std::uintptr_t>(block);
      h.seconds = std::chrono::duration<double>(t1 - t0).count();
      total += h.seconds;
    }
    return total;
  }
  Verification verify() override {
    if (handouts_.empty()) return Verification::fail("op 0: no allocation ran since the outputs were poisoned");
    for (std::size_t i = 0; i < handouts_.size(); ++i) {
      const std::string why = bad_handout(handouts_[i].block);
      if (!why.empty())
        return Verification::fail("op " + std::to_string(i) + " of " + std::to_string(handouts_.size()) + ": block " +
                                  hex(handouts_[i].block) + " " + why);
    }
    return write_and_read_one_block();
  }
  std::map<std::string, double> extra_counters(double /*seconds_per_op*/) override {
    std::vector<double> seconds;
    seconds.reserve(handouts_.size());
    for (const Handout& h : handouts_) seconds.push_back(h.seconds);
    return percentile_counters(seconds);
  }
  std::size_t output_elements() const override { return handouts_.size(); }
  // A block one byte off: no allocator here may hand that out.
  void corrupt_output_for_test(std::size_t index) override { handouts_.at(index).block += 1; }

 private:
  /// One allocate + free pair: the block it got and how long the pair took.
  struct Handout {
    std::uintptr_t block = 0;
    double seconds = 0;
  };

  std::string bad_handout(std::uintptr_t block) const {
    if (block == 0) return "is null";
    if (block % allocator_->alignment() != 0)
      return "is not aligned to " + std::to_string(allocator_->alignment()) + " bytes";
    std::string foreign = allocator_->foreign(block);
    if (!foreign.empty()) return foreign;
    const auto live = reinterpret_cast<std::uintptr_t>(resident_);
    if (block < live + bytes_ && live < block + bytes_) return "overlaps the live block " + hex(live);
    return {};
  }

  // The allocator's memory really holds data: a seeded pattern written over a fresh block and
  // read back.
  Verification write_and_read_one_block() {
    void* block = allocator_->allocate();
    auto* words = static_cast<std::uint32_t*>(block);
    const std::size_t n = bytes_ / 4;
    const auto seed = static_cast<std::uint32_t>(kSeed);
    parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t i = b; i < e; ++i) words[i] = static_cast<std::uint32_t>(seed + i);
    });
    Verification v = check_write_pattern(words, n, seed);
    allocator_->release(block);
    if (!v.ok) v.message = "a block written after the run: " + v.message;
    return v;
  }

  std::string variant_;
  std::size_t bytes_;
  std::unique_ptr<Allocator> allocator_;
  void* resident_ = nullptr;  ///< held from prepare() on: no block handed out may overlap it
  std::vector<Handout> handouts_;
};

// ---- memory/alloc_loop --------------------------------------------------------------------

class AllocLoopWorkload final : public Workload, public CorruptibleOutput {
 public:
  explicit AllocLoopWorkload(const BenchCase& c)
      : malloc_each_(c.variant == "malloc_each"), bytes_(static_cast<std::size_t>(c.arg("bytes"))) {}
  ~AllocLoopWorkload() override { std::free(dst_); }
  void prepare() override {
    src_ = std::make_unique<HostBuffer>(bytes_);
    fill_random_u32(src_->p, bytes_, kSeed);
    if (!malloc_each_) {
      dst_ = allocate_destination();
      poison_fill(dst_, bytes_);  // touched now: the loop never pays its page faults
    }
  }
  void poison() override {
    if (dst_ != nullptr) poison_fill(dst_, bytes_);
  }
  double run(int batch) override {
    const long faults_before = thread_minor_faults();
    const double seconds = time_seconds([&] {
      for (int i = 0; i < batch; ++i) iterate();
    });
    faults_per_iteration_ = static_cast<double>(thread_minor_faults() - faults_before) / batch;
    return seconds;
  }
  Verification verify() override {
    if (dst_ == nullptr) return Verification::fail("byte 0: no iteration has run: there is no destination");
    return check_copy(src_->p, dst_, bytes_);
  }
  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    return {{"us_per_iteration", seconds_per_op * 1e6}, {"page_faults_per_iteration", faults_per_iteration_}};
  }
  std::size_t output_elements() const override { return bytes_; }
  void corrupt_output_for_test(std::size_t index) override { static_cast<unsigned char*>(dst_)[index] ^= 0x5a; }

 private:
  void* allocate_destination() const {
    void* p = std::malloc(bytes_);
    if (p == nullptr) throw SkipCase("malloc of " + std::to_string(bytes_) + " bytes failed");
    return p;
  }
  // One iteration. malloc_each frees the previous iteration's destination first, so the last
  // one outlives the run for verify() while the allocator sees malloc and free alternate.
  void iterate() {
    if (malloc_each_) {
      std::free(dst_);
      dst_ = nullptr;
      dst_ = allocate_destination();
    }
    std::memcpy(dst_, src_->p, bytes_);
    asm volatile("" : : "r"(dst_) : "memory");  // the copy lands before the next free
  }

  bool malloc_each_;
  std::size_t bytes_;
  std::unique_ptr<HostBuffer> src_;
  void* dst_ = nullptr;  ///< allocated_once: from prepare(); malloc_each: the last iteration's
  double faults_per_iteration_ = 0;
};

template <class W>
std::unique_ptr<Workload> make(const BenchCase& c, Backend& /*backend*/) {
  return std::make_unique<W>(c);
}

}  // namespace

void add_host_alloc(WorkloadTable& table) {
  for (const char* key : {"memory/alloc/malloc", "memory/alloc/mmap", "memory/alloc/pool"})
    table.add(key, make<AllocWorkload>);
  for (const char* key : {"memory/alloc_loop/malloc_each", "memory/alloc_loop/allocated_once"})
    table.add(key, make<AllocLoopWorkload>);
}

}  // namespace gpubench::memory
