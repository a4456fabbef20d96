// Hopper (sm_90) tensor-memory-accelerator loads and the mbarriers they complete on:
//   TmaMap                  the tensor map: CUtensorMap under nvcc, TensorMap2d (a host model of
//                           a 2-D tiled CUtensorMap) under the emulation
//   tma_load_2d             cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
//   tma_load_2d_multicast   the same with .multicast::cluster: one load lands in every block of a
//                           cta mask of the cluster, completing on each one's mbarrier
//   tma_store_2d            cp.async.bulk.tensor.2d.global.shared::cta.bulk_group: a box of shared
//                           memory into the tensor, elements outside it not written; with
//                           bulk_commit_group, bulk_wait_group_read<N> (the reads of shared memory
//                           done: the box may be written again) and bulk_wait_group<N> (done)
//   mbarrier_init, mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_try_wait_parity,
//   mbarrier_arrive_cluster (a remote arrive at a shared::cluster address, kernels/cluster.cuh),
//   fence_proxy_async_shared, fence_mbarrier_init, prefetch_tensormap
//   encode_tensor_map_2d    host side: a 2-D tiled tensor map of 16-bit elements (the driver's
//                           cuTensorMapEncodeTiled under nvcc, found through the runtime, so
//                           gpubench does not link libcuda; make_tensor_map_2d under the emulation)
// Under nvcc each wrapper is inline PTX, compiled for sm_90 and newer (other device targets
// trap). Under the host SIMT shim they are emulated from the PTX ISA ("Data Movement: cp.async.bulk.tensor",
// "Parallel Synchronization: mbarrier") and cuda.h's cuTensorMapEncodeTiled requirements:
//  - a load poisons its shared-memory box (0xFF bytes) when issued and lands, swizzled, with
//    elements outside the tensor zero-filled, when a thread next polls the mbarrier it completes
//    on; then it completes box bytes of transaction on that mbarrier. A kernel that reads a stage
//    before waiting on its barrier reads poison here. A multicast load does this in each block of
//    its mask, at the same block-relative offsets of the box and of the mbarrier (PTX ISA:
//    "the mbarrier signal is also multicast to the same CTA-relative offset"); each block's copy
//    lands when that block's mbarrier is polled. Issuing into a block that has exited aborts.
//  - a store joins its thread's open bulk async-group (kernels/simt/async_groups.h) and takes
//    effect - reads its box of shared memory, swizzled, and writes the elements inside the tensor
//    - only at the wait that retires its group, the latest moment the PTX ISA allows: a kernel
//    that writes the box again before waiting stores the new data here, as it might on a GPU.
//  - the mbarrier is the 8-byte shared-memory object of the PTX ISA; the emulation packs its
//    state into it: expected arrivals (bits 0-15), pending arrivals (16-31), transaction count
//    (signed, 32-52) and the current phase's parity (bit 63). A phase completes when its pending
//    arrivals and its transaction count both reach zero; then the parity flips and the arrival
//    count is re-armed.
// A failed try_wait gives the other threads of the block a turn (simt::spin_yield), so a
// warp-specialised pipeline runs as on a GPU: consumers poll full barriers that the producer's
// loads complete, the producer polls empty barriers that the consumers' arrivals complete. A wait
// that nothing can ever complete is reported as a deadlock.
#pragma once

#include <cstdint>

#include "kernels/cluster.cuh"  // map_shared_rank, cluster_shared_pointer
#include "kernels/wgmma.cuh"    // Swizzle, swizzle_address, shared_address

#if defined(__CUDACC__)
#include <cuda.h>  // CUtensorMap
#include <cuda_runtime_api.h>
#else
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "kernels/simt/async_groups.h"
#endif

namespace gpubench::kernels::hopper {

#if defined(__CUDACC__)

/// The tensor map the copies read (passed to the kernel as a __grid_constant__ parameter).
using TmaMap = CUtensorMap;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define GPUBENCH_TMA_UNAVAILABLE 1
#endif

/// mbarrier.init: arms the barrier for `arrivals` arrivals per phase, phase parity 0.
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, unsigned arrivals) {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(arrivals) : "memory");
#endif
}

