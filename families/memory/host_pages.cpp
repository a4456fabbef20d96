// The host backend's page-fault rows (families/memory/cases.cpp), the analogue of unified
// memory's demand migration:
//
//   memory/first_touch/{pages_4k,pages_2m,populate}/bytes:S   one operation = mmap S bytes of
//     private anonymous memory, write one word per 4 KiB, munmap. The writes are the same in
//     every variant; what differs is how the kernel provides the pages:
//       pages_4k  madvise(MADV_NOHUGEPAGE): one fault per 4 KiB page (zeroing 4 KiB each);
//       pages_2m  a 2 MiB-aligned range with madvise(MADV_HUGEPAGE): one fault per 2 MiB page
//                 where transparent huge pages are granted (skipped when THP is [never]; the
//                 kernel may still fall back to 4 KiB pages, which page_faults_per_op shows);
//       populate  mmap(MAP_POPULATE): the kernel faults every page in inside mmap, the analogue
//                 of cudaMemPrefetchAsync; the writes then find their pages present (4 KiB pages
//                 unless THP is [always], which may populate huge ones: page_faults_per_op says).
//     GB/s is S / time per operation (the work model); us_per_page divides that time by the
//     pages of the variant's kind (2 MiB for pages_2m, 4 KiB otherwise) and `pages` gives their
//     count. The timed region is mmap + madvise + writes + munmap.
//
// Verification: right before the munmap of a run's last operation the written words are read
// back into a record (one word per 4 KiB, outside the timed region). Each operation writes
// values derived from its own sequence number, so the record fails on a page that was never
// written (a fresh page reads zero), on a word from another operation, and on the poison.
#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "families/memory/host_workloads.h"
#include "harness/host/corruptible_output.h"
#include "harness/random.h"
#include "harness/verify.h"

