// The theoretical roofline: ridge points and attainable performance at an arithmetic intensity.
#pragma once

namespace gpubench {

/// Ridge point in FLOP/byte: where a compute roof of `peak_TFLOPS` meets a bandwidth diagonal
/// of `bandwidth_GBps`. 0 when either is unknown.
double ridge_point(double peak_TFLOPS, double bandwidth_GBps);

/// Attainable TFLOPS at `intensity` FLOP/byte under min(roof, bandwidth x intensity).
double attainable_TFLOPS(double intensity, double peak_TFLOPS, double bandwidth_GBps);

}  // namespace gpubench