/// mbarrier.arrive: one arrival on the current phase.
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
#endif
}

/// mbarrier.arrive.expect_tx: raises the current phase's transaction count by `bytes`, then arrives.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
#endif
}

/// mbarrier.try_wait.parity: true once the phase with parity `parity` has completed.
__device__ __forceinline__ bool mbarrier_try_wait_parity(std::uint64_t* bar, unsigned parity) {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
  return false;
#else
  unsigned done = 0;
  asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(shared_address(bar)), "r"(parity)
               : "memory");
  return done != 0;
#endif
}

/// mbarrier.arrive.shared::cluster: one arrival on the mbarrier at shared::cluster address
/// `cluster_bar` (map_shared_rank of a barrier: this block's or a peer's), with the default
/// semantics (.release.cta), as CUTLASS's ClusterBarrier::arrive(cta_id) does. Not
/// .release.cluster: ptxas puts MEMBAR.ALL.CTA, MEMBAR.ALL.GPU, ERRBAR and CGAERRBAR before that
/// arrive (seen in its SASS, nvcc 13.0), a GPU-scope fence per arrive that waits for the
/// thread's outstanding stores, and it would order nothing this arrive must order: a consumer
/// releases a stage its wgmma read, and those reads are complete once wgmma.wait_group returns
/// (completion, which no generic-proxy release covers anyway); it wrote nothing the peer reads.
__device__ __forceinline__ void mbarrier_arrive_cluster(std::uint32_t cluster_bar) {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_bar) : "memory");
#endif
}

/// fence.proxy.async.shared::cta: makes this thread's generic-proxy shared-memory writes visible
/// to the async proxy (TMA, wgmma) before it reads them.
__device__ __forceinline__ void fence_proxy_async_shared() {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

/// fence.mbarrier_init: makes this thread's mbarrier.init visible to the async proxy (the TMA
/// unit completing transactions on the barrier) before the barrier is used.
__device__ __forceinline__ void fence_mbarrier_init() {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

/// prefetch.tensormap: brings `map` (a __grid_constant__ parameter) into the descriptor cache, so
/// that a block's first TMA copy does not fetch it cold (CUTLASS's sm90 kernels do the same once
/// per block). A hint: no effect on what any copy does.
__device__ __forceinline__ void prefetch_tensormap(const TmaMap* map) {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
#endif
}

/// Loads the box at element coordinates (x = inner, y = outer) of `map` into shared memory at
/// `smem_dst` (128-byte aligned; aligned to the swizzle atom when swizzled), completing its bytes
/// on `bar`. One thread issues it.
__device__ __forceinline__ void tma_load_2d(void* smem_dst, const TmaMap* map, int x, int y, std::uint64_t* bar) {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          shared_address(smem_dst)),
      "l"(map), "r"(x), "r"(y), "r"(shared_address(bar))
      : "memory");
#endif
}

/// Like tma_load_2d, multicast: the box lands at the same block-relative offset as `smem_dst` in
/// every block of the cluster whose rank bit is set in `cta_mask`, and completes its bytes on the
/// mbarrier at `bar`'s offset in each of them. One thread issues it.
__device__ __forceinline__ void tma_load_2d_multicast(void* smem_dst, const TmaMap* map, int x, int y,
                                                      std::uint64_t* bar, std::uint16_t cta_mask) {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, "
      "%3}], [%4], %5;\n" ::"r"(shared_address(smem_dst)),
      "l"(map), "r"(x), "r"(y), "r"(shared_address(bar)), "h"(cta_mask)
      : "memory");
#endif
}

