// How the host backend times a batch: the steady clock around the whole batch, as the
// runner expects run(batch) to report it.
#pragma once

#include <chrono>

namespace gpubench {

/// Seconds that f() took on the steady clock.
template <class F>
double time_seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace gpubench
