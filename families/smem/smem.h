// Launchers of the shared-memory bandwidth kernel (body and bytes model in
// families/smem/smem.cuh), and the host-side description of its access pattern that the kernel,
// the reference (families/smem/reference.h) and the tests share. A plain C++ header: no CUDA
// syntax, no CUDA include, so harness code compiled by the host compiler calls these without
// ever seeing <<<>>>. The pattern functions are constexpr so that device code calls them too
// (nvcc --expt-relaxed-constexpr).
//
// Conventions for every launcher here (as in the device-memory launchers):
//  - returns the cudaError_t of the launch as an int (0 = success), checked by the caller;
//  - enqueues on `stream` and does not synchronize;
//  - buffers are device pointers from cudaMalloc (256-byte aligned).
//
// Access pattern. The block's shared array is `rows` rows of kSmemBlockThreads 16-byte vectors
// (one row = 4 KiB). In pass p, thread t reads column (t + kSmemPassRotation x p) mod 256 of
// every row: each pass reads every vector of the array exactly once, a warp reads 32
// consecutive vectors of one row (each quarter-warp one 128-byte line: all 32 banks, no
// conflict), and the vectors a thread reads change from one pass to the next, so the compiler
// cannot hoist the loads out of the pass loop.
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;  // cudaStream_t is `CUstream_st*`

namespace gpubench::kernels {

using Stream = CUstream_st*;

/// Threads per block of the shared-memory kernel (every launch uses exactly this).
constexpr int kSmemBlockThreads = 256;
/// 16-byte shared loads in flight per thread and iteration of the read loop.
constexpr int kSmemUnroll = 4;
/// Bytes of one shared load (ld.shared.v4.u32).
constexpr std::size_t kSmemVectorBytes = 16;
/// Bytes of one row: one 16-byte vector per thread. bytes_per_block must be a multiple of it.
constexpr std::size_t kSmemRowBytes = kSmemVectorBytes * kSmemBlockThreads;
/// Columns (16-byte vectors) the read pattern rotates by from one pass to the next: one warp,
/// so a warp's 32 vectors stay 32-aligned (conflict-free) in every pass.
constexpr unsigned kSmemPassRotation = 32;
/// Distinct patterns before they repeat (pass p reads like pass p + kSmemRotations).
constexpr int kSmemRotations = kSmemBlockThreads / static_cast<int>(kSmemPassRotation);
/// Dynamic shared memory per block a kernel gets without opting in; above it the launcher sets
/// cudaFuncAttributeMaxDynamicSharedMemorySize.
constexpr std::size_t kSmemDefaultLimitBytes = std::size_t{48} * 1024;

/// True when (bytes_per_block, passes) can be launched: bytes_per_block > 0 and a multiple of
/// kSmemRowBytes (4096), passes >= 1. (The device's opt-in limit is checked by the launch.)
constexpr bool smem_args_ok(std::size_t bytes_per_block, int passes) {
  return bytes_per_block > 0 && bytes_per_block % kSmemRowBytes == 0 && passes >= 1 &&
         bytes_per_block / kSmemRowBytes <= 0xFFFFu;
}

/// Rows (of kSmemBlockThreads vectors) in a block's array of `bytes_per_block` bytes.
constexpr unsigned smem_rows(std::size_t bytes_per_block) {
  return static_cast<unsigned>(bytes_per_block / kSmemRowBytes);
}

/// Largest valid bytes_per_block within a device's opt-in shared memory per block
/// (cudaDevAttrMaxSharedMemoryPerBlockOptin): 227 KiB (H100) -> 224 KiB, 163 KiB (A100) ->
/// 160 KiB, 99 KiB (sm_120) -> 96 KiB.
constexpr std::size_t smem_max_bytes_per_block(std::size_t optin_bytes) {
  return optin_bytes / kSmemRowBytes * kSmemRowBytes;
}

/// Column (16-byte vector within a row) that thread `thread` reads in pass `pass`.
constexpr unsigned smem_column(unsigned thread, int pass) {
  return (thread + kSmemPassRotation * static_cast<unsigned>(pass)) % static_cast<unsigned>(kSmemBlockThreads);
}

/// Index of the 16-byte vector of the block's shared array that thread `thread` reads in pass
/// `pass` from row `row`. The kernel's only shared-memory read address.
constexpr unsigned smem_element(unsigned thread, int pass, unsigned row) {
  return smem_column(thread, pass) + row * static_cast<unsigned>(kSmemBlockThreads);
}

/// What a thread adds for one 16-byte vector: the wrapping sum of its four words (exact, and
/// independent of the order the loads complete in).
constexpr std::uint32_t smem_fold(std::uint32_t x, std::uint32_t y, std::uint32_t z, std::uint32_t w) {
  return x + y + z + w;
}

/// Bytes read from shared memory by one launch (the bytes model): blocks x passes x
/// bytes_per_block. The fill (bytes_per_block per block from global memory) and the 4-byte
/// result per thread are not counted.
constexpr double smem_bytes_read(int blocks, std::size_t bytes_per_block, int passes) {
  return static_cast<double>(blocks) * static_cast<double>(passes) * static_cast<double>(bytes_per_block);
}

/// Shared-memory read kernel: block b copies in[b x W .. (b+1) x W) (W = bytes_per_block / 4
/// words) into its shared array, then makes `passes` passes over it with 16-byte loads (see the
/// access pattern above) and writes one wrapping uint32 per thread: out[b x 256 + t] = the sum
/// of smem_fold over every vector thread t read (reference: smem_reference in
/// families/smem/reference.h).
///  - in: blocks x bytes_per_block bytes, 16-byte aligned; out: blocks x kSmemBlockThreads words;
///  - blocks >= 1 (the caller sizes it: SM count x smem_blocks_per_sm);
///  - bytes_per_block > 0, a multiple of kSmemRowBytes, at most the device's opt-in limit
///    (smem_device_max_bytes_per_block); above 48 KiB the launcher opts the kernel in (once per
///    device and size, cached: after cudaDeviceReset the cache is stale);
///  - passes >= 1.
/// Invalid arguments return cudaErrorInvalidValue without launching.
int launch_smem_read(const std::uint32_t* in, std::uint32_t* out, int blocks, std::size_t bytes_per_block, int passes,
                     Stream stream);

/// Resident blocks per SM of launch_smem_read's kernel at kSmemBlockThreads threads and
/// bytes_per_block of dynamic shared memory (cudaOccupancyMaxActiveBlocksPerMultiprocessor on
/// the current device; opts the kernel in above 48 KiB first). Invalid bytes_per_block, or more
/// than the device's opt-in limit, returns an error (cudaErrorInvalidValue) and *blocks_per_sm = 0.
int smem_blocks_per_sm(std::size_t bytes_per_block, int* blocks_per_sm);

/// Largest valid bytes_per_block on the current device (smem_max_bytes_per_block of its opt-in
/// limit).
int smem_device_max_bytes_per_block(std::size_t* bytes);

}  // namespace gpubench::kernels
