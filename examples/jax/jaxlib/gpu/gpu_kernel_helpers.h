// examples/jax stand-in (not JAX's file): GPU runtime and vendor-library errors as
// absl::Status (JAX_AS_STATUS), and as FFI errors in handlers (JAX_FFI_CHECK_GPU,
// which needs jaxlib/ffi_helpers.h where it is used).
#ifndef JAXLIB_GPU_GPU_KERNEL_HELPERS_H_
#define JAXLIB_GPU_GPU_KERNEL_HELPERS_H_

#include <string>

#include "absl/status/status.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {

// "hipMemcpy(...) failed at file.cc:12: hipErrorInvalidValue (invalid argument)".
std::string GpuErrorMessage(gpuError_t error, const char* expr, const char* file,
                            int line);

// OK for success, otherwise an Internal status naming the call, where it was made
// and the library's error. One overload per library the modules call.
absl::Status AsStatus(gpuError_t error, const char* expr, const char* file, int line);
absl::Status AsStatus(gpublasStatus_t status, const char* expr, const char* file,
                      int line);
absl::Status AsStatus(gpusolverStatus_t status, const char* expr, const char* file,
                      int line);
absl::Status AsStatus(gpusparseStatus_t status, const char* expr, const char* file,
                      int line);

}  // namespace jax::JAX_GPU_NAMESPACE

// The status of the runtime or library call `expr`.
#define JAX_AS_STATUS(expr) \
  ::jax::JAX_GPU_NAMESPACE::AsStatus((expr), #expr, __FILE__, __LINE__)

// Returns an ffi::Error from the enclosing handler when the call `expr` fails.
#define JAX_FFI_CHECK_GPU(expr) JAX_FFI_RETURN_IF_ERROR_STATUS(JAX_AS_STATUS(expr))

#endif  // JAXLIB_GPU_GPU_KERNEL_HELPERS_H_
