// examples/jax stand-in (not JAX's file): the FFI handler of lu_pivots_to_permutation.
#include "jaxlib/gpu/linalg_kernels.h"

#include <cstdint>

#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/gpu_kernel_helpers.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

namespace ffi = ::xla::ffi;
using S32 = ffi::Buffer<ffi::S32>;

ffi::Error LuPivotsToPermutationImpl(gpuStream_t stream, S32 pivots,
                                     ffi::Result<S32> permutation) {
  auto pdims = pivots.dimensions();
  auto qdims = permutation->dimensions();
  if (pdims.size() < 1 || pdims.size() != qdims.size()) {
    return InvalidArgument("lu_pivots_to_permutation: pivots and permutation "
                           "must have the same rank >= 1");
  }
  int64_t batch = 1;
  for (size_t i = 0; i + 1 < pdims.size(); ++i) {
    if (pdims[i] != qdims[i]) {
      return InvalidArgument("lu_pivots_to_permutation: batch dimensions differ");
    }
    batch *= pdims[i];
  }
  auto pivot_size = CastOrError<int32_t>(pdims.back(), "pivot size");
  auto permutation_size = CastOrError<int32_t>(qdims.back(), "permutation size");
  if (!pivot_size) return pivot_size.error();
  if (!permutation_size) return permutation_size.error();
  if (*pivot_size > *permutation_size) {
    return InvalidArgument("lu_pivots_to_permutation: more pivots than rows");
  }
  JAX_FFI_CHECK_GPU(LaunchLuPivotsToPermutation(
      stream, batch, *pivot_size, *permutation_size, pivots.typed_data(),
      permutation->typed_data()));
  return ffi::Error::Success();
}

}  // namespace
}  // namespace jax::JAX_GPU_NAMESPACE

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    LuPivotsToPermutation, jax::JAX_GPU_NAMESPACE::LuPivotsToPermutationImpl,
    xla::ffi::Ffi::Bind()
        .Ctx<xla::ffi::PlatformStream<gpuStream_t>>()
        .Arg<xla::ffi::Buffer<xla::ffi::S32>>()   // pivots
        .Ret<xla::ffi::Buffer<xla::ffi::S32>>());  // permutation
