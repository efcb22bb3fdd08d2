// Host-only C++ (compiled by the host compiler) that links the HIP kernel library and
// calls a launcher. Without a GPU the launch reports an error instead of crashing.
#include <cstdio>

#include "tests/rocm/hip/kernels.h"

int main() {
  int status = jax_rocm_test_scale(0, 2.0f, nullptr);
  std::printf("jax_rocm_test_scale -> hipError %d\n", status);
  return 0;
}
