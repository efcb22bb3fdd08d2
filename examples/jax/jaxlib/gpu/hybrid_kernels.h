// examples/jax stand-in (not JAX's file): _hybrid's FFI handlers: device buffers
// copied to the host, solved there (jaxlib/cpu/lapack_kernels.h), copied back.
#ifndef JAXLIB_GPU_HYBRID_KERNELS_H_
#define JAXLIB_GPU_HYBRID_KERNELS_H_

#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

// "hiphybrid_geqp3": f32/f64[..., m, n] a and s32[..., n] jpvt -> (a as geqp3 leaves
// it, s32[..., n] jpvt, [..., min(m, n)] tau).
XLA_FFI_DECLARE_HANDLER_SYMBOL(kGeqp3Ffi);

#endif  // JAXLIB_GPU_HYBRID_KERNELS_H_
