// examples/jax stand-in (not JAX's file): the Threefry-2x32 device kernel.
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cstdint>

#include "jaxlib/gpu/prng_kernels.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

__host__ __device__ inline uint32_t RotateLeft(uint32_t v, int bits) {
  return (v << bits) | (v >> (32 - bits));
}

// Threefry-2x32 with 20 rounds (Salmon et al., "Parallel Random Numbers: As
// Easy as 1, 2, 3", SC 2011): 5 groups of 4 mix rounds, a key injection after
// each group. Host-callable too, so it can be checked without a GPU.
__host__ __device__ inline void Threefry2x32(uint32_t k0, uint32_t k1,
                                             uint32_t& x0, uint32_t& x1) {
  const int rotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x0 += ks[0];
  x1 += ks[1];
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = RotateLeft(x1, rotations[(group % 2) * 4 + r]) ^ x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
}

__global__ void Threefry2x32Kernel(const uint32_t* key0, const uint32_t* key1,
                                   const uint32_t* data0, const uint32_t* data1,
                                   uint32_t* out0, uint32_t* out1, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    uint32_t x0 = data0[i], x1 = data1[i];
    Threefry2x32(key0[i], key1[i], x0, x1);
    out0[i] = x0;
    out1[i] = x1;
  }
}

}  // namespace

gpuError_t LaunchThreefry2x32(gpuStream_t stream, const uint32_t* key0,
                              const uint32_t* key1, const uint32_t* data0,
                              const uint32_t* data1, uint32_t* out0,
                              uint32_t* out1, int64_t n) {
  if (n <= 0) return gpuSuccess;
  constexpr int kThreads = 256;
  const int blocks =
      static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 4096));
  Threefry2x32Kernel<<<blocks, kThreads, 0, stream>>>(key0, key1, data0, data1,
                                                      out0, out1, n);
  return gpuGetLastError();
}

}  // namespace jax::JAX_GPU_NAMESPACE
