// Launchers of the Hopper probe (families/gemm/hopper_probe.h; kernels in hopper_probe.cuh).
// nvcc builds this file for sm_90a only, as gemm_sm90.cu; the emulated kernel check builds it as
// C++ with the kernels under the host emulation. Each launcher checks the device, opts the
// kernel into its shared memory, encodes the tensor maps as the GEMM encodes its own (16-bit
// elements, 128B swizzle, boxes of 64 x 64) and launches one block (one 2 x 1 cluster).
#include "families/gemm/gemm.h"
#include "families/gemm/hgemm_sm90.cuh"
#include "families/gemm/hopper_probe.cuh"
#include "families/gemm/hopper_probe.h"
#include "kernels/launch.cuh"

namespace gpubench::kernels::probe {

namespace {

constexpr int kNoKernelImage = 209;  // cudaErrorNoKernelImageForDevice

static_assert(hopper_probe::kSmemBytes <= 227 * 1024, "within an H100's opt-in shared memory");

/// 0 when the current device runs sm_90a code, else the error to return.
int device_error() {
  int major = 0, minor = 0, sms = 0;
  const rt::Error e = rt::device_shape(&major, &minor, &sms);
  if (e != rt::kSuccess) return static_cast<int>(e);
  return hgemm_wgmma_device_error(major, minor) == nullptr ? 0 : kNoKernelImage;
}

/// A 2-D map of `outer` rows of `inner` 16-bit elements in 64 x 64 boxes, 128B swizzle.
int encode(hopper::TmaMap* map, const std::uint16_t* tensor, int inner, int outer, int box_outer,
           hopper::TmaElement element = hopper::TmaElement::kF16) {
  return hopper::encode_tensor_map_2d(map, tensor, static_cast<std::uint64_t>(inner), static_cast<std::uint64_t>(outer),
                                      static_cast<std::uint64_t>(inner) * 2u, 64, static_cast<std::uint32_t>(box_outer),
                                      element, hopper::Swizzle::k128B);
}

template <class T>
int launch_mma(const hopper::TmaMap& map_a, const hopper::TmaMap& map_b, const Descriptors& d, float* out,
               int* status) {
  const rt::Error e = rt::allow_dynamic_smem(hopper_probe::wgmma_probe_kernel<T>, hopper_probe::kSmemBytes);
  if (e != rt::kSuccess) return static_cast<int>(e);
  return rt::launch(hopper_probe::wgmma_probe_kernel<T>, rt::Grid(1), rt::Grid(kThreads), hopper_probe::kSmemBytes,
                    nullptr, map_a, map_b, d, out, status);
}

}  // namespace

Descriptors gemm_descriptors() {
  using namespace hgemm_sm90;
  return Descriptors{kADescLbo, kADescSbo, kAKStepBytes, kBDescLbo, kBDescSbo, kBKStepBytes};
}

int launch_tma_box_probe(const std::uint16_t* tensor, int inner, int outer, int box_outer, std::uint16_t* out,
                         int* status) {
  if (inner < 64 || outer < box_outer || box_outer < 1 || box_outer > 256 || inner % 8 != 0) return rt::kInvalidValue;
  if (const int e = device_error()) return e;
  hopper::TmaMap map{};
  if (const int e = encode(&map, tensor, inner, outer, box_outer)) return e;
  const rt::Error e = rt::allow_dynamic_smem(hopper_probe::tma_box_kernel, hopper_probe::kSmemBytes);
  if (e != rt::kSuccess) return static_cast<int>(e);
  return rt::launch(hopper_probe::tma_box_kernel, rt::Grid(1), rt::Grid(kThreads), hopper_probe::kSmemBytes, nullptr,
                    map, static_cast<std::uint32_t>(box_outer * 64 * 2), out, status);
}

int launch_tma_store_probe(float* tensor, const StoreCase& c, int* status) {
  static_assert(kStoreBoxRows == hgemm_sm90::kEpilogueRows && kStoreBoxCols == hgemm_sm90::kEpilogueCols,
                "the probe stores the GEMM epilogue's box");
  if (c.rows < 1 || c.cols < 1 || c.rows > kStoreProbeRows || c.stride < c.cols || c.stride % 4 != 0 || c.x < 0 ||
      c.y < 0 || c.x >= c.cols || c.y >= c.rows) {
    return rt::kInvalidValue;
  }
  if (const int e = device_error()) return e;
  hopper::TmaMap map{};  // the GEMM's own map of C
  if (const int e = hgemm_sm90::encode_result_map(&map, tensor, c.rows, c.cols, c.stride)) return e;
  const rt::Error e = rt::allow_dynamic_smem(hopper_probe::tma_store_probe_kernel, hopper_probe::kSmemBytes);
  if (e != rt::kSuccess) return static_cast<int>(e);
  return rt::launch(hopper_probe::tma_store_probe_kernel, rt::Grid(1), rt::Grid(kThreads), hopper_probe::kSmemBytes,
                    nullptr, map, c.x, c.y, status);
}

int launch_multicast_probe(const std::uint16_t* tensor, std::uint16_t* out, int* status) {
  if (const int e = device_error()) return e;
  hopper::TmaMap map{};
  if (const int e = encode(&map, tensor, 64, 128, 64)) return e;
  const rt::Error e = rt::allow_dynamic_smem(hopper_probe::multicast_kernel, hopper_probe::kSmemBytes);
  if (e != rt::kSuccess) return static_cast<int>(e);
  return rt::launch_cluster(hopper_probe::multicast_kernel, rt::Grid(2), rt::Grid(kThreads), 2,
                            hopper_probe::kSmemBytes, nullptr, map, out, status);
}

int launch_wgmma_probe(const std::uint16_t* a, const std::uint16_t* b, Half16 type, const Descriptors& d, float* out,
                       int* status) {
  if (const int e = device_error()) return e;
  const bool bf16 = type == Half16::bf16;
  const hopper::TmaElement element = bf16 ? hopper::TmaElement::kBF16 : hopper::TmaElement::kF16;
  hopper::TmaMap map_a{};
  hopper::TmaMap map_b{};
  if (const int e = encode(&map_a, a, 64, 64, 64, element)) return e;
  if (const int e = encode(&map_b, b, kMmaN, 64, 64, element)) return e;
  return bf16 ? launch_mma<hopper::BF16>(map_a, map_b, d, out, status)
              : launch_mma<hopper::F16>(map_a, map_b, d, out, status);
}

}  // namespace gpubench::kernels::probe
