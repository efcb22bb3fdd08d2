// examples/jax stand-in (not JAX's file).
#include "jaxlib/gpu/blas_handle_pool.h"

#include <utility>

#include "absl/status/statusor.h"
#include "jaxlib/gpu/gpu_kernel_helpers.h"
#include "jaxlib/gpu/handle_pool.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {

absl::StatusOr<BlasHandle> BorrowBlasHandle(gpuStream_t stream) {
  static auto* pool = new HandlePool<gpublasHandle_t>();
  gpublasHandle_t handle;
  if (!pool->TryTake(&handle)) {
    absl::Status created = JAX_AS_STATUS(hipblasCreate(&handle));
    if (!created.ok()) return created;
  }
  BlasHandle borrowed(pool, handle);
  absl::Status bound = JAX_AS_STATUS(hipblasSetStream(handle, stream));
  if (!bound.ok()) return bound;
  return std::move(borrowed);
}

}  // namespace jax::JAX_GPU_NAMESPACE
