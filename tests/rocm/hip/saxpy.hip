// A real HIP kernel, compiled for every requested amdgpu target by rocm_library.
#include <hip/hip_runtime.h>

#include "tests/rocm/hip/kernels.h"

__global__ void saxpy_kernel(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" int jax_rocm_test_saxpy(int n, float a, const float* x, float* y) {
  hipLaunchKernelGGL(saxpy_kernel, dim3((n + 255) / 256), dim3(256), 0, 0, n, a, x, y);
  return static_cast<int>(hipGetLastError());
}
