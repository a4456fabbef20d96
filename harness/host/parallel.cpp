#include "harness/host/parallel.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace gpubench {

unsigned host_threads() {
  static const unsigned n = [] {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
      const int count = CPU_COUNT(&set);
      if (count > 0) return static_cast<unsigned>(count);
    }
    return std::max(1u, std::thread::hardware_concurrency());
  }();
  return n;
}

namespace {

bool pinning_requested = false;

// Workers wait for a generation number to change, run their chunk, and count down.
class Pool {
 public:
  Pool() {
    // One worker per CPU of the process's affinity mask. With pinning (the host backend asks
    // for it) each is pinned to its own CPU, the calling thread (worker 0) to the first, so the
    // OS never stacks two on one core mid-run: unpinned, the host copy lost 10-15 % against
    // likwid-bench (which pins) on a 2-vCPU VM.
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &allowed)) cpus_.push_back(cpu);
    }
    const unsigned n = host_threads();
    for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this, i] { worker(i); });
    if (pinned_) pin(0);
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      ++generation_;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  void run(const std::function<void(unsigned)>& task) {
    std::unique_lock<std::mutex> lock(mu_);
    task_ = &task;
    pending_ = static_cast<unsigned>(workers_.size());
    ++generation_;
    cv_.notify_all();
    lock.unlock();
    task(0);  // the calling thread is worker 0
    lock.lock();
    done_cv_.wait(lock, [this] { return pending_ == 0; });
    task_ = nullptr;
  }

 private:
  // Pins the calling thread to the index-th CPU of the mask (when pinning was asked for);
  // false when it did not.
  bool pin(unsigned index) {
    if (!pinned_ || index >= cpus_.size() || cpus_.size() != host_threads()) return false;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus_[index], &one);
    return sched_setaffinity(0, sizeof(one), &one) == 0;  // best effort: unpinned still works
  }

  void worker(unsigned index) {
    pin(index);
    unsigned long seen = 0;
    for (;;) {
      const std::function<void(unsigned)>* task = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
        task = task_;
      }
      (*task)(index);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  const bool pinned_ = pinning_requested;
  std::vector<int> cpus_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(unsigned)>* task_ = nullptr;
  unsigned long generation_ = 0;
  unsigned pending_ = 0;
  bool stop_ = false;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

void pin_host_threads() {
  pinning_requested = true;
  (void)pool();  // created now, so the pinning applies
}

void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t, unsigned)>& f, std::size_t align) {
  const unsigned threads = host_threads();
  if (align == 0) align = 1;
  const std::size_t per = ((n + threads - 1) / threads + align - 1) / align * align;
  pool().run([&](unsigned t) {
    const std::size_t begin = std::min(n, per * t);
    const std::size_t end = std::min(n, begin + per);
    if (begin < end) f(begin, end, t);
  });
}

}  // namespace gpubench
