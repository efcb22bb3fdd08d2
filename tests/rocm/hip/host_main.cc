// Host-only C++ (compiled by the host compiler) that links the HIP kernel library and
// calls a launcher: hipErrorNoDevice (100) without an AMD GPU, hipSuccess with one.
#include <unistd.h>

#include <cstdio>

#include "tests/rocm/hip/kernels.h"

int main() {
  const bool has_gpu = access("/dev/kfd", F_OK) == 0;
  const int status = jax_rocm_test_scale(0, 2.0f, nullptr);
  std::printf("jax_rocm_test_scale -> hipError %d (%s)\n", status, has_gpu ? "GPU host" : "no /dev/kfd");
  return status == (has_gpu ? 0 : 100) ? 0 : 1;
}