/// Stores the box at element coordinates (x = inner, y = outer) of `map` from shared memory at
/// `smem_src` (aligned as a load's destination), laid out as a load of the map would leave it;
/// elements outside the tensor are not written. Joins the issuing thread's open bulk async-group:
/// the box must not be written again before bulk_wait_group_read retires that group. The threads
/// that wrote the box issue fence_proxy_async_shared first, and one thread issues the store.
__device__ __forceinline__ void tma_store_2d(const TmaMap* map, const void* smem_src, int x, int y) {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(map), "r"(x),
               "r"(y), "r"(shared_address(smem_src))
               : "memory");
#endif
}

/// cp.async.bulk.commit_group: closes the calling thread's open bulk async-group.
__device__ __forceinline__ void bulk_commit_group() {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

/// cp.async.bulk.wait_group.read N: waits until at most N of the calling thread's bulk groups
/// still read shared memory (their boxes may then be written again).
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#endif
}

/// cp.async.bulk.wait_group N: waits until at most N of the calling thread's bulk groups are
/// incomplete (their writes to global memory done too).
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
#if defined(GPUBENCH_TMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

#if defined(GPUBENCH_TMA_UNAVAILABLE)
#undef GPUBENCH_TMA_UNAVAILABLE
#endif

#endif  // __CUDACC__

/// Element types of encode_tensor_map_2d.
enum class TmaElement { kF16, kBF16, kF32 };

/// Bytes of one element of `e`.
constexpr std::uint32_t tma_element_bytes(TmaElement e) { return e == TmaElement::kF32 ? 4u : 2u; }

#if defined(__CUDACC_RTC__)
// CUDA's runtime compiler builds device code alone (the CUDA 12 check of the kernel sources,
// scripts/cuda12_device_check.py): no host encoder.
#elif defined(__CUDACC__)

/// Encodes `map`: a 2-D tensor of `element`s at `global` (16-byte aligned), inner_dim elements
/// contiguous, outer_dim rows row_stride_bytes apart (a multiple of 16), loaded or stored in boxes
/// of box_inner x box_outer elements with `swizzle`; elements outside the tensor read as zero.
/// Returns 0, cudaErrorNotSupported when the driver has no cuTensorMapEncodeTiled, or
/// cudaErrorInvalidValue when it rejects the map.
inline int encode_tensor_map_2d(TmaMap* map, const void* global, std::uint64_t inner_dim, std::uint64_t outer_dim,
                                std::uint64_t row_stride_bytes, std::uint32_t box_inner, std::uint32_t box_outer,
                                TmaElement element, Swizzle swizzle) {
  using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  // Looked up once per process (a function-local static: thread-safe initialisation).
  static const Encode encode = []() -> Encode {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    // The entry point as introduced in CUDA 12.0 (the runtime resolves it in the installed
    // driver); runtimes before 12.5 only have the unversioned lookup.
#if CUDART_VERSION >= 12050
    const cudaError_t e =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
#else
    const cudaError_t e = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found);
#endif
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess) return nullptr;
    return reinterpret_cast<Encode>(fn);
  }();
  if (encode == nullptr) return cudaErrorNotSupported;
  const cuuint64_t dims[2] = {inner_dim, outer_dim};
  const cuuint64_t strides[1] = {row_stride_bytes};
  const cuuint32_t box[2] = {box_inner, box_outer};
  const cuuint32_t element_strides[2] = {1, 1};
  // CUtensorMapSwizzle numbers the modes NONE, 32B, 64B, 128B.
  const CUtensorMapSwizzle sw = swizzle == Swizzle::k128B  ? CU_TENSOR_MAP_SWIZZLE_128B
                                : swizzle == Swizzle::k64B ? CU_TENSOR_MAP_SWIZZLE_64B
                                : swizzle == Swizzle::k32B ? CU_TENSOR_MAP_SWIZZLE_32B
                                                           : CU_TENSOR_MAP_SWIZZLE_NONE;
  const CUresult r =
      encode(map,
             element == TmaElement::kF32    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
             : element == TmaElement::kBF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                            : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
             2, const_cast<void*>(global), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : cudaErrorInvalidValue;
}

