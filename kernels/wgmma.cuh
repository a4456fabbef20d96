// Hopper (sm_90a) warpgroup MMA from shared memory, and the shared-memory layout it reads:
//   Swizzle, swizzle_address      the 16-byte-chunk XOR patterns (none, 32B, 64B, 128B) that the
//                                 TMA writes and wgmma reads, as a pure function of the address
//   SmemDescriptor, encode/decode the 64-bit wgmma matrix descriptor
//   make_smem_desc                builds a descriptor for a shared-memory tile (device and host)
//   WgmmaLayout                   the f32 accumulator fragment layout of wgmma .m64nNk16
//   wgmma_m64k16_ss<N, T, MajorB> wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}, A K-major,
//                                 B K-major or MN-major (imm-trans-b) in shared memory
//   wgmma_fence, wgmma_commit_group, wgmma_wait_group<N>, wgmma_fence_operands
//   warpgroup_reg_alloc<R>, warpgroup_reg_dealloc<R>   setmaxnreg.{inc,dec}
// Under nvcc each wrapper is inline PTX, compiled only for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL; any
// other device target traps). Under the host SIMT shim (kernels/simt/simt.h) they are emulated
// from the PTX ISA ("Asynchronous Warpgroup Level Matrix Multiply-Accumulate": "Matrix Fragments
// for wgmma.mma_async.m64nNk16", "Shared Memory Matrix Layout", "Matrix Descriptor Format"), so a
// whole Hopper GEMM kernel can run on the CPU.
//
// The emulation is asynchronous like the hardware: wgmma_m64k16_ss records the operation and
// wgmma_wait_group<N> performs the oldest groups, reading shared memory then. A kernel that
// overwrites an operand stage or reads its accumulators before the wait covering the MMA gets a
// wrong result here as it would on a GPU. Each thread computes exactly its own accumulator
// elements from the shared-memory tiles decoded through the descriptors and the swizzle: A and B
// come from shared memory, so no register data needs to be exchanged between the 128 threads.
// Products of f16/bf16 values are exact in double; each element's 16 products and its old value
// are summed in double and rounded to float once (the tensor core's internal order and rounding
// are not documented, so results agree with the hardware to a few float ulps, not bit for bit).
#pragma once

#include <cstdint>
#include <type_traits>

#if !defined(__CUDACC__)
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/half_bits.h"
#include "kernels/simt/async_groups.h"
#include "kernels/simt/simt.h"
#endif

