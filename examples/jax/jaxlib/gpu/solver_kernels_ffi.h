// examples/jax stand-in (not JAX's file): solver FFI handlers.
#ifndef JAXLIB_GPU_SOLVER_KERNELS_FFI_H_
#define JAXLIB_GPU_SOLVER_KERNELS_FFI_H_

#include "xla/ffi/api/ffi.h"

// "<prefix>_getrf_ffi": LU of f32/f64/c64/c128[..., m, n] -> (lu, s32 pivots
// [..., min(m, n)], s32 info [...]). Checks its operands, then reports that
// hipSOLVER is not linked into this tree.
XLA_FFI_DECLARE_HANDLER_SYMBOL(GetrfFfi);

// "<prefix>_batch_pointers_ffi": any[b, ...] -> u64[b], the address of each
// leading-dimension slice (runs make_batch_pointers on the device).
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchPointersFfi);

#endif  // JAXLIB_GPU_SOLVER_KERNELS_FFI_H_
