// Switches and counters of the fake cuBLAS and cuBLASLt (fake_cublas.cpp).
#pragma once

namespace fake_cublas {

struct State {
  bool fail = false;           ///< cublasGemmEx and cublasLtMatmul return CUBLAS_STATUS_EXECUTION_FAILED
  bool lt_no_algo = false;     ///< cublasLtMatmulAlgoGetHeuristic finds no algorithm (a device without FP8)
  int calls = 0;               ///< cublasGemmEx calls so far
  int default_pool_calls = 0;  ///< cublasGemmEx calls on cuBLAS's default workspace pool (not ours)
  int lt_calls = 0;            ///< cublasLtMatmul calls so far
  int lt_heuristic_calls = 0;  ///< cublasLtMatmulAlgoGetHeuristic calls so far
  int lt_live_objects = 0;     ///< cuBLASLt descriptors, layouts and preferences not destroyed yet
};

State& state();

}  // namespace fake_cublas
