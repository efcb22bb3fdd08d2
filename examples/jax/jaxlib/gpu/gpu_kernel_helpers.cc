// examples/jax stand-in (not JAX's file).
#include "jaxlib/gpu/gpu_kernel_helpers.h"

#include <string>

namespace jax::JAX_GPU_NAMESPACE {

std::string GpuErrorMessage(gpuError_t error, const char* expr, const char* file,
                            int line) {
  return std::string(expr) + " failed at " + file + ":" + std::to_string(line) +
         ": " + gpuGetErrorName(error) + " (" + gpuGetErrorString(error) + ")";
}

::xla::ffi::Error AsFfiError(gpuError_t error, const char* expr, const char* file,
                             int line) {
  if (error == gpuSuccess) return ::xla::ffi::Error::Success();
  return ::xla::ffi::Error::Internal(GpuErrorMessage(error, expr, file, line));
}

}  // namespace jax::JAX_GPU_NAMESPACE
