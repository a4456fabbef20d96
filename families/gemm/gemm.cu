// Launchers of the GEMM kernels (declared in families/gemm/gemm.h): grid shapes, shared-memory opt-in
// and shape checks. The kernel bodies live in sgemm.cuh and hgemm.cuh so that
// the emulation tests compile the same sources with g++.
#include "families/gemm/gemm.h"
#include "families/gemm/hgemm.cuh"
#include "families/gemm/sgemm.cuh"
#include "kernels/launch.cuh"

namespace gpubench::kernels {

int launch_sgemm_naive(const float* a, const float* b, float* c, int m, int n, int k, Stream stream) {
  if (sgemm_shape_error(m, n, k) != nullptr) return rt::kInvalidValue;
  const rt::Grid block(sgemm::kNaiveBlock, sgemm::kNaiveBlock);
  const rt::Grid grid((n + sgemm::kNaiveBlock - 1) / sgemm::kNaiveBlock,
                      (m + sgemm::kNaiveBlock - 1) / sgemm::kNaiveBlock);
  return rt::launch(sgemm::sgemm_naive_kernel, grid, block, 0, stream, a, b, c, m, n, k);
}

int launch_sgemm(const float* a, const float* b, float* c, int m, int n, int k, Stream stream) {
  if (sgemm_shape_error(m, n, k) != nullptr) return rt::kInvalidValue;
  const rt::Grid grid(sgemm::tiled_grid_x(n), sgemm::tiled_grid_y(m));
  return rt::launch(sgemm::sgemm_tiled_kernel, grid, sgemm::kThreads, 0, stream, a, b, c, m, n, k);
}

int launch_hgemm_wmma(const std::uint16_t* a, const std::uint16_t* b, float* c, int m, int n, int k, Stream stream) {
  if (hgemm_wmma_shape_error(m, n, k) != nullptr) return rt::kInvalidValue;
  const rt::Grid grid(n / hgemm::kBlockN, m / hgemm::kBlockM);
  return rt::launch(hgemm::hgemm_wmma_kernel, grid, hgemm::kWmmaThreads, 0, stream, reinterpret_cast<const __half*>(a),
                    reinterpret_cast<const __half*>(b), c, m, n, k);
}

namespace {
// Devices on which hgemm_configure() succeeded (benchmarks launch from one thread).
constexpr int kMaxDevices = 64;
bool hgemm_configured[kMaxDevices] = {};
}  // namespace

int hgemm_configure() {
  int dev = 0;
  rt::Error err = rt::current_device(&dev);
  if (err != rt::kSuccess) return static_cast<int>(err);
  // Above 48 KiB of dynamic shared memory a kernel must opt in, per device.
  err = rt::allow_dynamic_smem(hgemm::hgemm_mma_kernel, hgemm::kSmemBytes);
  if (err == rt::kSuccess && dev >= 0 && dev < kMaxDevices) hgemm_configured[dev] = true;
  return static_cast<int>(err);
}

int launch_hgemm(const std::uint16_t* a, const std::uint16_t* b, float* c, int m, int n, int k, Stream stream) {
  if (hgemm_shape_error(m, n, k) != nullptr) return rt::kInvalidValue;
  int dev = 0;
  if (rt::current_device(&dev) == rt::kSuccess && (dev < 0 || dev >= kMaxDevices || !hgemm_configured[dev])) {
    const int err = hgemm_configure();
    if (err != 0) return err;
  }
  return rt::launch(hgemm::hgemm_mma_kernel, hgemm::mma_grid_blocks(m, n), hgemm::kThreads, hgemm::kSmemBytes, stream,
                    a, b, c, m, n, k);
}

std::size_t hgemm_smem_bytes() { return hgemm::kSmemBytes; }

}  // namespace gpubench::kernels