#else  // host SIMT emulation

/// Host model of a 2-D tiled CUtensorMap (interleave none, element strides 1, out-of-bounds
/// elements filled with zero). Build it with make_tensor_map_2d.
struct TensorMap2d {
  const void* global_address = nullptr;  ///< element (0, 0)
  std::uint64_t dims[2] = {0, 0};        ///< extents in elements: dims[0] inner (contiguous), dims[1] outer
  std::uint64_t row_stride_bytes = 0;    ///< bytes between consecutive outer indices (globalStrides[0])
  std::uint32_t box[2] = {0, 0};         ///< box extents in elements, inner first
  std::uint32_t element_bytes = 0;       ///< 1, 2, 4 or 8
  Swizzle swizzle = Swizzle::kNone;      ///< shared-memory swizzle of the box

  /// Bytes one load moves into shared memory (the whole box, zero-filled parts included).
  std::uint32_t box_bytes() const { return box[0] * box[1] * element_bytes; }
};

/// The tensor map as the kernel sees it.
using TmaMap = TensorMap2d;

namespace detail {
[[noreturn]] inline void tma_abort(const char* what) {
  std::fprintf(stderr, "tma emulation: %s\n", what);
  std::abort();
}
}  // namespace detail

/// A 2-D tensor map, checked against cuTensorMapEncodeTiled's requirements (cuda.h): global
/// address 16-byte aligned; stride a multiple of 16 below 2^40; box extents 1..256; inner box
/// bytes a multiple of 16 and, when swizzled, at most the swizzle span. The emulation further
/// requires a swizzled box's inner bytes to equal the span (rows one span apart in shared memory).
inline TensorMap2d make_tensor_map_2d(const void* global_address, std::uint64_t inner_dim, std::uint64_t outer_dim,
                                      std::uint64_t row_stride_bytes, std::uint32_t box_inner, std::uint32_t box_outer,
                                      std::uint32_t element_bytes, Swizzle swizzle) {
  if ((reinterpret_cast<std::uintptr_t>(global_address) & 15u) != 0) detail::tma_abort("global address not 16-aligned");
  if (row_stride_bytes % 16 != 0 || row_stride_bytes >= (std::uint64_t{1} << 40)) {
    detail::tma_abort("global stride not a multiple of 16 below 2^40");
  }
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 && element_bytes != 8) {
    detail::tma_abort("element size not 1, 2, 4 or 8 bytes");
  }
  if (box_inner < 1 || box_inner > 256 || box_outer < 1 || box_outer > 256) detail::tma_abort("box extent not 1..256");
  if ((box_inner * element_bytes) % 16 != 0) detail::tma_abort("inner box bytes not a multiple of 16");
  if (swizzle != Swizzle::kNone && box_inner * element_bytes != swizzle_span_bytes(swizzle)) {
    detail::tma_abort("swizzled box whose inner bytes differ from the swizzle span (not emulated)");
  }
  if (row_stride_bytes < inner_dim * element_bytes) detail::tma_abort("global stride below a row's bytes");
  TensorMap2d m;
  m.global_address = global_address;
  m.dims[0] = inner_dim;
  m.dims[1] = outer_dim;
  m.row_stride_bytes = row_stride_bytes;
  m.box[0] = box_inner;
  m.box[1] = box_outer;
  m.element_bytes = element_bytes;
  m.swizzle = swizzle;
  return m;
}

/// Emulated mbarrier state, packed into the barrier's 8 bytes (see the file comment).
struct MbarrierState {
  unsigned expected = 0;  ///< arrivals per phase
  unsigned pending = 0;   ///< arrivals still missing in the current phase
  int tx = 0;             ///< transaction bytes still missing in the current phase (may dip below 0)
  unsigned parity = 0;    ///< parity of the current (incomplete) phase

