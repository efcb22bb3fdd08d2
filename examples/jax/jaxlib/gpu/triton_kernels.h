// examples/jax stand-in (not JAX's file): Triton kernel call handler.
#ifndef JAXLIB_GPU_TRITON_KERNELS_H_
#define JAXLIB_GPU_TRITON_KERNELS_H_

#include "xla/ffi/api/ffi.h"

// "<prefix>_triton_kernel_call_ffi": launches the compiled Triton kernel named
// by the string attribute `kernel_name` on the (remaining) buffers, over a
// grid of `grid_x` (i64) blocks. Checks them, then reports that this tree has
// no loader for compiled Triton kernels.
XLA_FFI_DECLARE_HANDLER_SYMBOL(TritonKernelCallFfi);

#endif  // JAXLIB_GPU_TRITON_KERNELS_H_