namespace gpubench::kernels::hopper {

/// Shared-memory swizzle modes, numbered as in the wgmma matrix descriptor (bits 62-63). The
/// CUtensorMapSwizzle enum numbers them differently (NONE 0, 32B 1, 64B 2, 128B 3).
enum class Swizzle : unsigned { kNone = 0, k128B = 1, k64B = 2, k32B = 3 };

/// Span of a swizzle row in bytes: the width within which 16-byte chunks are permuted (16 for
/// no swizzle: one chunk, nothing moves).
__host__ __device__ constexpr unsigned swizzle_span_bytes(Swizzle s) {
  return s == Swizzle::k128B ? 128u : s == Swizzle::k64B ? 64u : s == Swizzle::k32B ? 32u : 16u;
}

/// Bytes after which the swizzle pattern repeats (8 rows of the span; 1024 for 128B): a tile is
/// swizzled as the PTX ISA draws it when it starts on this boundary (descriptor base offset 0).
__host__ __device__ constexpr unsigned swizzle_atom_bytes(Swizzle s) { return 8u * swizzle_span_bytes(s); }

/// The shared-memory address at which the byte with (unswizzled) address `addr` lands: 128B
/// swizzle XORs address bits [4:6] with bits [7:9], 64B bits [4:5] with [7:8], 32B bit 4 with
/// bit 7 (CUTLASS's Swizzle<3,4,3>, <2,4,3>, <1,4,3>; cuda.h: "swizzle 16B chunks within a
/// 128B/64B/32B span"). An involution: applying it twice gives `addr` back.
__host__ __device__ constexpr std::uint32_t swizzle_address(std::uint32_t addr, Swizzle s) {
  const std::uint32_t mask = s == Swizzle::k128B ? 7u : s == Swizzle::k64B ? 3u : s == Swizzle::k32B ? 1u : 0u;
  return addr ^ (((addr >> 7) & mask) << 4);
}

/// Byte offset, from a tile start aligned to swizzle_atom_bytes(s), of 16-byte chunk `chunk` of
/// row `row` of a tile whose rows are one swizzle span long (the layout the TMA writes for a box
/// whose inner dimension is the span, and the K-major swizzle atom wgmma reads).
__host__ __device__ constexpr std::uint32_t swizzled_chunk_offset(unsigned row, unsigned chunk, Swizzle s) {
  return swizzle_address(row * swizzle_span_bytes(s) + 16u * chunk, s);
}

/// The fields of a wgmma shared-memory matrix descriptor, in bytes (PTX ISA "Matrix Descriptor
/// Format": bits 0-13 start address, 16-29 leading dimension byte offset, 32-45 stride dimension
/// byte offset, each encoded as (x & 0x3FFFF) >> 4; bits 49-51 matrix base offset; bits 62-63
/// swizzle mode). For K-major operands: LBO is the distance between the two 8x16-byte core
/// matrices along K (used without swizzle only; the swizzled K-major layouts keep K contiguous
/// within a row), SBO the distance between consecutive groups of 8 rows (M or N).
struct SmemDescriptor {
  std::uint32_t start_address = 0;        ///< shared-memory byte address of the tile (16-aligned)
  std::uint32_t leading_byte_offset = 0;  ///< LBO in bytes (multiple of 16)
  std::uint32_t stride_byte_offset = 0;   ///< SBO in bytes (multiple of 16)
  std::uint32_t base_offset = 0;          ///< 3-bit matrix base offset (0 when the tile is atom-aligned)
  Swizzle swizzle = Swizzle::kNone;       ///< swizzle mode
};

/// matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4, as the PTX ISA defines it.
__host__ __device__ constexpr std::uint64_t descriptor_encode(std::uint32_t x) { return (x & 0x3FFFFu) >> 4; }

/// The 64-bit descriptor of `d`.
__host__ __device__ constexpr std::uint64_t encode_descriptor(const SmemDescriptor& d) {
  return descriptor_encode(d.start_address) | (descriptor_encode(d.leading_byte_offset) << 16) |
         (descriptor_encode(d.stride_byte_offset) << 32) | (std::uint64_t{d.base_offset & 7u} << 49) |
         (std::uint64_t{static_cast<unsigned>(d.swizzle) & 3u} << 62);
}

/// The fields of a 64-bit descriptor (addresses and offsets back in bytes).
__host__ __device__ constexpr SmemDescriptor decode_descriptor(std::uint64_t desc) {
  SmemDescriptor d;
  d.start_address = static_cast<std::uint32_t>(desc & 0x3FFFu) << 4;
  d.leading_byte_offset = static_cast<std::uint32_t>((desc >> 16) & 0x3FFFu) << 4;
  d.stride_byte_offset = static_cast<std::uint32_t>((desc >> 32) & 0x3FFFu) << 4;
  d.base_offset = static_cast<std::uint32_t>((desc >> 49) & 7u);
  d.swizzle = static_cast<Swizzle>((desc >> 62) & 3u);
  return d;
}

/// Shared-memory byte address of element (row, k) of a K-major 16-bit operand (row = m of A or n
/// of B, k in 0..15) described by `d`: the canonical K-major layouts of the PTX ISA ("Shared
/// Memory Matrix Layout"), in 16-byte units ((8,rows/8),(chunk,2)) : ((span/16, SBO), (1, LBO))
/// without swizzle the core matrix rows are 16 bytes apart and the second K chunk is LBO away;
/// with a swizzle the rows are one span apart and the K chunks adjacent, then the swizzle is
/// applied to the address.
__host__ __device__ constexpr std::uint32_t k_major_element_address(const SmemDescriptor& d, unsigned row, unsigned k) {
  const unsigned chunk = k / 8u;
  const unsigned in_chunk = (k % 8u) * 2u;
  if (d.swizzle == Swizzle::kNone) {
    return d.start_address + (row / 8u) * d.stride_byte_offset + chunk * d.leading_byte_offset + (row % 8u) * 16u +
           in_chunk;
  }
  const std::uint32_t logical = d.start_address + (row / 8u) * d.stride_byte_offset +
                                (row % 8u) * swizzle_span_bytes(d.swizzle) + chunk * 16u + in_chunk;
  return swizzle_address(logical, d.swizzle);
}

/// Shared-memory byte address of element (mn, k) of an MN-major 16-bit operand (mn = n of B or
/// m of A, k in 0..15) described by `d`: the canonical MN-major layouts (CUTLASS's make_gmma_desc
/// draws them as ((T,W,m),(8,k)) : ((1,T,LBO),(W*T,SBO)) in elements, T = 8 per 16-byte chunk).
/// With a swizzle, one span of MN elements is contiguous, the 8 K rows of a core group are one
/// span apart, the next span of MN is LBO away and the next 8 K rows SBO away; without one, a
/// 16-byte chunk of 8 MN elements is contiguous, its 8 K rows 16 bytes apart, the next 8 MN
/// elements SBO away and the next 8 K rows LBO away (the two offsets swap roles).
__host__ __device__ constexpr std::uint32_t mn_major_element_address(const SmemDescriptor& d, unsigned mn, unsigned k) {
  if (d.swizzle == Swizzle::kNone) {
    return d.start_address + (mn / 8u) * d.stride_byte_offset + (k / 8u) * d.leading_byte_offset + (k % 8u) * 16u +
           (mn % 8u) * 2u;
  }
  const unsigned span = swizzle_span_bytes(d.swizzle);
  const unsigned per_span = span / 2u;  // 16-bit elements per swizzle row
  const std::uint32_t logical = d.start_address + (mn / per_span) * d.leading_byte_offset +
                                (k / 8u) * d.stride_byte_offset + (k % 8u) * span + (mn % per_span) * 2u;
  return swizzle_address(logical, d.swizzle);
}

/// Which dimension of an operand is contiguous in shared memory: K (the default, imm-trans = 0)
/// or M/N (imm-trans = 1, "transposed"; f16 and bf16 only).
enum class Major : int { kK = 0, kMN = 1 };

/// The accumulator fragment layout of wgmma .m64nNk16 with f32 accumulators (PTX ISA figure
/// "WGMMA .m64nNk16 register fragment layout for accumulator matrix D"): thread t of the
/// warpgroup (warp w = t/32, lane l) holds N/2 floats; element i is at row 16w + l/4 + 8*((i/2)%2),
/// column 8*(i/4) + 2*(l%4) + i%2. Within each 8-column slice this is mma.m16n8's C layout.
struct WgmmaLayout {
  /// Row of accumulator element i of warpgroup thread t (0..127).
  __host__ __device__ static constexpr int d_row(int t, int i) {
    return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2);
  }
  /// Column of accumulator element i of warpgroup thread t.
  __host__ __device__ static constexpr int d_col(int t, int i) { return 8 * (i / 4) + 2 * (t % 4) + i % 2; }
};