  static MbarrierState load(const std::uint64_t* bar) {
    const std::uint64_t v = *bar;
    MbarrierState s;
    s.expected = static_cast<unsigned>(v & 0xFFFFu);
    s.pending = static_cast<unsigned>((v >> 16) & 0xFFFFu);
    const auto raw = static_cast<std::uint32_t>((v >> 32) & 0x1FFFFFu);
    s.tx = (raw & 0x100000u) != 0 ? static_cast<int>(raw) - (1 << 21) : static_cast<int>(raw);
    s.parity = static_cast<unsigned>(v >> 63);
    return s;
  }
  void store(std::uint64_t* bar) const {
    *bar = std::uint64_t{expected & 0xFFFFu} | (std::uint64_t{pending & 0xFFFFu} << 16) |
           (std::uint64_t{static_cast<std::uint32_t>(tx) & 0x1FFFFFu} << 32) | (std::uint64_t{parity & 1u} << 63);
  }
  /// Completes the phase when nothing is missing any more.
  void maybe_complete() {
    if (pending == 0 && tx == 0) {
      parity ^= 1u;
      pending = expected;
    }
  }
};

namespace detail {
/// The mbarriers initialised so far, by address, with the simt::detail::cluster_serial of the
/// block (cluster) that initialised them: a barrier counts as initialised only in that one.
inline std::unordered_map<const void*, unsigned long long>& mbarrier_inits() {
  static std::unordered_map<const void*, unsigned long long> inits;
  return inits;
}
inline bool mbarrier_initialized(const std::uint64_t* bar) {
  const auto it = mbarrier_inits().find(bar);
  return it != mbarrier_inits().end() && it->second == gpubench::simt::detail::cluster_serial();
}
/// Aborts when `bar` has not been initialised by the running block (cluster): an mbarrier
/// operation on one is undefined on a GPU (its 8 bytes hold whatever shared memory held).
inline void require_initialized(const std::uint64_t* bar) {
  if (!mbarrier_initialized(bar)) tma_abort("mbarrier used before mbarrier.init in this block");
}
}  // namespace detail

/// Emulated mbarrier.init.
inline void mbarrier_init(std::uint64_t* bar, unsigned arrivals) {
  if (arrivals < 1 || arrivals > 0xFFFFu) detail::tma_abort("mbarrier arrival count out of the emulated range");
  MbarrierState s;
  s.expected = arrivals;
  s.pending = arrivals;
  s.store(bar);
  detail::mbarrier_inits()[bar] = gpubench::simt::detail::cluster_serial();
}

/// Emulated mbarrier.expect_tx (the transaction half of arrive.expect_tx).
inline void mbarrier_expect_tx(std::uint64_t* bar, unsigned bytes) {
  detail::require_initialized(bar);
  MbarrierState s = MbarrierState::load(bar);
  s.tx += static_cast<int>(bytes);
  if (s.tx >= (1 << 20)) detail::tma_abort("mbarrier transaction count above 2^20 - 1");
  s.store(bar);
  gpubench::simt::note_progress();
}

/// Emulated mbarrier.complete_tx: `bytes` of the current phase's transactions arrived.
inline void mbarrier_complete_tx(std::uint64_t* bar, unsigned bytes) {
  detail::require_initialized(bar);
  MbarrierState s = MbarrierState::load(bar);
  s.tx -= static_cast<int>(bytes);
  if (s.tx <= -(1 << 20)) detail::tma_abort("mbarrier transaction count below -(2^20 - 1)");
  s.maybe_complete();
  s.store(bar);
  gpubench::simt::note_progress();
}

/// Emulated mbarrier.arrive.
inline void mbarrier_arrive(std::uint64_t* bar) {
  detail::require_initialized(bar);
  MbarrierState s = MbarrierState::load(bar);
  if (s.pending == 0) detail::tma_abort("mbarrier arrival beyond the expected count");
  --s.pending;
  s.maybe_complete();
  s.store(bar);
  gpubench::simt::note_progress();
}

