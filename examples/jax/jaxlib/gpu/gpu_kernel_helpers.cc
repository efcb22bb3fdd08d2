// examples/jax stand-in (not JAX's file).
#include "jaxlib/gpu/gpu_kernel_helpers.h"

#include <string>

#include "absl/status/status.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

absl::Status Failed(const char* expr, const char* file, int line,
                    const std::string& what) {
  return absl::InternalError(std::string(expr) + " failed at " + file + ":" +
                             std::to_string(line) + ": " + what);
}

}  // namespace

std::string GpuErrorMessage(gpuError_t error, const char* expr, const char* file,
                            int line) {
  return std::string(expr) + " failed at " + file + ":" + std::to_string(line) +
         ": " + gpuGetErrorName(error) + " (" + gpuGetErrorString(error) + ")";
}

absl::Status AsStatus(gpuError_t error, const char* expr, const char* file, int line) {
  if (error == gpuSuccess) return absl::OkStatus();
  return absl::InternalError(GpuErrorMessage(error, expr, file, line));
}

// The vendor libraries' headers are not included here (this file links none of them):
// their status enums are plain ints whose 0 is success.
absl::Status AsStatus(gpublasStatus_t status, const char* expr, const char* file,
                      int line) {
  if (static_cast<int>(status) == 0) return absl::OkStatus();
  return Failed(expr, file, line, "BLAS status " + std::to_string(static_cast<int>(status)));
}

absl::Status AsStatus(gpusolverStatus_t status, const char* expr, const char* file,
                      int line) {
  if (static_cast<int>(status) == 0) return absl::OkStatus();
  return Failed(expr, file, line, "solver status " + std::to_string(static_cast<int>(status)));
}

absl::Status AsStatus(gpusparseStatus_t status, const char* expr, const char* file,
                      int line) {
  if (static_cast<int>(status) == 0) return absl::OkStatus();
  return Failed(expr, file, line, "sparse status " + std::to_string(static_cast<int>(status)));
}

}  // namespace jax::JAX_GPU_NAMESPACE