/// Input element types of wgmma_m64k16_ss.
struct F16 {};
struct BF16 {};

#if defined(__CUDACC__)

/// Shared-window byte address of a pointer into shared memory.
__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

#else

namespace detail {
[[noreturn]] inline void wgmma_abort(const char* what) {
  std::fprintf(stderr, "wgmma emulation: %s\n", what);
  std::abort();
}
/// The emulated shared window: the dynamic shared memory of the calling thread's block (the
/// window a Hopper GEMM uses; static __shared__ arrays are function-local statics outside any
/// window).
inline unsigned char* shared_window() {
  auto* base = static_cast<unsigned char*>(gpubench::simt::detail::dynamic_shared_memory());
  if (base == nullptr) wgmma_abort("shared address of a pointer outside dynamic shared memory (none was requested)");
  return base;
}
}  // namespace detail

/// Emulation: the shared-window address of `p` is its offset in the launch's dynamic shared memory.
inline std::uint32_t shared_address(const void* p) {
  const auto* base = detail::shared_window();
  const auto* q = static_cast<const unsigned char*>(p);
  if (q < base || q >= base + (1u << 18)) detail::wgmma_abort("pointer is not in dynamic shared memory");
  return static_cast<std::uint32_t>(q - base);
}

/// Emulation: the pointer at shared-window address `addr`.
inline unsigned char* shared_pointer(std::uint32_t addr) { return detail::shared_window() + addr; }

#endif

