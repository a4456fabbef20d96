// The peer-to-peer launcher on the host stand-in for the CUDA runtime (fake_cuda_runtime.cpp):
// what it counted.
#pragma once

namespace fake_p2p {

/// What the fake peer-to-peer launcher counted.
struct State {
  int sm_copy_launches = 0;
  int last_sm_count = 0;    ///< the SM count the last launch was given
  int drop_on_device = -1;  ///< launches on this device do nothing (a kernel that never ran)
};

/// The fake's state.
State& state();

}  // namespace fake_p2p
