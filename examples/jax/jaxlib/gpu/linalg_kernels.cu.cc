// examples/jax stand-in (not JAX's file): the pivots-to-permutation kernel.
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cstdint>

#include "jaxlib/gpu/linalg_kernels.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

// One thread per problem: the swaps are sequential within a problem.
__global__ void LuPivotsToPermutationKernel(int64_t batch, int32_t pivot_size,
                                            int32_t permutation_size,
                                            const int32_t* pivots,
                                            int32_t* permutation) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       b < batch; b += stride) {
    const int32_t* piv = pivots + b * pivot_size;
    int32_t* perm = permutation + b * permutation_size;
    for (int32_t i = 0; i < permutation_size; ++i) perm[i] = i;
    for (int32_t i = 0; i < pivot_size; ++i) {
      const int32_t j = piv[i];
      if (j < 0 || j >= permutation_size) continue;
      const int32_t tmp = perm[i];
      perm[i] = perm[j];
      perm[j] = tmp;
    }
  }
}

}  // namespace

gpuError_t LaunchLuPivotsToPermutation(gpuStream_t stream, int64_t batch,
                                       int32_t pivot_size,
                                       int32_t permutation_size,
                                       const int32_t* pivots,
                                       int32_t* permutation) {
  if (batch <= 0 || permutation_size <= 0) return gpuSuccess;
  constexpr int kThreads = 128;
  const int blocks = static_cast<int>(
      std::min<int64_t>((batch + kThreads - 1) / kThreads, 4096));
  LuPivotsToPermutationKernel<<<blocks, kThreads, 0, stream>>>(
      batch, pivot_size, permutation_size, pivots, permutation);
  return gpuGetLastError();
}

}  // namespace jax::JAX_GPU_NAMESPACE
