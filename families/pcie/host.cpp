// The host backend's rows of the PCIe family: bandwidth/pcie_{h2d,d2h}/pageable_memcpy, a
// pageable-to-pageable copy on one thread. There is no link on the host; this is what a
// pageable cudaMemcpy does on the CPU side (the driver copies each chunk between the user's
// pageable buffer and its pinned staging buffer on one thread), so it is a real ceiling of
// pageable transfers on this machine, and it runs the whole PCIe pipeline (names, counters,
// JSON, plots) where no GPU exists. Timed on the host clock, as pageable GPU copies are.
#include <cstdlib>
#include <cstring>
#include <memory>

#include "harness/family.h"
#include "harness/host/corruptible_output.h"
#include "harness/host/host_backend.h"
#include "harness/host/host_timer.h"
#include "harness/verify.h"

GPUBENCH_FAMILY(pcie)

namespace gpubench {

namespace {

constexpr std::uint64_t kSeed = 0x5bd1e9955bd1e995ull;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using PageableBuffer = std::unique_ptr<unsigned char, FreeDeleter>;

// Pageable memory as an application has it (no huge pages, no pinning), at the start of a 4 KiB
// page: both buffers at the same page offset, so neither direction's copy pays for 4K aliasing
// (a load that seems to depend on an earlier store whose address matches in its low 12 bits).
// Plain mallocs lie back to back, a page and 16 bytes apart, and which direction paid depended on
// where malloc put them: on a 2-vCPU EPYC d2h at 4 KiB read 59-63 GB/s against h2d's 82 (now
// 81 both ways), and a full run elsewhere read h2d at 64 KiB at 2-3 GB/s against d2h's 28-46.
PageableBuffer allocate(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  PageableBuffer b(static_cast<unsigned char*>(std::aligned_alloc(kPage, (bytes + kPage - 1) / kPage * kPage)));
  if (!b) throw SkipCase("cannot allocate " + std::to_string(bytes) + " bytes of pageable host memory");
  return b;
}

/// "host" -> "device" stand-ins: h2d copies host_ into device_, d2h copies device_ into host_.
class PageableMemcpyWorkload final : public Workload, public CorruptibleOutput {
 public:
  PageableMemcpyWorkload(const BenchCase& c, bool host_to_device)
      : bytes_(static_cast<std::size_t>(c.arg("bytes"))), h2d_(host_to_device) {}
  void prepare() override {
    host_ = allocate(bytes_);
    device_ = allocate(bytes_);
    fill_random_u32(src(), bytes_, kSeed);
  }
  void poison() override { poison_fill(dst(), bytes_); }
  double run(int batch) override {
    unsigned char* s = src();
    unsigned char* d = dst();
    return time_seconds([&] {
      for (int i = 0; i < batch; ++i) std::memcpy(d, s, bytes_);
    });
  }
  Verification verify() override { return check_copy(src(), dst(), bytes_); }
  std::map<std::string, double> extra_counters(double) override {
    // The timing method, as the CUDA rows record it: host clock, nothing held behind a spin.
    return {{"host_clock_timed", 1.0}, {"spin_held", 0.0}};
  }
  std::size_t output_elements() const override { return bytes_; }
  void corrupt_output_for_test(std::size_t index) override { dst()[index] ^= 0x5a; }

 private:
  unsigned char* src() const { return h2d_ ? host_.get() : device_.get(); }
  unsigned char* dst() const { return h2d_ ? device_.get() : host_.get(); }
  std::size_t bytes_;
  bool h2d_;
  PageableBuffer host_, device_;
};

}  // namespace

void families::pcie::add_host_workloads(WorkloadTable& table) {
  table.add("bandwidth/pcie_h2d/pageable_memcpy", [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
    return std::make_unique<PageableMemcpyWorkload>(c, true);
  });
  table.add("bandwidth/pcie_d2h/pageable_memcpy", [](const BenchCase& c, Backend&) -> std::unique_ptr<Workload> {
    return std::make_unique<PageableMemcpyWorkload>(c, false);
  });
  for (const char* key :
       {"bandwidth/pcie_h2d/pinned_ce", "bandwidth/pcie_h2d/pageable_ce", "bandwidth/pcie_h2d/wc_pinned_ce",
        "bandwidth/pcie_h2d/pinned_sm", "bandwidth/pcie_d2h/pinned_ce", "bandwidth/pcie_d2h/pageable_ce",
        "bandwidth/pcie_d2h/pinned_sm", "bandwidth/pcie_bidir_h2d/pinned_ce", "bandwidth/pcie_bidir_d2h/pinned_ce"})
    table.not_here(key, "a transfer to or from a GPU");
}

}  // namespace gpubench
