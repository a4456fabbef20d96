// A persistent pool of host threads for the host backend: one worker per logical CPU, so every
// host benchmark runs on all cores without paying thread start-up inside a timed region.
#pragma once

#include <cstddef>
#include <functional>

namespace gpubench {

/// Number of worker threads (logical CPUs available to this process).
unsigned host_threads();

/// Pins the pool's workers one per CPU and the calling thread to the first CPU, for the rest
/// of the process. The host backend asks for it (its results depend on it); the CUDA backend
/// does not, so the CUDA driver's threads are never pinned. No effect once the pool exists.
void pin_host_threads();

/// Splits [0, n) into host_threads() contiguous chunks and calls f(begin, end, thread_index)
/// on each, concurrently; returns when all are done. Chunk boundaries are multiples of
/// `align` elements (except the last), so vectorised bodies keep aligned chunks.
void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t, unsigned)>& f,
                  std::size_t align = 64);

}  // namespace gpubench
