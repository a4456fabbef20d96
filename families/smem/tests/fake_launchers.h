// The fake shared-memory launchers' switches (fake_launchers.cpp).
#pragma once

namespace fake_smem {

/// The fake kernel flips one output word (a broken kernel).
extern bool corrupt;
/// launch_smem_read calls so far.
extern int launches;

}  // namespace fake_smem
