// Calls into the HIP runtime, so that the library needs libamdhip64 at run time.
#include <hip/hip_runtime_api.h>

extern "C" int jax_rocm_rpath_probe() {
  int count = 0;
  return hipGetDeviceCount(&count) == hipSuccess ? count : -1;
}
