// examples/jax stand-in (not JAX's file): sparse FFI handlers.
#ifndef JAXLIB_GPU_SPARSE_KERNELS_H_
#define JAXLIB_GPU_SPARSE_KERNELS_H_

#include "xla/ffi/api/ffi.h"

// "<prefix>_csr_matvec_ffi": y = A x for A in CSR form (f32 data[nnz], s32
// indices[nnz], s32 indptr[rows + 1]), f32 x[cols] -> f32 y[rows]. Checks its
// operands, then reports that hipSPARSE is not linked into this tree.
XLA_FFI_DECLARE_HANDLER_SYMBOL(CsrMatvecFfi);

#endif  // JAXLIB_GPU_SPARSE_KERNELS_H_