/// Emulated mbarrier.arrive.expect_tx: expect_tx then arrive, as one operation.
inline void mbarrier_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  mbarrier_expect_tx(bar, bytes);
  mbarrier_arrive(bar);
}

namespace detail {

struct PendingTmaLoad {
  unsigned char* block_smem;  // the dynamic shared memory of the block it lands in
  std::uint32_t dst;          // block-relative shared address of the box
  TensorMap2d map;            // a copy: the kernel's parameter lives on the issuing thread's stack
  int x, y;
  std::uint64_t* bar;  // the mbarrier it completes on, in the same block
};

inline std::vector<PendingTmaLoad>& tma_pending() {
  static std::vector<PendingTmaLoad> pending;
  return pending;
}

/// Boxes landed with no element inside the tensor. The PTX ISA documents zero-filled elements of
/// a box partly outside; what the transaction count of a box wholly outside is, it does not say,
/// so the GEMM avoids them and its emulation tests check this count stays 0.
inline int& tma_boxes_wholly_outside() {
  static int count = 0;
  return count;
}

/// Writes the box at (x, y) to shared memory: box row r (outer), inner bytes b land at shared
/// address swizzle(dst + r * row_bytes + b); elements outside the tensor (coordinates negative or
/// past dims) are zero.
inline void land(const PendingTmaLoad& l) {
  const TensorMap2d& m = l.map;
  const std::uint32_t row_bytes = m.box[0] * m.element_bytes;
  const std::uint32_t base = l.dst;
  const auto* g = static_cast<const unsigned char*>(m.global_address);
  bool any_inside = false;
  for (std::uint32_t r = 0; r < m.box[1]; ++r) {
    const std::int64_t gy = static_cast<std::int64_t>(l.y) + r;
    for (std::uint32_t e = 0; e < m.box[0]; ++e) {
      const std::int64_t gx = static_cast<std::int64_t>(l.x) + e;
      const bool inside = gx >= 0 && gy >= 0 && static_cast<std::uint64_t>(gx) < m.dims[0] &&
                          static_cast<std::uint64_t>(gy) < m.dims[1];
      unsigned char* to = l.block_smem + swizzle_address(base + r * row_bytes + e * m.element_bytes, m.swizzle);
      any_inside = any_inside || inside;
      if (inside) {
        std::memcpy(
            to,
            g + static_cast<std::uint64_t>(gy) * m.row_stride_bytes + static_cast<std::uint64_t>(gx) * m.element_bytes,
            m.element_bytes);
      } else {
        std::memset(to, 0, m.element_bytes);
      }
    }
  }
  if (!any_inside) ++tma_boxes_wholly_outside();
}

/// Lands every pending load that completes on `bar`, in issue order.
inline void land_loads_of(std::uint64_t* bar) {
  auto& pending = tma_pending();
  std::vector<PendingTmaLoad> rest;
  std::vector<PendingTmaLoad> mine;
  for (const auto& l : pending) (l.bar == bar ? mine : rest).push_back(l);
  pending = std::move(rest);
  for (const auto& l : mine) {
    land(l);
    mbarrier_complete_tx(l.bar, l.map.box_bytes());
  }
}

}  // namespace detail

namespace detail {
/// Checks the destination's alignment and returns its block-relative shared address.
inline std::uint32_t tma_destination(const void* smem_dst, const TensorMap2d& map) {
  const std::uint32_t dst = shared_address(smem_dst);
  const std::uint32_t align = map.swizzle == Swizzle::kNone ? 128u : swizzle_atom_bytes(map.swizzle);
  if (dst % align != 0) tma_abort("shared destination not aligned (128 bytes, or the swizzle atom)");
  return dst;
}
}  // namespace detail

