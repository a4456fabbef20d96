// The Hopper probe's shapes and the plain structs its kernels take (families/gemm/hopper_probe.h
// declares the launchers and judges): a header of constants alone, which the probe's kernels
// (hopper_probe.cuh) include, so that no kernel header includes the host's standard library and
// CUDA 12's runtime compiler builds them (scripts/cuda12_device_check.py).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpubench::kernels::probe {

constexpr int kTile = 64;  ///< a box is 64 x 64 16-bit elements: rows of one 128-byte swizzle span
constexpr int kBoxElements = kTile * kTile;
constexpr int kMmaN = 256;            ///< the wgmma probe computes D (64 x 256) = A (64 x 64) * B (64 x 256)
constexpr int kThreads = 128;         ///< one warpgroup
constexpr int kFragment = kMmaN / 2;  ///< accumulator floats per thread
constexpr int kFragmentFloats = kThreads * kFragment;
/// Dynamic shared memory of every probe kernel: A and B's four boxes (5 x 8 KiB), two mbarriers
/// and a flag, and slack to align the boxes to the 1024-byte swizzle atom.
constexpr std::size_t kSmemBytes = std::size_t{5} * kBoxElements * 2 + 3 * sizeof(std::uint64_t) + 1024;

/// Wgmma descriptor fields in bytes: leading and stride byte offsets of A (K-major) and B
/// (MN-major), and how far each k16 step moves the start address.
struct Descriptors {
  std::uint32_t a_lbo, a_sbo, a_k_step, b_lbo, b_sbo, b_k_step;
};

/// The GEMM epilogue's FP32 box (hgemm_sm90.cuh kEpilogueRows x kEpilogueCols): 16 rows of 32
/// floats, one 128-byte swizzle span per row.
constexpr int kStoreBoxRows = 16;
constexpr int kStoreBoxCols = 32;
constexpr int kStoreBoxFloats = kStoreBoxRows * kStoreBoxCols;

/// One store of the store probe: a rows x cols FP32 tensor, rows `stride` floats apart (a multiple
/// of 4) in an allocation of kStoreProbeRows rows, and the box's origin (x: column, y: row).
struct StoreCase {
  int rows, cols, stride, x, y;
};
constexpr int kStoreProbeRows = 32;
/// The cases gpubench_kernel_check stores: the whole box at the origin, the box clipped by a
/// smaller tensor, and a box at (32, 16) clipped on both sides (x and y each in its place; its 8
/// rows and 16 columns left still tell the 128B swizzle from the others).
constexpr StoreCase kStoreCases[] = {{16, 32, 40, 0, 0}, {12, 24, 40, 0, 0}, {24, 48, 72, 32, 16}};

}  // namespace gpubench::kernels::probe
