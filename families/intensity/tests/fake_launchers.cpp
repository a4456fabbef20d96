// The intensity launchers (families/intensity/intensity.h) for the fake CUDA runtime: the REAL kernel
// bodies of families/intensity/intensity.cuh run under the host SIMT shim, with the launchers'
// own argument rules and grid rule (the pure functions of families/intensity/intensity.h, at 8 resident
// blocks per SM, what the contract's 32-register budget gives on sm_80/sm_90). So the CUDA
// roofline workloads (families/intensity/cuda.cpp) run end to end, kernels included.
//
// Work runs at once (no graph capture here: the fake runtime keeps its stream internals to
// itself), so the tests run these rows in the flushed mode, whose executions are never captured.
// No CUDA header in this file: kernels/simt/simt.h and cuda_runtime_api.h both define the
// CUDA keywords.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "families/intensity/intensity.cuh"
#include "families/intensity/intensity.h"
#include "families/intensity/tests/fake_launchers.h"

namespace fake_intensity {

Counters& counters() {
  static Counters c;
  return c;
}

}  // namespace fake_intensity

namespace gpubench::kernels {

namespace {

namespace ik = intensity;
using simt::Dim3;

constexpr int kInvalidValue = 1;             // cudaErrorInvalidValue
constexpr int kInvalidResourceHandle = 400;  // cudaErrorInvalidResourceHandle
constexpr int kBlocksPerSm = 8;

unsigned grid_for(std::size_t tiles, int sm_count) {
  const std::size_t g = intensity_grid_blocks(tiles, kBlocksPerSm, sm_count);
  fake_intensity::counters().last_grid = g;
  return static_cast<unsigned>(g);
}

template <int K>
int sweep_f32(const float* in, float* out, std::size_t n, int every, float a, float b, int sm_count) {
  const Dim3 grid{grid_for(intensity_sweep_tiles(n), sm_count), 1, 1}, block{ik::kBlockThreads, 1, 1};
  if (every == 2) {
    simt::launch(grid, block, ik::intensity_fp32_kernel<K, 2>, in, out, n, a, b);
  } else {
    simt::launch(grid, block, ik::intensity_fp32_kernel<K, 1>, in, out, n, a, b);
  }
  return 0;
}

template <int K>
int sweep_f16x2(const std::uint32_t* in, std::uint32_t* out, std::size_t n, std::uint32_t a, std::uint32_t b,
                int sm_count) {
  const Dim3 grid{grid_for(intensity_sweep_tiles(n), sm_count), 1, 1}, block{ik::kBlockThreads, 1, 1};
  simt::launch(grid, block, ik::intensity_fp16x2_kernel<K>, in, out, n, a, b);
  return 0;
}

}  // namespace

// The fake instantiates the small k the tests use; any other supported k is refused loudly
// (a test asking for it is a test bug, not a kernel result).
int launch_intensity_fp32(const float* in, float* out, std::size_t n, int fma_per_elem, int every, float a, float b,
                          int sm_count, Stream stream) {
  if (stream == nullptr) return kInvalidResourceHandle;
  if (!intensity_fp32_supported(fma_per_elem, every) || n == 0) return kInvalidValue;
  ++fake_intensity::counters().launches;
  switch (fma_per_elem) {
    case 1: return sweep_f32<1>(in, out, n, every, a, b, sm_count);
    case 16: return sweep_f32<16>(in, out, n, every, a, b, sm_count);
    default: fake_intensity::counters().unsupported_in_fake = fma_per_elem; return kInvalidValue;
  }
}

int launch_intensity_fp16x2(const std::uint32_t* in, std::uint32_t* out, std::size_t n, int fma_per_elem,
                            std::uint32_t a, std::uint32_t b, int sm_count, Stream stream) {
  if (stream == nullptr) return kInvalidResourceHandle;
  if (!intensity_fp16x2_supported(fma_per_elem) || n == 0) return kInvalidValue;
  ++fake_intensity::counters().launches;
  switch (fma_per_elem) {
    case 1: return sweep_f16x2<1>(in, out, n, a, b, sm_count);
    case 8: return sweep_f16x2<8>(in, out, n, a, b, sm_count);
    default: fake_intensity::counters().unsupported_in_fake = fma_per_elem; return kInvalidValue;
  }
}

int launch_peak_fp32(const float* in, float* out, std::size_t n, int rounds, float a, float b, int sm_count,
                     Stream stream) {
  if (stream == nullptr) return kInvalidResourceHandle;
  if (!peak_args_ok(n, rounds)) return kInvalidValue;
  ++fake_intensity::counters().launches;
  simt::launch(Dim3{grid_for(n / kPeakTileElems, sm_count), 1, 1}, Dim3{ik::kBlockThreads, 1, 1},
               ik::peak_fp32_kernel<ik::kPeakChains, ik::kPeakUnroll>, in, out, n, rounds, a, b);
  return 0;
}

int launch_peak_fp16x2(const std::uint32_t* in, std::uint32_t* out, std::size_t n, int rounds, std::uint32_t a,
                       std::uint32_t b, int sm_count, Stream stream) {
  if (stream == nullptr) return kInvalidResourceHandle;
  if (!peak_args_ok(n, rounds)) return kInvalidValue;
  ++fake_intensity::counters().launches;
  simt::launch(Dim3{grid_for(n / kPeakTileElems, sm_count), 1, 1}, Dim3{ik::kBlockThreads, 1, 1},
               ik::peak_fp16x2_kernel<ik::kPeakChains, ik::kPeakUnroll>, in, out, n, rounds, a, b);
  return 0;
}

}  // namespace gpubench::kernels
