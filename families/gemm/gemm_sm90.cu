// Launcher of the Hopper wgmma GEMM (declared in families/gemm/gemm.h; kernel body in
// hgemm_sm90.cuh). nvcc builds this file for sm_90a only (families/gemm/CMakeLists.txt): wgmma
// and setmaxnreg exist in no other target. Its host side builds the two tensor maps, checks the
// device, opts into the shared memory and launches one persistent block per SM (at most one per
// tile).
#include "families/gemm/gemm.h"
#include "families/gemm/hgemm_sm90.cuh"
#include "kernels/launch.cuh"

namespace gpubench::kernels {

namespace {

constexpr int kMaxDevices = 64;
bool wgmma_configured[kMaxDevices] = {};

// cudaErrorNoKernelImageForDevice: the answer of a device this sm_90a-only kernel cannot run on.
constexpr int kNoKernelImage = 209;

template <class T>
int launch_typed(const std::uint16_t* a, const std::uint16_t* b, float* c, int m, int n, int k, hopper::TmaElement e,
                 int sms, Stream stream) {
  using namespace hgemm_sm90;
  hopper::TmaMap map_a{};
  hopper::TmaMap map_b{};
  int err = encode_operand_maps(&map_a, &map_b, a, b, m, n, k, e);
  if (err != 0) return err;
  const int tiles = tiles_m(m) * tiles_n(n);
  const unsigned blocks = static_cast<unsigned>(tiles < sms ? tiles : sms);
  return rt::launch(hgemm_wgmma_kernel<T>, rt::Grid(blocks), rt::Grid(kThreads), kSmemBytes, stream, map_a, map_b, c, m,
                    n, k);
}

}  // namespace

int hgemm_wgmma_configure() {
  int dev = 0;
  rt::Error err = rt::current_device(&dev);
  if (err != rt::kSuccess) return static_cast<int>(err);
  err = rt::allow_dynamic_smem(hgemm_sm90::hgemm_wgmma_kernel<hopper::F16>, hgemm_sm90::kSmemBytes);
  if (err == rt::kSuccess) {
    err = rt::allow_dynamic_smem(hgemm_sm90::hgemm_wgmma_kernel<hopper::BF16>, hgemm_sm90::kSmemBytes);
  }
  if (err == rt::kSuccess && dev >= 0 && dev < kMaxDevices) wgmma_configured[dev] = true;
  return static_cast<int>(err);
}

int launch_hgemm_wgmma(const std::uint16_t* a, const std::uint16_t* b, float* c, int m, int n, int k, Half16 type,
                       Stream stream) {
  if (hgemm_wgmma_shape_error(m, n, k) != nullptr) return rt::kInvalidValue;
  int major = 0, minor = 0, sms = 0;
  rt::Error err = rt::device_shape(&major, &minor, &sms);
  if (err != rt::kSuccess) return static_cast<int>(err);
  if (hgemm_wgmma_device_error(major, minor) != nullptr) return kNoKernelImage;
  int dev = 0;
  if (rt::current_device(&dev) == rt::kSuccess && (dev < 0 || dev >= kMaxDevices || !wgmma_configured[dev])) {
    const int e = hgemm_wgmma_configure();
    if (e != 0) return e;
  }
  if (type == Half16::bf16) return launch_typed<hopper::BF16>(a, b, c, m, n, k, hopper::TmaElement::kBF16, sms, stream);
  return launch_typed<hopper::F16>(a, b, c, m, n, k, hopper::TmaElement::kF16, sms, stream);
}

}  // namespace gpubench::kernels
