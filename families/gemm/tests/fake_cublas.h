// Switches and counters of the fake cuBLAS (fake_cublas.cpp).
#pragma once

namespace fake_cublas {

struct State {
  bool fail = false;  ///< cublasGemmEx returns CUBLAS_STATUS_EXECUTION_FAILED
  int calls = 0;      ///< cublasGemmEx calls so far
};

State& state();

}  // namespace fake_cublas
