// Where the sysfs fixture trees (tests/fixtures/sysfs, described in its README) are: CMake
// passes the path as GPUBENCH_SYSFS_FIXTURES to the tests that read them.
#pragma once

#include <string>

#ifndef GPUBENCH_SYSFS_FIXTURES
#error "GPUBENCH_SYSFS_FIXTURES must name tests/fixtures/sysfs"
#endif

namespace gpubench::pcie {

/// Root of the sysfs fixture trees; stands in for /sys in the PCIe link and NUMA probes.
inline const std::string kSysfsFixtures = GPUBENCH_SYSFS_FIXTURES;

}  // namespace gpubench::pcie
