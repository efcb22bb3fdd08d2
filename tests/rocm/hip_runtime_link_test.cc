// Calls the real HIP runtime from host-only C++. Without a GPU (as on this
// project's machines) hipGetDeviceCount reports "no device"; with one it counts.
#include <hip/hip_runtime_api.h>

#include <cstdio>

int main() {
  int runtime_version = 0;
  if (hipRuntimeGetVersion(&runtime_version) != hipSuccess || runtime_version <= 0) {
    std::printf("FAIL: hipRuntimeGetVersion gave %d\n", runtime_version);
    return 1;
  }
  int count = -1;
  hipError_t err = hipGetDeviceCount(&count);
  std::printf("HIP runtime %d (header %d.%d): hipGetDeviceCount -> %s, count %d\n", runtime_version,
              HIP_VERSION_MAJOR, HIP_VERSION_MINOR, hipGetErrorName(err), count);
  if (err == hipSuccess) return count >= 0 ? 0 : 1;
  // No GPU, no driver: the runtime must say so, not crash.
  return (err == hipErrorNoDevice || err == hipErrorInsufficientDriver) ? 0 : 1;
}
