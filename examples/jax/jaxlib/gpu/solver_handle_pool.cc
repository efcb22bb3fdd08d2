// examples/jax stand-in (not JAX's file).
#include "jaxlib/gpu/solver_handle_pool.h"

#include <utility>

#include "absl/status/statusor.h"
#include "jaxlib/gpu/gpu_kernel_helpers.h"
#include "jaxlib/gpu/handle_pool.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {

absl::StatusOr<SolverHandle> BorrowSolverHandle(gpuStream_t stream) {
  static auto* pool = new HandlePool<gpusolverDnHandle_t>();
  gpusolverDnHandle_t handle;
  if (!pool->TryTake(&handle)) {
    absl::Status created = JAX_AS_STATUS(hipsolverDnCreate(&handle));
    if (!created.ok()) return created;
  }
  SolverHandle borrowed(pool, handle);
  absl::Status bound = JAX_AS_STATUS(hipsolverDnSetStream(handle, stream));
  if (!bound.ok()) return bound;
  return std::move(borrowed);
}

}  // namespace jax::JAX_GPU_NAMESPACE
