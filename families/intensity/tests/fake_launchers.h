// Counters of the fake intensity launchers (fake_launchers.cpp).
#pragma once

#include <cstddef>

namespace fake_intensity {

/// What the fake launchers saw.
struct Counters {
  int launches = 0;             ///< accepted launches
  std::size_t last_grid = 0;    ///< blocks of the last launch (intensity_grid_blocks)
  int unsupported_in_fake = 0;  ///< a supported k the fake does not instantiate (test bug)
};

/// The fake's counters.
Counters& counters();

}  // namespace fake_intensity
