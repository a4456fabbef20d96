// The GEMM family on the host backend: none of its rows. The hand-written kernels are tensor-
// core and SIMT CUDA code, and the references are cuBLAS; a CPU GEMM would measure a different
// question (a BLAS library), so each row is declared unavailable with its reason.
#include "harness/family.h"

GPUBENCH_FAMILY(gemm)

namespace gpubench {

void families::gemm::add_host_workloads(WorkloadTable& table) {
  for (const char* key : {"compute/sgemm/kernel", "compute/sgemm/naive", "compute/hgemm/kernel", "compute/hgemm/wmma",
                          "compute/hgemm/wgmma", "compute/hgemm/wgmma_unclustered", "compute/hgemm/wgmma_direct_store",
                          "compute/bf16gemm/wgmma"})
    table.not_here(key, "a CUDA kernel");
  for (const char* key :
       {"compute/sgemm/cublas", "compute/hgemm/cublas", "compute/bf16gemm/cublas", "compute/fp8gemm/cublaslt"})
    table.not_here(key, "cuBLAS needs a GPU");
}

}  // namespace gpubench
