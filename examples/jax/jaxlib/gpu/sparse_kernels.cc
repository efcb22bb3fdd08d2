// examples/jax stand-in (not JAX's file): sparse FFI handlers.
#include "jaxlib/gpu/sparse_kernels.h"

#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

namespace ffi = ::xla::ffi;
using F32 = ffi::BufferR1<ffi::F32>;
using S32 = ffi::BufferR1<ffi::S32>;

ffi::Error CsrMatvecImpl(F32 data, S32 indices, S32 indptr, F32 x,
                         ffi::Result<F32> y) {
  if (data.element_count() != indices.element_count()) {
    return InvalidArgument("csr_matvec: data and indices differ in length");
  }
  if (indptr.element_count() != y->element_count() + 1) {
    return InvalidArgument("csr_matvec: indptr must have rows + 1 entries");
  }
  (void)x;  // any length: the number of columns is not checked without indices
  return Unimplemented(JAX_GPU_PREFIX "_csr_matvec_ffi", "hipSPARSE");
}

}  // namespace
}  // namespace jax::JAX_GPU_NAMESPACE

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    CsrMatvecFfi, jax::JAX_GPU_NAMESPACE::CsrMatvecImpl,
    xla::ffi::Ffi::Bind()
        .Arg<xla::ffi::BufferR1<xla::ffi::F32>>()   // data
        .Arg<xla::ffi::BufferR1<xla::ffi::S32>>()   // indices
        .Arg<xla::ffi::BufferR1<xla::ffi::S32>>()   // indptr
        .Arg<xla::ffi::BufferR1<xla::ffi::F32>>()   // x
        .Ret<xla::ffi::BufferR1<xla::ffi::F32>>());  // y
