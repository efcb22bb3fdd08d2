// examples/jax stand-in (not JAX's file): device arrays of per-matrix pointers,
// the form batched solver APIs take.
#ifndef JAXLIB_GPU_MAKE_BATCH_POINTERS_H_
#define JAXLIB_GPU_MAKE_BATCH_POINTERS_H_

#include <cstdint>

#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {

// Writes pointers[i] = buffer + i * stride_bytes for i < batch, on `stream`
// (`pointers` is device memory holding `batch` pointers). Returns the launch error.
gpuError_t MakeBatchPointersAsync(gpuStream_t stream, void* buffer,
                                  void** pointers, int64_t batch,
                                  int64_t stride_bytes);

}  // namespace jax::JAX_GPU_NAMESPACE

#endif  // JAXLIB_GPU_MAKE_BATCH_POINTERS_H_