/// Descriptor of a shared-memory tile starting at `smem` (device and host).
__device__ __forceinline__ std::uint64_t make_smem_desc(const void* smem, std::uint32_t leading_byte_offset,
                                                        std::uint32_t stride_byte_offset, Swizzle swizzle) {
  SmemDescriptor d;
  d.start_address = shared_address(smem);
  d.leading_byte_offset = leading_byte_offset;
  d.stride_byte_offset = stride_byte_offset;
  d.swizzle = swizzle;
  return encode_descriptor(d);
}

#if defined(__CUDACC__)

// ---- device: inline PTX, sm_90a only ----

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GPUBENCH_WGMMA_UNAVAILABLE 1  // device pass for another target: the wrappers trap
#endif

/// wgmma.fence: orders this thread's accumulator register writes before the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
#if defined(GPUBENCH_WGMMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

/// wgmma.commit_group: closes the group of wgmma operations issued since the last commit.
__device__ __forceinline__ void wgmma_commit_group() {
#if defined(GPUBENCH_WGMMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

/// wgmma.wait_group N: waits until at most N committed groups are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
#if defined(GPUBENCH_WGMMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

namespace detail {
#if defined(GPUBENCH_WGMMA_UNAVAILABLE)
template <int R>
__device__ __forceinline__ void wgmma_trap(float (&)[R]) {
  __trap();
}
#define GPUBENCH_WGMMA_BODY(R, ...) detail::wgmma_trap(d)
#else
#define GPUBENCH_WGMMA_BODY(R, ...) __VA_ARGS__
#endif
// The inline PTX of m64n64k16 with inputs of TYPE ("f16" or "bf16").
#define GPUBENCH_WGMMA_M64N64K16(TYPE, TB)                                                                          \
  asm volatile(                                                                                                     \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                                  \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE                                                   \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, "                                                                  \
      "%10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, "             \
      "%29, %30, %31}, %32, %33, p, 1, 1, 0, " TB ";\n}\n"                                                          \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),      \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),     \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])                   \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d)                                                                      \
      : "memory")

// The inline PTX of m64n128k16 with inputs of TYPE ("f16" or "bf16").
#define GPUBENCH_WGMMA_M64N128K16(TYPE, TB)                                                                         \
  asm volatile(                                                                                                     \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                                  \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE                                                  \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "                                                        \
      "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "        \
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, "        \
      "%52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, " TB ";\n}\n"             \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),      \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),     \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),     \
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),     \
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),     \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),     \
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])                   \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d)                                                                      \
      : "memory")

// The inline PTX of m64n256k16 with inputs of TYPE ("f16" or "bf16").
#define GPUBENCH_WGMMA_M64N256K16(TYPE, TB)                                                                          \
  asm volatile(                                                                                                      \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                                                  \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE                                                   \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "                                                         \
      "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "         \
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, "         \
      "%52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, "         \
      "%72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "         \
      "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "         \
      "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "       \
      "%127}, %128, %129, p, 1, 1, 0, " TB ";\n}\n"                                                                  \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),  \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),       \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),      \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),      \
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),      \
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),      \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),      \
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),      \
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),      \
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),      \
        "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),      \
        "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),      \
        "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), \
        "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),            \
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]),            \
        "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]),            \
        "+f"(d[126]), "+f"(d[127])                                                                                   \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d)                                                                       \
      : "memory")

}  // namespace detail

// The shape, type and B's major mode go into the instruction's text: one asm statement each.
#define GPUBENCH_WGMMA_SHAPES(TYPE, TB)                                                    \
  do {                                                                                     \
    if constexpr (N == 64) GPUBENCH_WGMMA_BODY(32, GPUBENCH_WGMMA_M64N64K16(TYPE, TB));    \
    if constexpr (N == 128) GPUBENCH_WGMMA_BODY(64, GPUBENCH_WGMMA_M64N128K16(TYPE, TB));  \
    if constexpr (N == 256) GPUBENCH_WGMMA_BODY(128, GPUBENCH_WGMMA_M64N256K16(TYPE, TB)); \
  } while (0)