/// Emulated cp.async.bulk.tensor.2d ... mbarrier::complete_tx::bytes: poisons the destination box
/// now; the data lands (and its bytes complete on `bar`) when a thread next polls `bar`.
inline void tma_load_2d(void* smem_dst, const TmaMap* map, int x, int y, std::uint64_t* bar) {
  const std::uint32_t dst = detail::tma_destination(smem_dst, *map);
  (void)shared_address(bar);  // the barrier is in this block's shared memory too
  detail::require_initialized(bar);
  std::memset(smem_dst, 0xFF, map->box_bytes());
  detail::tma_pending().push_back({shared_pointer(0), dst, *map, x, y, bar});
  gpubench::simt::note_progress();
}

/// Emulated cp.async.bulk.tensor.2d ... .multicast::cluster: for every block of the cluster in
/// `cta_mask`, poisons the box at smem_dst's block-relative offset there now; each block's copy
/// lands (completing its bytes on the mbarrier at bar's offset in that block) when a thread next
/// polls that mbarrier. Aborts for an empty mask, a rank outside the cluster or a block that has
/// exited.
inline void tma_load_2d_multicast(void* smem_dst, const TmaMap* map, int x, int y, std::uint64_t* bar,
                                  std::uint16_t cta_mask) {
  const std::uint32_t dst = detail::tma_destination(smem_dst, *map);
  const std::uint32_t bar_offset = shared_address(bar);
  const unsigned blocks = gpubench::simt::detail::cluster_blocks();
  if (cta_mask == 0) detail::tma_abort("multicast with an empty cta mask");
  if ((static_cast<unsigned>(cta_mask) >> blocks) != 0)
    detail::tma_abort("multicast cta mask names a rank outside the cluster");
  for (unsigned rank = 0; rank < blocks; ++rank) {
    if ((cta_mask >> rank & 1u) == 0) continue;
    unsigned char* box = cluster_shared_pointer(map_shared_rank(smem_dst, rank));  // aborts for an exited block
    unsigned char* block_smem = box - dst;
    // Its bytes may complete on that block's barrier any time from now on: the barrier must be
    // initialised, and the initialisation visible to this block, before the copy is issued.
    if (!detail::mbarrier_initialized(reinterpret_cast<std::uint64_t*>(block_smem + bar_offset))) {
      detail::tma_abort(
          "multicast completing on an mbarrier its block has not initialised yet (make mbarrier.init "
          "visible to the cluster - fence.mbarrier_init and a cluster barrier - before a peer uses it)");
    }
    std::memset(box, 0xFF, map->box_bytes());
    detail::tma_pending().push_back(
        {block_smem, dst, *map, x, y, reinterpret_cast<std::uint64_t*>(block_smem + bar_offset)});
  }
  gpubench::simt::note_progress();
}

/// Emulated mbarrier.arrive.shared::cluster at a shared::cluster address.
inline void mbarrier_arrive_cluster(std::uint32_t cluster_bar) {
  mbarrier_arrive(reinterpret_cast<std::uint64_t*>(cluster_shared_pointer(cluster_bar)));
}

/// Emulated mbarrier.try_wait.parity: lands the loads pending on `bar`, then reports whether the
/// phase with parity `parity` has completed (the current phase's parity differs from it). A
/// failed poll yields to the other threads of the block (simt::spin_yield).
inline bool mbarrier_try_wait_parity(std::uint64_t* bar, unsigned parity) {
  detail::require_initialized(bar);
  detail::land_loads_of(bar);
  if (MbarrierState::load(bar).parity != (parity & 1u)) {
    gpubench::simt::note_progress();  // the caller moves on
    return true;
  }
  gpubench::simt::spin_yield();
  return false;
}

