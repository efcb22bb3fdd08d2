// examples/jax stand-in (not JAX's file): pooled hipSOLVER handles.
#ifndef JAXLIB_GPU_SOLVER_HANDLE_POOL_H_
#define JAXLIB_GPU_SOLVER_HANDLE_POOL_H_

#include "absl/status/statusor.h"
#include "jaxlib/gpu/handle_pool.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {

using SolverHandle = HandlePool<gpusolverDnHandle_t>::Borrowed;

// A hipSOLVER handle bound to `stream` (created on first use; needs a GPU).
absl::StatusOr<SolverHandle> BorrowSolverHandle(gpuStream_t stream);

}  // namespace jax::JAX_GPU_NAMESPACE

#endif  // JAXLIB_GPU_SOLVER_HANDLE_POOL_H_