/// D (64 x N, f32, fragments as in WgmmaLayout) = A (64 x 16) * B (16 x N) + (scale_d ? D : 0),
/// A K-major and B `MajorB` in shared memory, described by `desc_a` and `desc_b`. All 128 threads
/// of a warpgroup call it together; the result is valid after the wgmma_wait_group covering it.
template <int N, class T, Major MajorB = Major::kK>
__device__ __forceinline__ void wgmma_m64k16_ss(float (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b,
                                                int scale_d) {
  static_assert(N == 64 || N == 128 || N == 256, "wrapped shapes: N = 64, 128, 256");
  static_assert(std::is_same_v<T, F16> || std::is_same_v<T, BF16>, "T is F16 or BF16");
  if constexpr (std::is_same_v<T, F16> && MajorB == Major::kK) GPUBENCH_WGMMA_SHAPES("f16", "0");
  if constexpr (std::is_same_v<T, F16> && MajorB == Major::kMN) GPUBENCH_WGMMA_SHAPES("f16", "1");
  if constexpr (std::is_same_v<T, BF16> && MajorB == Major::kK) GPUBENCH_WGMMA_SHAPES("bf16", "0");
  if constexpr (std::is_same_v<T, BF16> && MajorB == Major::kMN) GPUBENCH_WGMMA_SHAPES("bf16", "1");
}

/// Pins each accumulator register in place for the compiler (an empty asm that reads and writes
/// it): reads of the accumulators cannot move above a wgmma_wait_group, nor writes below a
/// wgmma issue, that this fence follows or precedes. The registers are asynchronous operands of
/// wgmma that the wait's own asm statement does not name.
template <int R>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/// setmaxnreg.inc: raises the calling warpgroup's per-thread register limit to R. Every thread of
/// the warpgroup executes it; it takes effect only in a kernel with a register cap at entry
/// (__launch_bounds__(threads, 1)).
template <int R>
__device__ __forceinline__ void warpgroup_reg_alloc() {
#if defined(GPUBENCH_WGMMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}

/// setmaxnreg.dec: lowers the calling warpgroup's per-thread register limit to R, returning the
/// rest to the SM's pool for the warpgroups that raise theirs.
template <int R>
__device__ __forceinline__ void warpgroup_reg_dealloc() {
#if defined(GPUBENCH_WGMMA_UNAVAILABLE)
  __trap();
#else
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}
#undef GPUBENCH_WGMMA_SHAPES
#undef GPUBENCH_WGMMA_BODY
#undef GPUBENCH_WGMMA_M64N64K16
#undef GPUBENCH_WGMMA_M64N128K16
#undef GPUBENCH_WGMMA_M64N256K16

#if defined(GPUBENCH_WGMMA_UNAVAILABLE)
#undef GPUBENCH_WGMMA_UNAVAILABLE
#endif

#else  // host SIMT emulation

/// bfloat16 bit pattern -> float (exact: bf16 is the upper half of a float).
inline float bf16_bits_to_float(std::uint16_t h) {
  const std::uint32_t bits = std::uint32_t{h} << 16;
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

namespace detail {

/// One issued, not yet performed wgmma of one thread.
struct PendingWgmma {
  float* d;
  int n;
  bool bf16;
  bool b_mn_major;
  std::uint64_t desc_a;
  std::uint64_t desc_b;
  int scale_d;
};

/// The calling thread's wgmma groups (kernels/simt/async_groups.h).
inline gpubench::simt::AsyncGroups<PendingWgmma>& wgmma_groups() {
  return gpubench::simt::async_groups_of<PendingWgmma>(gpubench::simt::detail::resident_thread_slot());
}

inline float operand_value(std::uint32_t addr, bool bf16) {
  std::uint16_t h = 0;
  std::memcpy(&h, shared_pointer(addr), 2);
  return bf16 ? bf16_bits_to_float(h) : half_bits_to_float(h);
}

/// Performs one wgmma for the calling thread: its N/2 accumulator elements, from shared memory now.
inline void perform(const PendingWgmma& op, unsigned warpgroup_thread) {
  const SmemDescriptor a = decode_descriptor(op.desc_a);
  const SmemDescriptor b = decode_descriptor(op.desc_b);
  const int t = static_cast<int>(warpgroup_thread);
  for (int i = 0; i < op.n / 2; ++i) {
    const int row = WgmmaLayout::d_row(t, i);
    const int col = WgmmaLayout::d_col(t, i);
    double sum = op.scale_d != 0 ? static_cast<double>(op.d[i]) : 0.0;
    for (unsigned k = 0; k < 16; ++k) {
      const float av = operand_value(k_major_element_address(a, static_cast<unsigned>(row), k), op.bf16);
      const std::uint32_t b_addr = op.b_mn_major ? mn_major_element_address(b, static_cast<unsigned>(col), k)
                                                 : k_major_element_address(b, static_cast<unsigned>(col), k);
      const float bv = operand_value(b_addr, op.bf16);
      sum += static_cast<double>(av) * bv;
    }
    op.d[i] = static_cast<float>(sum);
  }
}

inline void check_descriptor(std::uint64_t desc, const char* which) {
  const SmemDescriptor d = decode_descriptor(desc);
  if (d.base_offset != 0) wgmma_abort(which);  // a tile not aligned to its swizzle atom: not emulated
}

}  // namespace detail

/// Emulated wgmma.fence (ordering only: nothing to do on the host).
inline void wgmma_fence() {}

/// Emulated wgmma.mma_async: checks that the lanes of the calling warp agree on the operands and
/// that the warp belongs to a complete warpgroup, then records the operation for wgmma_wait_group.
template <int N, class T, Major MajorB = Major::kK>
inline void wgmma_m64k16_ss(float (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  static_assert(N == 64 || N == 128 || N == 256, "wrapped shapes: N = 64, 128, 256");
  static_assert(std::is_same_v<T, F16> || std::is_same_v<T, BF16>, "T is F16 or BF16");
  struct Operands {
    std::uint64_t a, b;
    int scale_d;
  };
  const auto all = gpubench::simt::warp_exchange(Operands{desc_a, desc_b, scale_d != 0 ? 1 : 0});
  for (const Operands& o : all) {
    if (o.a != desc_a || o.b != desc_b || o.scale_d != (scale_d != 0 ? 1 : 0)) {
      detail::wgmma_abort("lanes of a warp passed different descriptors or scale-d (or the warp is partial)");
    }
  }
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned t = gpubench::simt::linear_thread_id();
  if ((t / 128u) * 128u + 128u > threads) detail::wgmma_abort("wgmma from a thread outside a complete warpgroup");
  detail::check_descriptor(desc_a, "descriptor of A has a non-zero base offset (not emulated)");
  detail::check_descriptor(desc_b, "descriptor of B has a non-zero base offset (not emulated)");
  detail::wgmma_groups().open.push_back({d, N, std::is_same_v<T, BF16>, MajorB == Major::kMN, desc_a, desc_b, scale_d});
}

namespace detail {
/// setmaxnreg is .sync.aligned: every lane of the warp executes it with the same count.
inline void check_setmaxnreg(int r) {
  if (r < 24 || r > 256 || r % 8 != 0) wgmma_abort("setmaxnreg count outside 24..256 or not a multiple of 8");
  for (int o : gpubench::simt::warp_exchange(r)) {
    if (o != r) wgmma_abort("lanes of a warp passed different setmaxnreg counts (or the warp is partial)");
  }
}
}  // namespace detail

/// Emulated setmaxnreg.inc (registers are not modelled: checks the count and that the warp agrees).
template <int R>
inline void warpgroup_reg_alloc() {
  detail::check_setmaxnreg(R);
}

/// Emulated setmaxnreg.dec.
template <int R>
inline void warpgroup_reg_dealloc() {
  detail::check_setmaxnreg(R);
}

/// Emulated operand fence (compiler ordering only).
template <int R>
inline void wgmma_fence_operands(float (&)[R]) {}

/// Emulated wgmma.commit_group.
inline void wgmma_commit_group() { detail::wgmma_groups().commit(); }

/// Emulated wgmma.wait_group N: performs this thread's oldest committed groups, in issue order,
/// until at most N remain.
template <int N>
inline void wgmma_wait_group() {
  const unsigned t = gpubench::simt::linear_thread_id();
  detail::wgmma_groups().wait(N, [t](const detail::PendingWgmma& op) { detail::perform(op, t % 128u); });
}

/// Emulation only: wgmma operations of any thread not yet performed (tests assert 0 after a kernel).
inline std::size_t wgmma_outstanding() { return gpubench::simt::async_outstanding<detail::PendingWgmma>(); }

/// Emulation only: forgets every outstanding wgmma.
inline void wgmma_reset() { gpubench::simt::async_reset<detail::PendingWgmma>(); }

#endif

}  // namespace gpubench::kernels::hopper
