// examples/jax stand-in (not JAX's file): LU pivots to a permutation, on the GPU.
#ifndef JAXLIB_GPU_LINALG_KERNELS_H_
#define JAXLIB_GPU_LINALG_KERNELS_H_

#include <cstdint>

#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {

// For each of `batch` problems: starts from the identity permutation of size
// `permutation_size` and applies the row swaps i <-> pivots[i] for
// i < pivot_size (0-based pivots, as getrf's after conversion). Pivots outside
// [0, permutation_size) are skipped. Enqueued on `stream`.
gpuError_t LaunchLuPivotsToPermutation(gpuStream_t stream, int64_t batch,
                                       int32_t pivot_size,
                                       int32_t permutation_size,
                                       const int32_t* pivots,
                                       int32_t* permutation);

}  // namespace jax::JAX_GPU_NAMESPACE

// FFI target "<prefix>_lu_pivots_to_permutation": s32[..., k] -> s32[..., n].
XLA_FFI_DECLARE_HANDLER_SYMBOL(LuPivotsToPermutation);

#endif  // JAXLIB_GPU_LINALG_KERNELS_H_
