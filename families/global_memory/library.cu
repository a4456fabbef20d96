// Library references for the device-memory family (declared in global_memory.h): Thrust copy and
// gather beside the hand-written copy and gather kernels, a CUB reduction beside the read-only
// kernel, and the device-side random permutation the gather and pointer-chase inputs use.
//
// Thrust algorithms run with thrust::cuda::par_nosync.on(stream): on the caller's stream and
// without the synchronization thrust::cuda::par adds after each algorithm, so they enqueue and
// return like every other launcher in global_memory.h (the caller times them with events).
// Thrust reports errors by throwing; the launchers turn that back into a cudaError_t.
#include <cuda_runtime.h>
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/gather.h>
#include <thrust/random.h>
#include <thrust/sequence.h>
#include <thrust/shuffle.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>

#include <cub/device/device_reduce.cuh>
#include <new>

#include "families/global_memory/global_memory.h"

namespace gpubench::kernels {
namespace {

/// Runs a Thrust call, mapping its exceptions to the cudaError_t the launchers return.
template <class F>
int thrust_call(F f) {
  try {
    f();
  } catch (const thrust::system_error& e) {
    const int code = e.code().value();
    return code != 0 ? code : static_cast<int>(cudaErrorUnknown);
  } catch (const std::bad_alloc&) {
    return cudaErrorMemoryAllocation;
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int thrust_copy(const float* in, float* out, std::size_t n, Stream stream) {
  if (in == nullptr || out == nullptr) return cudaErrorInvalidValue;
  return thrust_call([&] { thrust::copy(thrust::cuda::par_nosync.on(stream), in, in + n, out); });
}

int thrust_gather(const float* in, const std::uint32_t* idx, float* out, std::size_t n, Stream stream) {
  if (in == nullptr || idx == nullptr || out == nullptr) return cudaErrorInvalidValue;
  return thrust_call([&] { thrust::gather(thrust::cuda::par_nosync.on(stream), idx, idx + n, in, out); });
}

int cub_reduce_sum(const std::uint32_t* in, std::size_t n, std::uint32_t* out, void* temp, std::size_t* temp_bytes,
                   Stream stream) {
  if (temp_bytes == nullptr) return cudaErrorInvalidValue;
  return static_cast<int>(cub::DeviceReduce::Sum(temp, *temp_bytes, in, out, n, stream));
}

int random_permutation(std::uint32_t* idx, std::size_t n, std::uint64_t seed, Stream stream) {
  if (idx == nullptr) return cudaErrorInvalidValue;
  // default_random_engine (minstd_rand) takes a 32-bit seed: fold the high half in so that
  // seeds differing only there still give different permutations.
  const auto seed32 = static_cast<std::uint32_t>(seed ^ (seed >> 32));
  return thrust_call([&] {
    const auto policy = thrust::cuda::par_nosync.on(stream);
    thrust::sequence(policy, idx, idx + n, std::uint32_t{0});
    thrust::default_random_engine engine(seed32);
    thrust::shuffle(policy, idx, idx + n, engine);
  });
}

}  // namespace gpubench::kernels
