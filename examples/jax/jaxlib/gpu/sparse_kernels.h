// examples/jax stand-in (not JAX's file): _sparse's FFI handlers, over hipSPARSE.
#ifndef JAXLIB_GPU_SPARSE_KERNELS_H_
#define JAXLIB_GPU_SPARSE_KERNELS_H_

#include "absl/status/statusor.h"
#include "jaxlib/gpu/handle_pool.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {

using SparseHandle = HandlePool<gpusparseHandle_t>::Borrowed;

// A hipSPARSE handle bound to `stream` (created on first use; needs a GPU).
absl::StatusOr<SparseHandle> BorrowSparseHandle(gpuStream_t stream);

}  // namespace jax::JAX_GPU_NAMESPACE

// "hipsparse_gtsv2_ffi": tridiagonal solve without pivoting. dl, d, du f32/f64[..., m]
// (dl[0] and du[m-1] unused), b [..., m, n] -> x [..., m, n] (column-major per batch).
XLA_FFI_DECLARE_HANDLER_SYMBOL(Gtsv2Ffi);

#endif  // JAXLIB_GPU_SPARSE_KERNELS_H_
