// Compiled by XLA's rocm_library name (this project's HIP rule): a kernel and a host launcher.
#include "rocm/include/hip/hip_runtime.h"

__global__ void Scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

hipError_t LaunchScale(float* x, float a, int n) {
  Scale<<<(n + 255) / 256, 256>>>(x, a, n);
  return hipGetLastError();
}
