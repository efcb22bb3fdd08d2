// A second kernel in its own file: changing one file must recompile only that file.
#include <hip/hip_runtime.h>

#include "tests/rocm/hip/kernels.h"

__global__ void scale_kernel(int n, float factor, float* x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

extern "C" int jax_rocm_test_scale(int n, float factor, float* x) {
  hipLaunchKernelGGL(scale_kernel, dim3((n + 255) / 256), dim3(256), 0, 0, n, factor, x);
  return static_cast<int>(hipGetLastError());
}
