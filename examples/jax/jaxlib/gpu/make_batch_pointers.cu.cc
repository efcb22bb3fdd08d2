// examples/jax stand-in (not JAX's file): the batch-pointers kernel.
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cstdint>

#include "jaxlib/gpu/make_batch_pointers.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

__global__ void MakeBatchPointersKernel(char* base, void** pointers, int64_t batch,
                                        int64_t stride_bytes) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < batch;
       i += step) {
    pointers[i] = base + i * stride_bytes;
  }
}

}  // namespace

gpuError_t MakeBatchPointersAsync(gpuStream_t stream, void* base, void** pointers,
                                  int64_t batch, int64_t stride_bytes) {
  if (batch <= 0) return gpuSuccess;
  constexpr int kThreads = 128;
  const int blocks =
      static_cast<int>(std::min<int64_t>((batch + kThreads - 1) / kThreads, 1024));
  MakeBatchPointersKernel<<<blocks, kThreads, 0, stream>>>(static_cast<char*>(base), pointers,
                                                           batch, stride_bytes);
  return gpuGetLastError();
}

}  // namespace jax::JAX_GPU_NAMESPACE
