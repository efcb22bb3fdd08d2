// examples/jax stand-in (not JAX's file): Householder reflectors on the device.
#ifndef JAXLIB_GPU_HOUSEHOLDER_KERNELS_H_
#define JAXLIB_GPU_HOUSEHOLDER_KERNELS_H_

#include <cstdint>

#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE {

// For each of `batch` problems: h = I - tau * v v^T (n x n, column-major), the
// reflector geqrf leaves as (v, tau), with v[0] taken as 1.
gpuError_t LaunchHouseholderReflector(gpuStream_t stream, int64_t batch, int32_t n,
                                      const float* v, const float* tau, float* h);

}  // namespace jax::JAX_GPU_NAMESPACE

#endif  // JAXLIB_GPU_HOUSEHOLDER_KERNELS_H_
