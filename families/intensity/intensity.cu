// The roofline intensity sweep and the peak-FMA kernels: launchers and template instantiations.
//
// What they measure: the intensity sweep loads each element, applies k dependent FMAs to it in
// registers and stores it; as k grows the kernel moves from DRAM-bound to FMA-bound and the
// points trace the roofline, ridge included. The peak kernels keep everything in registers for
// the empirical FP32 (fma.rn.f32) and FP16x2 (fma.rn.f16x2, CUDA cores, not tensor cores)
// compute ceilings.
// Work model (harness/model/work_model.h, fma_sweep_work): per element 4 bytes read + 4 written;
// 2 FLOP per FP32 FMA, 4 FLOP per f16x2 FMA (two lanes).
// Variants: FP32 with k in kSweepFmaCounts plus the half-FMA point (k = 1 on every other
// element); FP16x2 with k in kSweepFmaCounts; peak FP32 and peak FP16x2.
// The exact FMA count of each instantiation is checked in the PTX by tests/contract.
#include "families/intensity/intensity.h"

#include <utility>

#include "families/intensity/intensity.cuh"
#include "kernels/launch.cuh"

namespace gpubench::kernels {

namespace {

using intensity::kBlockThreads;

static_assert(kPeakTileElems == static_cast<std::size_t>(intensity::kPeakChains) * kBlockThreads,
              "families/intensity/intensity.h and the peak kernels disagree on the tile");
static_assert(kPeakStepsPerRound == intensity::kPeakUnroll,
              "families/intensity/intensity.h and the peak kernels disagree");
static_assert(kSweepMaxUnrolledSteps == intensity::kMaxUnrolledSteps,
              "families/intensity/intensity.h and the sweep kernels disagree");
static_assert(kSweepTileElems == static_cast<std::size_t>(kBlockThreads) * 4 * intensity::kVectorsPerThread,
              "families/intensity/intensity.h and the sweep kernels disagree on the tile");

// Grid: intensity_grid_blocks() at the kernel's occupancy on this device.
template <class Kernel>
int resident_blocks(Kernel kernel, int sm_count, std::size_t work_tiles, unsigned* grid) {
  int per_sm = 0;
  const rt::Error e = rt::max_active_blocks(&per_sm, kernel, kBlockThreads, 0);
  if (e != rt::kSuccess) return static_cast<int>(e);
  *grid = static_cast<unsigned>(intensity_grid_blocks(work_tiles, per_sm, sm_count));
  return 0;
}

template <int K, int kEvery>
int sweep_fp32(const float* in, float* out, std::size_t n, float a, float b, int sm_count, Stream stream) {
  auto kernel = intensity::intensity_fp32_kernel<K, kEvery>;
  unsigned grid = 0;
  if (int e = resident_blocks(kernel, sm_count, intensity_sweep_tiles(n), &grid)) return e;
  return rt::launch(kernel, grid, kBlockThreads, 0, stream, in, out, n, a, b);
}

template <int K>
int sweep_fp16x2(const std::uint32_t* in, std::uint32_t* out, std::size_t n, std::uint32_t a, std::uint32_t b,
                 int sm_count, Stream stream) {
  auto kernel = intensity::intensity_fp16x2_kernel<K>;
  unsigned grid = 0;
  if (int e = resident_blocks(kernel, sm_count, intensity_sweep_tiles(n), &grid)) return e;
  return rt::launch(kernel, grid, kBlockThreads, 0, stream, in, out, n, a, b);
}

// Calls f(std::integral_constant<int, K>) for the K in kSweepFmaCounts equal to k; returns
// rt::kInvalidValue for any other k. One switch, so the instantiated set is exactly the list.
template <class F>
int dispatch_k(int k, F&& f) {
  switch (k) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 16: return f(std::integral_constant<int, 16>{});
    case 32: return f(std::integral_constant<int, 32>{});
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    case 256: return f(std::integral_constant<int, 256>{});
    case 512: return f(std::integral_constant<int, 512>{});
    case 1024: return f(std::integral_constant<int, 1024>{});
    case 2048: return f(std::integral_constant<int, 2048>{});
    default: return static_cast<int>(rt::kInvalidValue);
  }
}
static_assert(kSweepFmaCounts.size() == 12 && kSweepFmaCounts.back() == 2048,
              "dispatch_k must list exactly kSweepFmaCounts");

}  // namespace

int launch_intensity_fp32(const float* in, float* out, std::size_t n, int fma_per_elem, int every, float a, float b,
                          int sm_count, Stream stream) {
  if (!intensity_fp32_supported(fma_per_elem, every) || n == 0) return static_cast<int>(rt::kInvalidValue);
  if (every == 2) return sweep_fp32<1, 2>(in, out, n, a, b, sm_count, stream);
  return dispatch_k(fma_per_elem,
                    [&](auto k) { return sweep_fp32<decltype(k)::value, 1>(in, out, n, a, b, sm_count, stream); });
}

int launch_intensity_fp16x2(const std::uint32_t* in, std::uint32_t* out, std::size_t n, int fma_per_elem,
                            std::uint32_t a, std::uint32_t b, int sm_count, Stream stream) {
  if (!intensity_fp16x2_supported(fma_per_elem) || n == 0) return static_cast<int>(rt::kInvalidValue);
  return dispatch_k(fma_per_elem,
                    [&](auto k) { return sweep_fp16x2<decltype(k)::value>(in, out, n, a, b, sm_count, stream); });
}

int launch_peak_fp32(const float* in, float* out, std::size_t n, int rounds, float a, float b, int sm_count,
                     Stream stream) {
  if (!peak_args_ok(n, rounds)) return static_cast<int>(rt::kInvalidValue);
  auto kernel = intensity::peak_fp32_kernel<intensity::kPeakChains, intensity::kPeakUnroll>;
  unsigned grid = 0;
  if (int e = resident_blocks(kernel, sm_count, n / kPeakTileElems, &grid)) return e;
  return rt::launch(kernel, grid, kBlockThreads, 0, stream, in, out, n, rounds, a, b);
}

int launch_peak_fp16x2(const std::uint32_t* in, std::uint32_t* out, std::size_t n, int rounds, std::uint32_t a,
                       std::uint32_t b, int sm_count, Stream stream) {
  if (!peak_args_ok(n, rounds)) return static_cast<int>(rt::kInvalidValue);
  auto kernel = intensity::peak_fp16x2_kernel<intensity::kPeakChains, intensity::kPeakUnroll>;
  unsigned grid = 0;
  if (int e = resident_blocks(kernel, sm_count, n / kPeakTileElems, &grid)) return e;
  return rt::launch(kernel, grid, kBlockThreads, 0, stream, in, out, n, rounds, a, b);
}

}  // namespace gpubench::kernels
