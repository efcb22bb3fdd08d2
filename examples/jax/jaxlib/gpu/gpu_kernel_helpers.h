// examples/jax stand-in (not JAX's file): GPU runtime errors as FFI errors.
#ifndef JAXLIB_GPU_GPU_KERNEL_HELPERS_H_
#define JAXLIB_GPU_GPU_KERNEL_HELPERS_H_

#include <string>

#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {

// "hipMemcpy(...) failed at file.cc:12: hipErrorInvalidValue (invalid argument)".
std::string GpuErrorMessage(gpuError_t error, const char* expr, const char* file,
                            int line);

// Success for gpuSuccess, otherwise an Internal error carrying that message.
::xla::ffi::Error AsFfiError(gpuError_t error, const char* expr, const char* file,
                             int line);

}  // namespace jax::JAX_GPU_NAMESPACE

// Returns an ffi::Error from the enclosing handler when the GPU call `expr` fails.
#define JAX_FFI_CHECK_GPU(expr)                         \
  JAX_FFI_RETURN_IF_ERROR(::jax::JAX_GPU_NAMESPACE::AsFfiError( \
      (expr), #expr, __FILE__, __LINE__))

#endif  // JAXLIB_GPU_GPU_KERNEL_HELPERS_H_
