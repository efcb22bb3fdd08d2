// Prints what XLA's names resolve to; tests/bazel/test_local_config_rocm.py checks the output.
#include <cstdio>

#include "rocm/include/hip/hip_runtime_api.h"
#include "rocm/rocm_config.h"

int main() {
  std::printf("TF_ROCM_VERSION %d\n", TF_ROCM_VERSION);
  std::printf("TF_ROCM_TOOLKIT_PATH %s\n", TF_ROCM_TOOLKIT_PATH);
  std::printf("rocm_version_number %d\n", BUILD_DEFS_VERSION);
  std::printf("rocm_gpu_architectures %s\n", BUILD_DEFS_ARCHS);
  std::printf("is_rocm_configured %d rocm_hipblaslt %d select_threshold %d\n", BUILD_DEFS_CONFIGURED,
              BUILD_DEFS_HIPBLASLT, BUILD_DEFS_THRESHOLD);
  std::printf("get_rbe_amdgpu_pool %s using_hipcc %d\n", BUILD_DEFS_POOLS, USING_HIPCC);
#if defined(ROCM_COPTS_OPTS) && defined(IF_ROCM)
  std::printf("rocm_copts and if_rocm applied\n");
#endif
  int count = -1;
  hipError_t status = hipGetDeviceCount(&count);
  std::printf("hipGetDeviceCount -> %s\n", hipGetErrorName(status));
  return 0;
}
