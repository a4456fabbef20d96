// What CUDA 12.0's cuda.h takes from <stdint.h> for NVRTC (README.md).
#pragma once
#include <cstdint>