namespace gpubench::memory {

// This and make_first_touch_workload are declared by families/memory/tests/test_host.cpp,
// which tests both THP answers.

/// The mode a transparent_hugepage/enabled file selects: the bracketed word of
/// "always [madvise] never", "" when the file cannot be read or has no bracketed word.
std::string transparent_hugepage_mode(const std::string& enabled_path) {
  std::ifstream in(enabled_path);
  std::string line;
  if (!std::getline(in, line)) return {};
  const std::size_t open = line.find('['), close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return {};
  return line.substr(open + 1, close - open - 1);
}

namespace {

constexpr std::uint64_t kSeed = 0xbb67ae8584caa73bull;
constexpr std::size_t kSmallPage = 4096, kHugePage = 2u << 20;
constexpr const char* kThpEnabledPath = "/sys/kernel/mm/transparent_hugepage/enabled";

using Clock = std::chrono::steady_clock;

enum class PageKind { pages_4k, pages_2m, populate };

PageKind page_kind(const std::string& variant) {
  if (variant == "pages_2m") return PageKind::pages_2m;
  if (variant == "populate") return PageKind::populate;
  return PageKind::pages_4k;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Minor page faults of the calling thread so far (the operations run on it).
long thread_minor_faults() {
  rusage usage{};
  return getrusage(RUSAGE_THREAD, &usage) == 0 ? usage.ru_minflt : 0;
}

// What operation `op` writes at 4 KiB page `page`: never zero, which a fresh page reads.
std::uint32_t page_word(std::uint64_t op, std::size_t page) {
  return static_cast<std::uint32_t>(splitmix64(kSeed ^ (op << 32) ^ page)) | 1u;
}

/// One mapping of an operation: what munmap needs, and where the touched range starts.
struct Mapping {
  void* base = nullptr;
  std::size_t length = 0;
  char* start = nullptr;
};

class FirstTouchWorkload final : public Workload, public CorruptibleOutput {
 public:
  FirstTouchWorkload(const BenchCase& c, std::string thp_enabled_path)
      : kind_(page_kind(c.variant)),
        bytes_(static_cast<std::size_t>(c.arg("bytes"))),
        touched_pages_(round_up(bytes_, kSmallPage) / kSmallPage),
        thp_enabled_path_(std::move(thp_enabled_path)) {}

  void prepare() override {
    if (kind_ == PageKind::pages_2m) require_transparent_huge_pages();
    // A mapping that cannot be had skips here, before the record (1/1024 of its size) is
    // allocated; the probe writes nothing (populate's faults its pages in, once).
    const Mapping probe = map();
    (void)munmap(probe.base, probe.length);
    try {
      record_.assign(touched_pages_, kPoisonU32);
    } catch (const std::bad_alloc&) {
      throw SkipCase("cannot allocate the read-back record of " + std::to_string(touched_pages_) + " pages");
    }
  }
  void poison() override { record_.assign(record_.size(), kPoisonU32); }
  double run(int batch) override {
    const long faults_before = thread_minor_faults();
    double seconds = 0;
    for (int i = 0; i < batch; ++i) seconds += one_operation(i == batch - 1);
    faults_per_op_ = static_cast<double>(thread_minor_faults() - faults_before) / batch;
    return seconds;
  }
  Verification verify() override {
    for (std::size_t p = 0; p < record_.size(); ++p) {
      const std::uint32_t want = page_word(record_op_, p);
      if (record_[p] != want) {
        std::ostringstream s;
        s << "page " << p << " of " << record_.size() << " (operation " << record_op_ << "): expected 0x" << std::hex
          << want << ", got 0x" << record_[p];
        return Verification::fail(s.str());
      }
    }
    return Verification::pass();
  }
  std::map<std::string, double> extra_counters(double seconds_per_op) override {
    const double pages = static_cast<double>(pages_of_kind());
    return {{"us_per_page", seconds_per_op * 1e6 / pages}, {"pages", pages}, {"page_faults_per_op", faults_per_op_}};
  }
  std::size_t output_elements() const override { return record_.size(); }
  void corrupt_output_for_test(std::size_t index) override { record_.at(index) ^= 0x5a5a5a5au; }

 private:
  void require_transparent_huge_pages() const {
    const std::string mode = transparent_hugepage_mode(thp_enabled_path_);
    if (mode.empty()) throw SkipCase("no transparent huge pages here: " + thp_enabled_path_ + " cannot be read");
    if (mode == "never") throw SkipCase("transparent huge pages are off: " + thp_enabled_path_ + " is [never]");
  }

  std::size_t pages_of_kind() const {
    return kind_ == PageKind::pages_2m ? round_up(bytes_, kHugePage) / kHugePage : touched_pages_;
  }

  // mmap, then the variant's advice. A huge page can only back a whole aligned 2 MiB range, so
  // pages_2m maps 2 MiB more than whole huge pages and uses the aligned part: the slack is never
  // touched and costs nothing.
  Mapping map() const {
    Mapping m;
    const std::size_t usable = kind_ == PageKind::pages_2m ? round_up(bytes_, kHugePage) : bytes_;
    m.length = kind_ == PageKind::pages_2m ? usable + kHugePage : usable;
    const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (kind_ == PageKind::populate ? MAP_POPULATE : 0);
    m.base = mmap(nullptr, m.length, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (m.base == MAP_FAILED)
      throw SkipCase("mmap of " + std::to_string(m.length) + " bytes failed: " + std::strerror(errno));
    m.start = static_cast<char*>(m.base);
    if (kind_ == PageKind::pages_2m) {
      const auto address = reinterpret_cast<std::uintptr_t>(m.base);
      m.start += round_up(address, kHugePage) - address;
      (void)madvise(m.start, usable, MADV_HUGEPAGE);  // advice: the kernel may still say no
    } else if (kind_ == PageKind::pages_4k) {
      (void)madvise(m.start, usable, MADV_NOHUGEPAGE);  // under THP [always] too
    }
    return m;
  }

  void touch(char* start, std::uint64_t op) const {
    for (std::size_t p = 0; p < touched_pages_; ++p)
      *reinterpret_cast<std::uint32_t*>(start + p * kSmallPage) = page_word(op, p);
    asm volatile("" : : "r"(start) : "memory");  // the writes happen before munmap
  }

  void read_back(const char* start) {
    for (std::size_t p = 0; p < touched_pages_; ++p)
      record_[p] = *reinterpret_cast<const std::uint32_t*>(start + p * kSmallPage);
  }

  // One timed mmap + touch + munmap; the read-back of the run's last operation is not timed.
  double one_operation(bool last) {
    const std::uint64_t op = next_op_++;
    const auto t0 = Clock::now();
    const Mapping m = map();
    touch(m.start, op);
    const auto t1 = Clock::now();
    if (last) {
      read_back(m.start);
      record_op_ = op;
    }
    const auto t2 = Clock::now();
    (void)munmap(m.base, m.length);
    const auto t3 = Clock::now();
    return seconds_between(t0, t1) + seconds_between(t2, t3);
  }

  PageKind kind_;
  std::size_t bytes_;
  std::size_t touched_pages_;  ///< 4 KiB pages of `bytes_`: one word written in each
  std::string thp_enabled_path_;
  std::vector<std::uint32_t> record_;  ///< the words of the last operation, read before its munmap
  std::uint64_t record_op_ = 0;        ///< that operation's sequence number
  std::uint64_t next_op_ = 1;
  double faults_per_op_ = 0;
};

}  // namespace

/// The first-touch workload of row `c`, reading the THP mode from `thp_enabled_path` (the table
/// uses the kernel's; a test points it at a file of its own).
std::unique_ptr<Workload> make_first_touch_workload(const BenchCase& c, const std::string& thp_enabled_path) {
  return std::make_unique<FirstTouchWorkload>(c, thp_enabled_path);
}

void add_host_pages(WorkloadTable& table) {
  for (const char* key : {"memory/first_touch/pages_4k", "memory/first_touch/pages_2m", "memory/first_touch/populate"})
    table.add(key, [](const BenchCase& c, Backend&) { return make_first_touch_workload(c, kThpEnabledPath); });
}

}  // namespace gpubench::memory