namespace detail {
struct PendingTmaStore {
  const unsigned char* block_smem;  // the dynamic shared memory of the issuing block
  std::uint32_t src;                // block-relative shared address of the box
  TensorMap2d map;                  // a copy, as for a load
  int x, y;
};

/// Reads the box from shared memory (swizzled as a load of the map writes it) and writes its
/// elements that lie inside the tensor; the others are not written.
inline void perform(const PendingTmaStore& st) {
  const TensorMap2d& m = st.map;
  const std::uint32_t row_bytes = m.box[0] * m.element_bytes;
  auto* g = static_cast<unsigned char*>(const_cast<void*>(m.global_address));
  for (std::uint32_t r = 0; r < m.box[1]; ++r) {
    const std::int64_t gy = static_cast<std::int64_t>(st.y) + r;
    for (std::uint32_t e = 0; e < m.box[0]; ++e) {
      const std::int64_t gx = static_cast<std::int64_t>(st.x) + e;
      if (gx < 0 || gy < 0 || static_cast<std::uint64_t>(gx) >= m.dims[0] ||
          static_cast<std::uint64_t>(gy) >= m.dims[1])
        continue;
      std::memcpy(
          g + static_cast<std::uint64_t>(gy) * m.row_stride_bytes + static_cast<std::uint64_t>(gx) * m.element_bytes,
          st.block_smem + swizzle_address(st.src + r * row_bytes + e * m.element_bytes, m.swizzle), m.element_bytes);
    }
  }
}

inline gpubench::simt::AsyncGroups<PendingTmaStore>& my_bulk_groups() {
  return gpubench::simt::async_groups_of<PendingTmaStore>(gpubench::simt::detail::resident_thread_slot());
}
}  // namespace detail

/// Emulated cp.async.bulk.tensor.2d.global.shared::cta.bulk_group: joins the calling thread's open
/// group; reads shared memory and writes the tensor when a wait retires the group.
inline void tma_store_2d(const TmaMap* map, const void* smem_src, int x, int y) {
  const std::uint32_t src = detail::tma_destination(smem_src, *map);
  detail::my_bulk_groups().open.push_back({shared_pointer(0), src, *map, x, y});
}

/// Emulated cp.async.bulk.commit_group.
inline void bulk_commit_group() { detail::my_bulk_groups().commit(); }

/// Emulated cp.async.bulk.wait_group.read N: performs the calling thread's oldest groups until at
/// most N remain (reading and writing at once: the emulation's latest moment for both).
template <int N>
void bulk_wait_group_read() {
  detail::my_bulk_groups().wait(N, [](const detail::PendingTmaStore& st) { detail::perform(st); });
}

/// Emulated cp.async.bulk.wait_group N (as bulk_wait_group_read).
template <int N>
void bulk_wait_group() {
  bulk_wait_group_read<N>();
}

/// Emulated fence.proxy.async.shared::cta (ordering only).
inline void fence_proxy_async_shared() {}

/// Emulated fence.mbarrier_init (ordering only).
inline void fence_mbarrier_init() {}

/// Emulated prefetch.tensormap (a cache hint: nothing to do).
inline void prefetch_tensormap(const TmaMap*) {}

/// Emulation of encode_tensor_map_2d: the host model of the map (make_tensor_map_2d, which
/// aborts on a map the driver would reject). Returns 0.
inline int encode_tensor_map_2d(TmaMap* map, const void* global, std::uint64_t inner_dim, std::uint64_t outer_dim,
                                std::uint64_t row_stride_bytes, std::uint32_t box_inner, std::uint32_t box_outer,
                                TmaElement element, Swizzle swizzle) {
  *map = make_tensor_map_2d(global, inner_dim, outer_dim, row_stride_bytes, box_inner, box_outer,
                            tma_element_bytes(element), swizzle);
  return 0;
}

/// Emulation only: loads issued and not yet landed (tests assert 0 after a kernel).
inline std::size_t tma_outstanding() { return detail::tma_pending().size(); }

/// Emulation only: stores issued and not yet performed by a wait (tests assert 0 after a kernel).
inline std::size_t tma_stores_outstanding() { return gpubench::simt::async_outstanding<detail::PendingTmaStore>(); }

/// Emulation only: forgets every pending load and store.
inline void tma_reset() {
  detail::tma_pending().clear();
  gpubench::simt::async_reset<detail::PendingTmaStore>();
}

#endif

}  // namespace gpubench::kernels::hopper
