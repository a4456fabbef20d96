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

// Workers wait for a generation number to change, run their chunk, and count down.
class Pool {
 public:
  Pool() {
    const unsigned n = host_threads();
    for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this, i] { worker(i); });
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
  void worker(unsigned index) {
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

void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t, unsigned)>& f,
                  std::size_t align) {
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
