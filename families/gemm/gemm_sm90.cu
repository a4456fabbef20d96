// Launcher of the Hopper wgmma GEMM (declared in families/gemm/gemm.h; kernel body in
// hgemm_sm90.cuh). nvcc builds this file for sm_90a only (families/gemm/CMakeLists.txt): wgmma
// and setmaxnreg exist in no other target. Its host side builds the tensor maps (A, B, and C for
// the TMA-store epilogue), checks the device, opts into the shared memory and launches the
// persistent grid: without clusters one
// block per SM (at most one per tile); with 2 x 1 clusters (cudaLaunchKernelEx) one cluster per
// tile pair, at most as many as cudaOccupancyMaxActiveClusters says fit at once (asked once per
// device; half the SMs when it cannot say), so that every cluster is resident from the start.
#include <algorithm>

#include "families/gemm/gemm.h"
#include "families/gemm/hgemm_sm90.cuh"
#include "kernels/launch.cuh"

namespace gpubench::kernels {

namespace {

constexpr int kMaxDevices = 64;
bool wgmma_configured[kMaxDevices] = {};
int wgmma_resident_clusters[kMaxDevices] = {};  // of the pair kernel; 0 = unknown
int wgmma_entry_registers[kMaxDevices] = {};    // the fewest of the instantiations; 0 = unknown

// cudaErrorNoKernelImageForDevice: the answer of a device this sm_90a-only kernel cannot run on.
constexpr int kNoKernelImage = 209;
// cudaErrorInvalidKernelImage: a build whose kernel holds too few registers for its setmaxnreg
// targets (gemm.h hgemm_wgmma_register_error): launched, it would hang.
constexpr int kInvalidKernelImage = 200;

template <class T, int kClusterM, hgemm_sm90::Epilogue E>
int launch_typed(const std::uint16_t* a, const std::uint16_t* b, float* c, int m, int n, int k, hopper::TmaElement e,
                 int sms, int resident_clusters, Stream stream) {
  using namespace hgemm_sm90;
  hopper::TmaMap map_a{};
  hopper::TmaMap map_b{};
  hopper::TmaMap map_c{};
  int err = encode_operand_maps(&map_a, &map_b, a, b, m, n, k, e);
  if (err == 0 && E == Epilogue::kTmaStore) err = encode_result_map(&map_c, c, m, n);
  if (err != 0) return err;
  const int units = work_units<kClusterM>(m, n);
  if constexpr (kClusterM == 1) {
    const unsigned blocks = static_cast<unsigned>(units < sms ? units : sms);
    return rt::launch(hgemm_wgmma_kernel<T, 1, E>, rt::Grid(blocks), rt::Grid(kThreads), smem_bytes<E>(), stream, map_a,
                      map_b, map_c, c, m, n, k);
  } else {
    const int clusters = persistent_clusters(units, sms, kClusterM, resident_clusters);
    return rt::launch_cluster(hgemm_wgmma_kernel<T, kClusterM, E>,
                              rt::Grid(static_cast<unsigned>(clusters * kClusterM)), rt::Grid(kThreads), kClusterM,
                              smem_bytes<E>(), stream, map_a, map_b, map_c, c, m, n, k);
  }
}

/// The registers per thread of hgemm_wgmma_kernel<T, kClusterM, E>, 0 when the runtime cannot say.
template <class T, int kClusterM, hgemm_sm90::Epilogue E>
int registers_of() {
  int r = 0;
  return rt::kernel_registers(&r, hgemm_sm90::hgemm_wgmma_kernel<T, kClusterM, E>) == rt::kSuccess && r > 0 ? r : 0;
}

/// The fewest registers of the four instantiations with epilogue E (0: one cannot say).
template <hgemm_sm90::Epilogue E>
int fewest_registers() {
  using hgemm_sm90::kMaxClusterM;
  return std::min({registers_of<hopper::F16, 1, E>(), registers_of<hopper::BF16, 1, E>(),
                   registers_of<hopper::F16, kMaxClusterM, E>(), registers_of<hopper::BF16, kMaxClusterM, E>()});
}

template <class T, int kClusterM, hgemm_sm90::Epilogue E>
rt::Error allow_smem(rt::Error previous) {
  return previous != rt::kSuccess
             ? previous
             : rt::allow_dynamic_smem(hgemm_sm90::hgemm_wgmma_kernel<T, kClusterM, E>, hgemm_sm90::smem_bytes<E>());
}

/// Opts the four instantiations with epilogue E into their shared memory.
template <hgemm_sm90::Epilogue E>
rt::Error allow_smem_all(rt::Error previous) {
  using hgemm_sm90::kMaxClusterM;
  previous = allow_smem<hopper::F16, 1, E>(previous);
  previous = allow_smem<hopper::BF16, 1, E>(previous);
  previous = allow_smem<hopper::F16, kMaxClusterM, E>(previous);
  return allow_smem<hopper::BF16, kMaxClusterM, E>(previous);
}

template <class T, hgemm_sm90::Epilogue E>
int launch_with(const std::uint16_t* a, const std::uint16_t* b, float* c, int m, int n, int k, hopper::TmaElement e,
                WgmmaCluster cluster, int sms, int resident, Stream stream) {
  return cluster == WgmmaCluster::single
             ? launch_typed<T, 1, E>(a, b, c, m, n, k, e, sms, resident, stream)
             : launch_typed<T, hgemm_sm90::kMaxClusterM, E>(a, b, c, m, n, k, e, sms, resident, stream);
}

}  // namespace

int hgemm_wgmma_configure() {
  using hgemm_sm90::kMaxClusterM;
  int dev = 0;
  rt::Error err = rt::current_device(&dev);
  if (err != rt::kSuccess) return static_cast<int>(err);
  err = allow_smem_all<hgemm_sm90::Epilogue::kTmaStore>(err);
  err = allow_smem_all<hgemm_sm90::Epilogue::kDirect>(err);
  if (err != rt::kSuccess) return static_cast<int>(err);
  // Every instantiation holds one block per SM: one answer, for the one with the most shared
  // memory, serves all. A failure leaves 0 (unknown), and the launcher falls back to half the SMs.
  int clusters = 0;
  if (rt::max_active_clusters(
          &clusters, hgemm_sm90::hgemm_wgmma_kernel<hopper::F16, kMaxClusterM, hgemm_sm90::Epilogue::kTmaStore>,
          kMaxClusterM, hgemm_sm90::kThreads,
          hgemm_sm90::smem_bytes<hgemm_sm90::Epilogue::kTmaStore>()) != rt::kSuccess) {
    clusters = 0;
  }
  // The fewest registers ptxas gave an instantiation (0, unknown, when one cannot say).
  const int registers =
      std::min(fewest_registers<hgemm_sm90::Epilogue::kTmaStore>(), fewest_registers<hgemm_sm90::Epilogue::kDirect>());
  if (dev >= 0 && dev < kMaxDevices) {
    wgmma_resident_clusters[dev] = clusters;
    wgmma_entry_registers[dev] = registers;
    wgmma_configured[dev] = true;
  }
  return 0;
}

int hgemm_wgmma_entry_registers() {
  int dev = 0;
  if (rt::current_device(&dev) != rt::kSuccess || dev < 0 || dev >= kMaxDevices) return 0;
  if (!wgmma_configured[dev] && hgemm_wgmma_configure() != 0) return 0;
  return wgmma_entry_registers[dev];
}

int hgemm_wgmma_resident_clusters() {
  int dev = 0;
  if (rt::current_device(&dev) != rt::kSuccess || dev < 0 || dev >= kMaxDevices) return 0;
  return wgmma_resident_clusters[dev];
}

int launch_hgemm_wgmma(const std::uint16_t* a, const std::uint16_t* b, float* c, int m, int n, int k, Half16 type,
                       WgmmaCluster cluster, WgmmaEpilogue epilogue, Stream stream) {
  using hgemm_sm90::Epilogue;
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
  const int resident = dev >= 0 && dev < kMaxDevices ? wgmma_resident_clusters[dev] : 0;
  if (dev >= 0 && dev < kMaxDevices && !hgemm_wgmma_register_error(wgmma_entry_registers[dev]).empty()) {
    return kInvalidKernelImage;
  }
  const bool bf16 = type == Half16::bf16;
  const hopper::TmaElement e = bf16 ? hopper::TmaElement::kBF16 : hopper::TmaElement::kF16;
  if (epilogue == WgmmaEpilogue::tma_store) {
    return bf16 ? launch_with<hopper::BF16, Epilogue::kTmaStore>(a, b, c, m, n, k, e, cluster, sms, resident, stream)
                : launch_with<hopper::F16, Epilogue::kTmaStore>(a, b, c, m, n, k, e, cluster, sms, resident, stream);
  }
  return bf16 ? launch_with<hopper::BF16, Epilogue::kDirect>(a, b, c, m, n, k, e, cluster, sms, resident, stream)
              : launch_with<hopper::F16, Epilogue::kDirect>(a, b, c, m, n, k, e, cluster, sms, resident, stream);
}

}  // namespace gpubench::kernels
