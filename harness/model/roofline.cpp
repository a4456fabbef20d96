#include "harness/model/roofline.h"

#include <algorithm>

namespace gpubench {

double ridge_point(double peak_TFLOPS, double bandwidth_GBps) {
  if (peak_TFLOPS <= 0 || bandwidth_GBps <= 0) return 0.0;
  return peak_TFLOPS * 1e12 / (bandwidth_GBps * 1e9);
}

double attainable_TFLOPS(double intensity, double peak_TFLOPS, double bandwidth_GBps) {
  if (intensity <= 0 || peak_TFLOPS <= 0 || bandwidth_GBps <= 0) return 0.0;
  return std::min(peak_TFLOPS, bandwidth_GBps * intensity / 1e3);
}

}  // namespace gpubench
