// examples/jax stand-in (not JAX's file): forms Householder reflectors.
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cstdint>

#include "jaxlib/gpu/householder_kernels.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

// One thread per element of the batch of n x n outputs.
__global__ void HouseholderReflectorKernel(int64_t batch, int32_t n, const float* v,
                                           const float* tau, float* h) {
  const int64_t per_problem = static_cast<int64_t>(n) * n;
  const int64_t total = batch * per_problem;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += step) {
    const int64_t b = k / per_problem;
    const int32_t col = static_cast<int32_t>((k % per_problem) / n);
    const int32_t row = static_cast<int32_t>(k % n);
    const float* vb = v + b * n;
    const float vi = row == 0 ? 1.0f : vb[row];
    const float vj = col == 0 ? 1.0f : vb[col];
    h[k] = (row == col ? 1.0f : 0.0f) - tau[b] * vi * vj;
  }
}

}  // namespace

gpuError_t LaunchHouseholderReflector(gpuStream_t stream, int64_t batch, int32_t n,
                                      const float* v, const float* tau, float* h) {
  const int64_t total = batch * static_cast<int64_t>(n) * n;
  if (total <= 0) return gpuSuccess;
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((total + kThreads - 1) / kThreads, 4096));
  HouseholderReflectorKernel<<<blocks, kThreads, 0, stream>>>(batch, n, v, tau, h);
  return gpuGetLastError();
}

}  // namespace jax::JAX_GPU_NAMESPACE
