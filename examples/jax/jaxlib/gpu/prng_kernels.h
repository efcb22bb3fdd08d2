// examples/jax stand-in (not JAX's file): Threefry-2x32 on the GPU.
#ifndef JAXLIB_GPU_PRNG_KERNELS_H_
#define JAXLIB_GPU_PRNG_KERNELS_H_

#include <cstdint>

#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {

// For each i < n: (out0[i], out1[i]) = Threefry-2x32-20 of the counter
// (data0[i], data1[i]) under the key (key0[i], key1[i]). Enqueued on `stream`;
// returns the launch error.
gpuError_t LaunchThreefry2x32(gpuStream_t stream, const uint32_t* key0,
                              const uint32_t* key1, const uint32_t* data0,
                              const uint32_t* data1, uint32_t* out0,
                              uint32_t* out1, int64_t n);

}  // namespace jax::JAX_GPU_NAMESPACE

// FFI target "<prefix>_threefry2x32_ffi": 4 u32 operands, 2 u32 results, same size.
XLA_FFI_DECLARE_HANDLER_SYMBOL(Threefry2x32Ffi);

#endif  // JAXLIB_GPU_PRNG_KERNELS_H_
