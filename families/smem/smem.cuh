// Shared-memory bandwidth kernel: the __global__ body behind families/smem/smem.h.
//
// What it measures: the SMs' shared-memory read bandwidth ceiling. Every SM cycle the shared
// memory delivers one 128-byte wavefront (32 banks x 4 bytes, sm_70 and newer): about 33 TB/s
// on an H100 SXM (132 SMs x 1.98 GHz x 128 B). Each block fills its own shared array once from
// global memory, then reads it `passes` times with 16-byte loads (ld.shared.v4.u32 / LDS.128),
// bank-conflict free: a warp's load covers 32 consecutive vectors (512 B = 4 wavefronts, the
// minimum), each quarter-warp one 128-byte line.
// Bytes model (bytes read from shared memory per launch): blocks x passes x bytes_per_block
// (smem_bytes_read in smem.h). Global traffic (the fill: bytes_per_block per block, plus 4 bytes
// per thread written) is not counted: under 0.1 % of the shared traffic at the passes used.
// Variants: this hand-written kernel only (`kernel`); no library has a shared-memory reference.
//
// Compiled by nvcc through smem.cu and by the host compiler under the SIMT emulation
// (kernels/simt/simt.h) for the emulation tests, so: no CUDA-only syntax beyond the built-ins
// the shim provides, dynamic shared memory declared with GPUBENCH_DYNAMIC_SHARED (launched with
// launch_with_smem there), `#pragma unroll` spelled GPUBENCH_UNROLL, the kernel a template (one
// definition rule in both worlds).
//
// Shape of the read loop: in pass p thread t reads column smem_column(t, p) of every row (the
// access pattern of smem.h), kUnroll independent 16-byte loads per iteration before the first
// add, a remainder loop for rows not a multiple of kUnroll. Per 16-byte load the thread spends
// about two integer adds (smem_fold into one accumulator; IADD3 takes three operands) and the
// address is the pass's column plus an immediate row offset: the SM issues far faster than one
// LDS.128 per 4 cycles per SM, which is what the banks deliver. The column changes with the
// pass, so no load is loop-invariant; the result is exact (wrapping uint32 sums) and checked
// word for word against smem_reference (families/smem/reference.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "families/smem/smem.h"
#include "kernels/simt/simt.h"

namespace gpubench::kernels {

namespace smem_detail {

__device__ __forceinline__ std::uint32_t fold(uint4 v) { return smem_fold(v.x, v.y, v.z, v.w); }

}  // namespace smem_detail

/// Block b copies the `rows` x kSmemBlockThreads vectors starting at vector b x rows x 256 of
/// `in` (16-byte aligned) into dynamic shared memory (rows x 4 KiB, requested by the launch),
/// reads them `passes` times (pass p: column smem_column(t, p) of every row) and writes the
/// wrapping sum of smem_fold over everything thread t read to out[b x 256 + t].
/// blockDim.x must be kSmemBlockThreads (1-D blocks); rows >= 1; passes >= 0.
template <int kUnroll>
__global__ void __launch_bounds__(kSmemBlockThreads)
    smem_read_kernel(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out, unsigned rows, int passes) {
  GPUBENCH_DYNAMIC_SHARED(uint4, tile);
  const unsigned t = threadIdx.x;
  const unsigned vectors = rows * static_cast<unsigned>(kSmemBlockThreads);

  // Fill: this block's slice of `in`, coalesced 16-byte loads, conflict-free 16-byte stores
  // (rolled: it runs once, and unrolled it would only cost code size and registers).
  const uint4* src = reinterpret_cast<const uint4*>(in) + static_cast<std::size_t>(blockIdx.x) * vectors;
  GPUBENCH_NO_UNROLL
  for (unsigned i = t; i < vectors; i += static_cast<unsigned>(kSmemBlockThreads)) tile[i] = src[i];
  __syncthreads();

  const unsigned full_rows = rows - rows % static_cast<unsigned>(kUnroll);
  std::uint32_t sum = 0;
  GPUBENCH_NO_UNROLL
  for (int p = 0; p < passes; ++p) {
    unsigned r = 0;
    GPUBENCH_NO_UNROLL
    for (; r < full_rows; r += static_cast<unsigned>(kUnroll)) {
      uint4 v[kUnroll];
      GPUBENCH_UNROLL
      for (int u = 0; u < kUnroll; ++u) v[u] = tile[smem_element(t, p, r + static_cast<unsigned>(u))];
      GPUBENCH_UNROLL
      for (int u = 0; u < kUnroll; ++u) sum += smem_detail::fold(v[u]);
    }
    GPUBENCH_NO_UNROLL
    for (; r < rows; ++r) sum += smem_detail::fold(tile[smem_element(t, p, r)]);
  }
  out[static_cast<std::size_t>(blockIdx.x) * kSmemBlockThreads + t] = sum;
}

}  // namespace gpubench::kernels
