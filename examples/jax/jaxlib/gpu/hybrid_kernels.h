// examples/jax stand-in (not JAX's file): hybrid (device data, host solver) handlers.
#ifndef JAXLIB_GPU_HYBRID_KERNELS_H_
#define JAXLIB_GPU_HYBRID_KERNELS_H_

#include "xla/ffi/api/ffi.h"

// "<prefix>_eig_real_ffi": eigenvalues of f32[..., n, n] -> (f32 real[..., n],
// f32 imag[..., n]). Checks its operands, then reports that no host LAPACK is
// linked into this tree.
XLA_FFI_DECLARE_HANDLER_SYMBOL(EigRealFfi);

#endif  // JAXLIB_GPU_HYBRID_KERNELS_H_
