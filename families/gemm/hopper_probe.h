// The Hopper probe: the wgmma GEMM's building blocks, each run alone on the GPU and judged against
// the emulation's model of it (kernels/wgmma.cuh, kernels/tma.cuh), so that the first run on an
// H100 says which block - the TMA's swizzle, the cluster multicast and remote arrive, the wgmma
// descriptors, the accumulator layout - the hardware reads differently, and which descriptor
// encoding it wants instead. gpubench_kernel_check runs it ("wgmma_probe ..." checks) before the
// GEMM itself, and scripts/device_kit.sh in a step of its own.
//
// A plain C++ header (no CUDA syntax or include), like families/gemm/gemm.h. Launchers:
// hopper_probe.cu (sm_90a; under the host emulation too); kernels: hopper_probe.cuh; the
// inputs and judges: hopper_probe_judge.cpp (host only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "families/gemm/gemm.h"
#include "families/gemm/hopper_probe_shapes.h"  // the probes' shapes, Descriptors, StoreCase

namespace gpubench::kernels::probe {

/// The descriptors the wgmma GEMM's consumers build (families/gemm/hgemm_sm90.cuh).
Descriptors gemm_descriptors();
/// "A lbo 16 sbo 1024 step 32, B lbo 8192 sbo 1024 step 2048".
std::string describe(const Descriptors& d);
/// `base` and the variants worth trying when it fails on a GPU: each operand's two offsets
/// swapped, alone and together.
std::vector<Descriptors> descriptor_variants(const Descriptors& base);

// ---- launchers (hopper_probe.cu): enqueue on the null stream; return a cudaError_t as int. A
// device other than compute capability 9.0 gets cudaErrorNoKernelImageForDevice (209). `status`
// is device memory of one int per block (two for the multicast), which the kernel sets to 0 when
// every wait completed, 1 when a TMA load never completed its barrier, 2 when an arrive never did.

/// One TMA load of the box_outer x 64 box at (0, 0) of `tensor` (outer rows of `inner` 16-bit
/// elements, 128B swizzle) into shared memory; out gets box_outer x 64 elements as they landed.
int launch_tma_box_probe(const std::uint16_t* tensor, int inner, int outer, int box_outer, std::uint16_t* out,
                         int* status);

/// A 2 x 1 cluster multicasting one 64 x 64 box each from `tensor` (128 rows of 64 elements):
/// out gets 2 blocks x 2 slots x 4096 elements, status 2 ints.
int launch_multicast_probe(const std::uint16_t* tensor, std::uint16_t* out, int* status);

/// The GEMM's epilogue box stored alone: the block writes slot j of a 16 x 32 FP32 box in shared
/// memory (128B swizzle) with the value j and one thread stores it with the TMA at (c.x, c.y) of
/// the tensor at `tensor`; the part of the box outside the tensor must not be written.
int launch_tma_store_probe(float* tensor, const StoreCase& c, int* status);

/// D = A * B with A 64 x 64 and B 64 x 256 (row-major 16-bit `type`) by wgmma from the
/// descriptors `d`: out gets each thread's raw fragment, out[t * kFragment + i].
int launch_wgmma_probe(const std::uint16_t* a, const std::uint16_t* b, Half16 type, const Descriptors& d, float* out,
                       int* status);

// ---- inputs and judges (hopper_probe_judge.cpp) ----

/// A tensor whose element (row, col) holds row * inner + col (each of the 65 536 values at most once).
std::vector<std::uint16_t> index_tensor(int inner, int outer);

/// A judge's answer: ok, or the first line of why not and the lines that diagnose it.
struct Verdict {
  bool ok = true;
  std::string summary;
  std::vector<std::string> details;
};

/// The status a probe block wrote, as a verdict ("TMA load never completed its mbarrier" ...).
Verdict judge_status(int status, const std::string& block);

/// `landed`: box_outer x 64 elements of index_tensor(inner, ...) rows first_row.. as the TMA put
/// them in shared memory; expected: the emulation's 128B swizzle. On a mismatch the summary says
/// which swizzle mode (none, 32B, 64B) the data match instead, or that none does.
Verdict judge_swizzled_box(const std::uint16_t* landed, int inner, int box_outer, int first_row);

/// The multicast probe's copy-out (launch_multicast_probe) of index_tensor(64, 128).
Verdict judge_multicast(const std::uint16_t* landed);

/// The store probe's allocation (launch_tma_store_probe): kStoreProbeRows x c.stride floats that
/// held NaN, of which the c.rows x c.cols at (0, 0) are the tensor. An element inside both the
/// tensor and the box must hold the slot that the emulation's 128B swizzle reads for its place in
/// the box; every other element must still be NaN. On a mismatch the summary says which swizzle
/// mode (none, 32B, 64B) the data match instead.
Verdict judge_tma_store(const float* tensor, const StoreCase& c);

/// The operands of one wgmma probe run, as floats that FP16 and BF16 both hold exactly.
struct MmaInputs {
  std::vector<float> a;  ///< 64 x 64 row-major
  std::vector<float> b;  ///< 64 x 256 row-major
};
/// Random multiples of 1/64 in (-2, 2), none zero: every element of D depends on all of its row
/// of A and column of B.
MmaInputs random_mma_inputs(std::uint32_t seed);
/// The diagnostic designs. A row r of A is one-hot at k = p(r) = (5r + 3) mod 64 (a permutation),
/// so D(r, c) = B(p(r), c):
///   by_column: B(k, n) = n       -> D(r, c) = c
///   by_k:      B(k, n) = k       -> D(r, c) = p(r)
///   by_row:    A's one is r + 1 and B = 1 -> D(r, c) = r + 1
enum class Design { by_column, by_k, by_row };
MmaInputs design_mma_inputs(Design d);
/// The inputs as `type` bit patterns.
std::vector<std::uint16_t> to_bits(const std::vector<float>& x, Half16 type);

/// Each thread's fragment against the double-precision product, element (t, i) read at the
/// emulation's accumulator layout (WgmmaLayout). The summary counts the wrong elements.
Verdict judge_mma(const float* fragments, const MmaInputs& in);

/// Lines saying where the hardware put what, from the three designs' fragments: for the first
/// wrong elements, the row, column and k each one's value names against the layout's.
std::vector<std::string> diagnose_mma(const float* by_column, const float* by_k, const float* by_row,
                                      int max_lines = 8);

/// Runs the wgmma probe once: the block's status as a verdict, the fragments into *fragments.
using MmaRunner = std::function<Verdict(const MmaInputs&, const Descriptors&, std::vector<float>* fragments)>;

/// The whole wgmma probe: `gemm` on random operands; when wrong, the three designs' diagnosis
/// (diagnose_mma) and every one of `variants` tried, each a detail line, and the summary naming
/// the first variant that is right (the encoding the hardware wants), or that none is.
Verdict probe_mma(const Descriptors& gemm, const std::vector<Descriptors>& variants, const MmaRunner& run);

/// Where a wrong C of the wgmma GEMM is wrong, for a check that failed: how many elements (and
/// how many were never written: still NaN), which tiles of tile_m x tile_n hold them (the most
/// affected first), and where inside a tile (each consumer's 64 rows, each 64-column B box).
/// `expected` and `tolerance` hold one value per element of C (m x n, row-major).
std::vector<std::string> diagnose_gemm(const float* c, const double* expected, const double* tolerance, int m, int n,
                                       int tile_m, int tile_n);

}  // namespace gpubench::kernels::probe
