// examples/jax stand-in (not JAX's file): the FFI handlers of _solver.
#ifndef JAXLIB_GPU_SOLVER_KERNELS_FFI_H_
#define JAXLIB_GPU_SOLVER_KERNELS_FFI_H_

#include <string>

#include "absl/status/statusor.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {
// rocSOLVER's version string, for _solver.rocsolver_version().
absl::StatusOr<std::string> RocsolverVersionForModule();
}  // namespace jax::JAX_GPU_NAMESPACE

// "hipsolver_getrf_ffi": f32/f64[..., m, n] -> (LU, s32[..., min(m, n)] pivots, s32[...] info); a batch
// of square matrices through hipBLAS's batched getrf.
XLA_FFI_DECLARE_HANDLER_SYMBOL(GetrfFfi);
// "hipsolver_potrf_ffi": f32/f64[..., n, n] -> (Cholesky factor, s32[...] info); attr lower.
XLA_FFI_DECLARE_HANDLER_SYMBOL(PotrfFfi);
// "hipsolver_orgqr_ffi": f32[..., m, 1] reflector and f32[..., 1] tau -> f32[..., m, m]
// (this stand-in forms one reflector, k = 1, with its Householder kernel).
XLA_FFI_DECLARE_HANDLER_SYMBOL(OrgqrFfi);

#endif  // JAXLIB_GPU_SOLVER_KERNELS_FFI_H_
