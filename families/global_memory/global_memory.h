// Launchers of the device-memory kernels (families/global_memory/global_memory.cu) and of their library references
// (families/global_memory/library.cu). A plain C++ header: no CUDA syntax, no CUDA include, so harness
// code compiled by the host compiler calls these without ever seeing <<<>>>.
//
// Conventions for every launcher here:
//  - returns the cudaError_t of the launch as an int (0 = success), checked by the caller;
//  - enqueues on `stream` and does not synchronize;
//  - `sm_count` is the device's SM count, from which the grid is sized (with occupancy);
//  - buffers are device pointers from cudaMalloc (256-byte aligned).
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;  // cudaStream_t is `CUstream_st*`

namespace gpubench::kernels {

using Stream = CUstream_st*;

/// Several passes inside one launch, so that a timed launch is long enough to measure (a
/// kernel boundary costs microseconds, which would swamp a cache-resident working set) and, for
/// DRAM-sized sets, rotates among `slots` copies of its buffers `slot_stride` bytes apart
/// (together larger than the L2, so every pass misses it without a flush). Pass p works on
/// slot p mod slots. The default is one pass over one slot.
struct Passes {
  int count = 1;                ///< passes over the working set in this launch (>= 1)
  int slots = 1;                ///< buffer copies rotated through (>= 1)
  std::size_t slot_stride = 0;  ///< bytes between slots (a multiple of 256)
};
/// True when `p` can be launched (count and slots >= 1, the stride 256-byte aligned and, with
/// several slots, at least the size of one slot's data: `bytes`).
constexpr bool passes_ok(const Passes& p, std::size_t bytes) {
  return p.count >= 1 && p.slots >= 1 && p.slot_stride % 256 == 0 && (p.slots == 1 || p.slot_stride >= bytes);
}

/// dst[0..bytes) = src[0..bytes): 16-byte loads and stores for the aligned bulk, several in
/// flight per thread, byte-wise tail. Any byte count.
/// With `passes`, the copy runs passes.count times in the launch, pass p on slot p mod slots of
/// both buffers.
int launch_copy(const void* src, void* dst, std::size_t bytes, int sm_count, Stream stream, Passes passes = {});

/// Reads in[0..n) once (16-byte loads) and writes one wrapping uint32 sum per block into
/// partial[0..blocks). Returns the block count used in *blocks (<= max_blocks; partial must
/// hold max_blocks values). The sum of the partials (mod 2^32) equals the sum of in[]; with
/// `passes`, the sum over all passes (slot p mod slots in pass p).
int launch_read(const std::uint32_t* in, std::size_t n, std::uint32_t* partial, int max_blocks, int* blocks,
                int sm_count, Stream stream, Passes passes = {});

/// Blocks per SM of the per-SM cache read (launch_block_set_read): 4 x 256 threads, resident
/// together on every architecture, with 16 KiB of loads in flight per SM.
constexpr int kBlockSetReadBlocksPerSm = 4;
/// Every one of `blocks` blocks reads all of in[0..n) (16-byte loads) passes.count times and
/// writes its wrapping sum into partial[0..blocks): each equals passes.count x the sum of in[].
/// n must be a multiple of 4 words and `in` 16-byte aligned; one slot only.
int launch_block_set_read(const std::uint32_t* in, std::size_t n, std::uint32_t* partial, int blocks, Stream stream,
                          Passes passes = {});
/// Write-only fill: out[i] = seed + i (mod 2^32) for i in [0, n), 16-byte stores; with
/// `passes`, in every slot, passes.count times.
int launch_write(std::uint32_t* out, std::size_t n, std::uint32_t seed, int sm_count, Stream stream,
                 Passes passes = {});

/// Strided copy over a span of n elements: out[i] = in[i] for every i that is a multiple of
/// `stride`; other elements of out are left untouched.
int launch_strided_copy(const float* in, float* out, std::size_t n, int stride, int sm_count, Stream stream);

/// Gather: out[i] = in[idx[i]] for i in [0, n).
int launch_gather(const float* in, const std::uint32_t* idx, float* out, std::size_t n, int sm_count, Stream stream);

/// Dependent pointer chase by one thread: p = next[p], `steps` times from `start`; writes the
/// final index to *sink and the SM clock cycles the loop took to *cycles.
int launch_pointer_chase(const std::uint32_t* next, std::size_t steps, std::uint32_t start, std::uint32_t* sink,
                         long long* cycles, Stream stream);

/// Fills next[0..n) with the seeded pointer-chase ring of kernels/chase_ring.h (one cycle through
/// every entry; the ring harness/random.h's make_chase_ring builds on the host), 1 <= n < 2^32.
int launch_chase_ring_fill(std::uint32_t* next, std::size_t n, std::uint64_t seed, int sm_count, Stream stream);

/// What launch_seeded_fill writes (kernels/seeded_words.h): seeded words (with a byte tail), or
/// seeded floats in [-1, 1) (bytes a multiple of 4).
enum class SeededData { words, floats };
/// Fills dst[0..bytes) with the seeded inputs of `seed`, the data harness/verify.h's SeededWords
/// and SeededFloats checks recompute on the host. `dst` 4-byte aligned.
int launch_seeded_fill(void* dst, std::size_t bytes, std::uint64_t seed, SeededData data, int sm_count, Stream stream);

// ---- library references (families/global_memory/library.cu) ----

/// thrust::copy of n floats.
int thrust_copy(const float* in, float* out, std::size_t n, Stream stream);
/// thrust::gather: out[i] = in[idx[i]].
int thrust_gather(const float* in, const std::uint32_t* idx, float* out, std::size_t n, Stream stream);
/// cub::DeviceReduce::Sum of n uint32 (wrapping) into *out. temp/temp_bytes as CUB expects:
/// call with temp == nullptr to get the size.
int cub_reduce_sum(const std::uint32_t* in, std::size_t n, std::uint32_t* out, void* temp, std::size_t* temp_bytes,
                   Stream stream);
/// idx[0..n) = a random permutation of 0..n-1 from `seed` (thrust::shuffle, generated on the
/// device so large index arrays cost no host time).
int random_permutation(std::uint32_t* idx, std::size_t n, std::uint64_t seed, Stream stream);

}  // namespace gpubench::kernels
