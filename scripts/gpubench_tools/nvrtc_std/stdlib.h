// What CUDA 12.0's cuda.h takes from <stdlib.h> (size_t) for NVRTC (README.md).
#pragma once
#include <cstddef>
