// Launchers of the GEMM kernels (families/gemm/gemm.cu). A plain C++ header: no CUDA syntax, no CUDA
// include, so harness code compiled by the host compiler calls these without seeing <<<>>>.
//
// Every GEMM here computes C = A * B with all matrices row-major and densely packed:
// A is M x K (lda = K), B is K x N (ldb = N), C is M x N (ldc = N), and C is overwritten.
// The FP16 kernels take A and B as IEEE binary16 bit patterns (std::uint16_t; see
// kernels/half_bits.h), accumulate in FP32 and write FP32 C.
//
// Launcher conventions (as in families/global_memory/global_memory.h): return the cudaError_t of the launch as an int
// (0 = success; cudaErrorInvalidValue = 1 for a shape the kernel rejects, see *_shape_error),
// enqueue on `stream` and do not synchronize; buffers come from cudaMalloc (256-byte aligned).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "families/gemm/wgmma_tile.h"  // kWgmmaTileM, kWgmmaTileN, kWgmmaEntryRegisters

struct CUstream_st;  // cudaStream_t is `CUstream_st*`

namespace gpubench::kernels {

using Stream = CUstream_st*;

/// Why the tiled SGEMM cannot run this shape, or nullptr when it can. It takes any positive
/// M, N, K (partial tiles are predicated; 128-bit loads where rows are 16-byte aligned).
inline const char* sgemm_shape_error(long long m, long long n, long long k) {
  if (m <= 0 || n <= 0 || k <= 0) return "M, N and K must be positive";
  if (m * k >= (1LL << 31) || k * n >= (1LL << 31) || m * n >= (1LL << 31)) {
    return "a matrix has 2^31 or more elements (32-bit indexing)";
  }
  return nullptr;
}

/// Why the mma.sync FP16 kernel cannot run this shape, or nullptr. Any M; N and K must be
/// multiples of 8 because every row is moved in 16-byte cp.async chunks (a partial chunk would
/// need byte-granular zero-fill); partial tiles in M, N and K are zero-filled.
inline const char* hgemm_shape_error(long long m, long long n, long long k) {
  if (const char* e = sgemm_shape_error(m, n, k)) return e;
  if (n % 8 != 0 || k % 8 != 0) return "N and K must be multiples of 8 (16-byte rows for cp.async)";
  return nullptr;
}

/// Why the WMMA baseline cannot run this shape, or nullptr: it has no partial tiles, so M and N
/// must be multiples of 128 and K of 32.
inline const char* hgemm_wmma_shape_error(long long m, long long n, long long k) {
  if (const char* e = sgemm_shape_error(m, n, k)) return e;
  if (m % 128 != 0 || n % 128 != 0 || k % 32 != 0) {
    return "the WMMA baseline needs M and N multiples of 128 and K a multiple of 32";
  }
  return nullptr;
}

/// Naive SGEMM, one thread per element of C (the correctness and teaching baseline). Any shape.
int launch_sgemm_naive(const float* a, const float* b, float* c, int m, int n, int k, Stream stream);

/// Tiled SGEMM: 128x128 block tile, 8x8 register tile per thread, 128-bit loads, double-buffered
/// shared memory. Shapes: see sgemm_shape_error.
int launch_sgemm(const float* a, const float* b, float* c, int m, int n, int k, Stream stream);

/// FP16-in, FP32-accumulate GEMM on tensor cores through nvcuda::wmma (the simple baseline).
/// Shapes: see hgemm_wmma_shape_error.
int launch_hgemm_wmma(const std::uint16_t* a, const std::uint16_t* b, float* c, int m, int n, int k, Stream stream);

/// FP16-in, FP32-accumulate GEMM: mma.sync m16n8k16, ldmatrix, a multi-stage cp.async pipeline
/// and XOR-swizzled shared memory. Shapes: see hgemm_shape_error.
int launch_hgemm(const std::uint16_t* a, const std::uint16_t* b, float* c, int m, int n, int k, Stream stream);

/// Why the Hopper wgmma kernel cannot run this shape, or nullptr: any M; N and K multiples of 8,
/// because the tensor memory accelerator needs every global row to be a multiple of 16 bytes;
/// partial tiles in M, N and K are zero-filled by it.
inline const char* hgemm_wgmma_shape_error(long long m, long long n, long long k) {
  if (const char* e = sgemm_shape_error(m, n, k)) return e;
  if (n % 8 != 0 || k % 8 != 0) return "N and K must be multiples of 8 (16-byte rows for the TMA)";
  return nullptr;
}

/// Why a device of compute capability cc_major.cc_minor cannot run the wgmma kernel, or nullptr:
/// it is built for sm_90a, whose wgmma and setmaxnreg run on compute capability 9.0 only.
inline const char* hgemm_wgmma_device_error(int cc_major, int cc_minor) {
  if (cc_major != 9 || cc_minor != 0) return "the wgmma kernel is built for sm_90a (compute capability 9.0 only)";
  return nullptr;
}

/// Why a wgmma kernel compiled with `entry_registers` per thread cannot run, or "" (also for 0,
/// unknown): with fewer than kWgmmaEntryRegisters its consumers' setmaxnreg.inc would wait forever
/// for registers no warpgroup gives back - a hang, not an error.
inline std::string hgemm_wgmma_register_error(int entry_registers) {
  if (entry_registers <= 0 || entry_registers >= kWgmmaEntryRegisters) return "";
  return "the wgmma kernel was compiled with " + std::to_string(entry_registers) +
         " registers per thread at entry, fewer than the " + std::to_string(kWgmmaEntryRegisters) +
         " its setmaxnreg targets need (40 x 128 + 232 x 256 over 384 threads): it would hang; build it with "
         "CUDA 13 or 12 (the tests check that the ptxas of 13.0, 12.9 and 12.0 give it " +
         std::to_string(kWgmmaEntryRegisters) + ")";
}

/// Input type of the wgmma kernel: IEEE binary16 or bfloat16 bit patterns.
enum class Half16 { fp16, bf16 };

/// How the wgmma kernel's blocks get their operands: `pair` - thread-block clusters of 2 x 1
/// blocks on vertically adjacent tiles, each loading half of their shared B tile and multicasting
/// it to both (a third less L2 traffic); `single` - one block per tile, loading all of it.
enum class WgmmaCluster { pair, single };

/// How the wgmma kernel writes C: `tma_store` - each consumer warp stages 16 x 32 boxes of its
/// rows in shared memory and stores them with the tensor memory accelerator (whole 128-byte lines,
/// draining while the next tile's MMAs run); `direct` - every thread stores its accumulator pairs
/// to global memory itself.
enum class WgmmaEpilogue { tma_store, direct };

/// FP16- or BF16-in, FP32-accumulate GEMM for Hopper: wgmma.m64n256k16 from shared memory filled
/// by the tensor memory accelerator, a producer warpgroup and two consumer warpgroups, persistent
/// over 128 x 256 tiles (families/gemm/hgemm_sm90.cuh), in clusters or not (`cluster`), C written
/// as `epilogue` says. Shapes: see hgemm_wgmma_shape_error; devices: hgemm_wgmma_device_error
/// (anything else returns cudaErrorNoKernelImageForDevice).
int launch_hgemm_wgmma(const std::uint16_t* a, const std::uint16_t* b, float* c, int m, int n, int k, Half16 type,
                       WgmmaCluster cluster, WgmmaEpilogue epilogue, Stream stream);

/// Opts every instantiation of the wgmma kernel into its dynamic shared memory on the current
/// device and asks how many clusters of the pair kernel fit at once; launch_hgemm_wgmma does it
/// on first use per device (call it before graph capture).
int hgemm_wgmma_configure();

/// Clusters of the pair kernel that cudaOccupancyMaxActiveClusters said fit on the current device
/// at once when hgemm_wgmma_configure asked (0: not asked yet, or it could not say; the launcher
/// then uses half the SMs). A GPC with an odd number of free SMs leaves one idle.
int hgemm_wgmma_resident_clusters();

/// Registers per thread the compiled wgmma kernels hold at entry (the fewest of their
/// instantiations; cudaFuncGetAttributes), or 0 when the runtime cannot say.
int hgemm_wgmma_entry_registers();

/// Dynamic shared memory the mma.sync FP16 kernel needs per block, in bytes.
std::size_t hgemm_smem_bytes();

/// Opts the mma.sync FP16 kernel into hgemm_smem_bytes() of dynamic shared memory on the
/// current device (above the default 48 KiB). launch_hgemm does it on first use per device;
/// call it before capturing launch_hgemm into a CUDA graph, where it cannot be done.
int hgemm_configure();

}  // namespace gpubench::kernels
