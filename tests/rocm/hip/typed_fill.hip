// One source, one compilation unit per element type (-D from rocm_library's local_defines),
// as XLA compiles its hipCUB sort kernels: the units must get their define and link together.
#include <hip/hip_runtime.h>

#if defined(FILL_TYPE_F32)
using Element = float;
#define FILL_ENTRY jax_rocm_test_fill_f32
#elif defined(FILL_TYPE_S32)
using Element = int;
#define FILL_ENTRY jax_rocm_test_fill_s32
#else
#error "compiled without its FILL_TYPE_* local define"
#endif

namespace {
__global__ void fill_kernel(int n, Element value, Element* x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value;
}
}  // namespace

extern "C" int FILL_ENTRY(int n, Element value, Element* x) {
  hipLaunchKernelGGL(fill_kernel, dim3((n + 255) / 256), dim3(256), 0, 0, n, value, x);
  return static_cast<int>(hipGetLastError());
}
