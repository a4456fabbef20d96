// The GEMM table: compute/sgemm/{kernel,naive,cublas},
// compute/hgemm/{kernel,wmma,wgmma,wgmma_unclustered,wgmma_direct_store,cublas},
// compute/bf16gemm/{wgmma,cublas} and
// compute/fp8gemm/cublaslt over square sizes and shapes from real
// models, each row C = A * B (row-major, families/gemm/gemm.h; FP32 C, FP32 accumulation) with the
// 2MNK work model. cuBLAS rows sit beside the hand-written kernels at the same sizes; the
// kernels' pct_of_cublas counter compares the two. The BF16 and FP8 library rows bound what the
// tensor cores give at those input precisions (peaks bf16_tensor and fp8_tensor: dense,
// FP32 accumulate; the FP8 peak is 0 - no percentage - on cards without FP8 tensor cores).
//
// Shapes: square 512 .. 8192; 1000^3 (not a tile multiple: the tiled SGEMM and the mma.sync
// FP16 kernel predicate or zero-fill their partial tiles); LLaMA-7B MLP projections for 4096
// tokens (M x N x K = 4096 x 11008 x 4096 up, 4096 x 4096 x 11008 down); 8192 x 1024 x 8192
// (a tall-skinny output with a deep K). A row is only generated for shapes its kernel accepts
// (families/gemm/gemm.h *_shape_error); the workload still rejects any other with the reason.
#include <string>
#include <vector>

#include "families/gemm/gemm.h"
#include "families/gemm/low_precision.h"
#include "harness/family.h"

GPUBENCH_FAMILY(gemm)

namespace gpubench {

namespace {

struct GemmShape {
  int m, n, k;
};

std::vector<GemmShape> gemm_shapes(bool quick) {
  // --quick: every variant once at least, verified, in a smoke run's budget (#11: under 10 s on
  // an H100 for every family): a square of whole tiles, and 1000^3 for the edge tiles (FP8 and
  // WMMA take no 1000^3, so their quick row is 256^3).
  if (quick) return {{256, 256, 256}, {1000, 1000, 1000}};
  return {{512, 512, 512},    {1000, 1000, 1000},  {1024, 1024, 1024},  {2048, 2048, 2048}, {4096, 4096, 4096},
          {8192, 8192, 8192}, {4096, 11008, 4096}, {4096, 4096, 11008}, {8192, 1024, 8192}};
}

BenchCase gemm_row(const char* kernel, const char* variant, const GemmShape& s, int in_bytes, PeakKind peak,
                   int min_cc) {
  BenchCase c;
  c.family = "compute";
  c.kernel = kernel;
  c.variant = variant;
  c.params = "m:" + std::to_string(s.m) + ",n:" + std::to_string(s.n) + ",k:" + std::to_string(s.k);
  c.args = {{"m", static_cast<double>(s.m)}, {"n", static_cast<double>(s.n)}, {"k", static_cast<double>(s.k)}};
  c.work = gemm_work(s.m, s.n, s.k, in_bytes, 4, peak);
  c.min_cc = min_cc;
  c.sweep = "m";
  // Compute-bound: operands are re-read from L2 many times per run anyway, so runs are timed
  // back to back (as cuBLAS's own benchmarks do) rather than after an L2 flush.
  c.needs_flush = false;
  return c;
}

}  // namespace

std::vector<BenchCase> families::gemm::cases(const SweepOptions& o) {
  std::vector<BenchCase> cases;
  // The naive kernel is a correctness baseline: its 8192^3 run would take seconds per sample.
  const long long naive_max_flop = 2LL * 2048 * 2048 * 2048;
  for (const GemmShape& s : gemm_shapes(o.quick)) {
    using namespace kernels;
    if (sgemm_shape_error(s.m, s.n, s.k) == nullptr) {
      cases.push_back(gemm_row("sgemm", "kernel", s, 4, PeakKind::fp32, 0));
      if (2LL * s.m * s.n * s.k <= naive_max_flop) cases.push_back(gemm_row("sgemm", "naive", s, 4, PeakKind::fp32, 0));
    }
    cases.push_back(gemm_row("sgemm", "cublas", s, 4, PeakKind::fp32, 0));
    // mma.sync m16n8k16 with f16 inputs and cp.async need sm_80.
    if (hgemm_shape_error(s.m, s.n, s.k) == nullptr)
      cases.push_back(gemm_row("hgemm", "kernel", s, 2, PeakKind::fp16_tensor, 80));
    if (hgemm_wmma_shape_error(s.m, s.n, s.k) == nullptr) {
      cases.push_back(gemm_row("hgemm", "wmma", s, 2, PeakKind::fp16_tensor, 80));
    }
    // wgmma and the TMA: the Hopper kernel, built for sm_90a (a 9.0 device; others skip the row),
    // in 2 x 1 clusters sharing B by multicast, storing C through shared memory with the TMA
    // (wgmma), and, FP16 only, each side by side with one change: one block per tile
    // (wgmma_unclustered: do the clusters pay?) and, at 4096^3 and 8192^3, where the 90 %-of-cuBLAS
    // goal is measured, every thread storing its own accumulators (wgmma_direct_store: does the
    // TMA epilogue pay?; --quick runs it at 1000^3, its stores clipped at C's edges).
    const bool wgmma_shape = hgemm_wgmma_shape_error(s.m, s.n, s.k) == nullptr;
    if (wgmma_shape) {
      cases.push_back(gemm_row("hgemm", "wgmma", s, 2, PeakKind::fp16_tensor, 90));
      cases.push_back(gemm_row("hgemm", "wgmma_unclustered", s, 2, PeakKind::fp16_tensor, 90));
      const bool square = s.m == s.n && s.n == s.k;
      if (square && (o.quick ? s.m == 1000 : s.m >= 4096))
        cases.push_back(gemm_row("hgemm", "wgmma_direct_store", s, 2, PeakKind::fp16_tensor, 90));
    }
    cases.push_back(gemm_row("hgemm", "cublas", s, 2, PeakKind::fp16_tensor, 0));
    // BF16 tensor cores arrived with sm_80; FP8 ones with sm_89 (Ada) and sm_90 (Hopper).
    if (wgmma_shape) cases.push_back(gemm_row("bf16gemm", "wgmma", s, 2, PeakKind::bf16_tensor, 90));
    cases.push_back(gemm_row("bf16gemm", "cublas", s, 2, PeakKind::bf16_tensor, 80));
    if (fp8_gemm_shape_error(s.m, s.n, s.k) == nullptr)
      cases.push_back(gemm_row("fp8gemm", "cublaslt", s, 1, PeakKind::fp8_tensor, 89));
  }
  return cases;
}

}  // namespace gpubench
