// examples/jax stand-in (not JAX's file): pointers to each matrix of a batch.
#ifndef JAXLIB_GPU_MAKE_BATCH_POINTERS_H_
#define JAXLIB_GPU_MAKE_BATCH_POINTERS_H_

#include <cstdint>

#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {

// Writes base + i * stride_bytes to pointers[i] for i < batch, on the device, for the
// batched BLAS and solver calls that take an array of matrix pointers.
gpuError_t MakeBatchPointersAsync(gpuStream_t stream, void* base, void** pointers,
                                  int64_t batch, int64_t stride_bytes);

}  // namespace jax::JAX_GPU_NAMESPACE

#endif  // JAXLIB_GPU_MAKE_BATCH_POINTERS_H_
