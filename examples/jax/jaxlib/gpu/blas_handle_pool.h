// examples/jax stand-in (not JAX's file): pooled hipBLAS handles.
#ifndef JAXLIB_GPU_BLAS_HANDLE_POOL_H_
#define JAXLIB_GPU_BLAS_HANDLE_POOL_H_

#include "absl/status/statusor.h"
#include "jaxlib/gpu/handle_pool.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {

using BlasHandle = HandlePool<gpublasHandle_t>::Borrowed;

// A hipBLAS handle bound to `stream` (created on first use; needs a GPU).
absl::StatusOr<BlasHandle> BorrowBlasHandle(gpuStream_t stream);

}  // namespace jax::JAX_GPU_NAMESPACE

#endif  // JAXLIB_GPU_BLAS_HANDLE_POOL_H_
