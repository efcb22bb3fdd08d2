// examples/jax stand-in (not JAX's file): hybrid FFI handlers.
#include "jaxlib/gpu/hybrid_kernels.h"

#include <cstddef>

#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

namespace ffi = ::xla::ffi;
using F32 = ffi::Buffer<ffi::F32>;

ffi::Error EigRealImpl(F32 a, ffi::Result<F32> real, ffi::Result<F32> imag) {
  auto m = SplitBatch2D(a.dimensions(), "eig operand");
  if (!m) return m.error();
  if (m->rows != m->cols) return InvalidArgument("eig: the matrix must be square");
  const size_t expected = static_cast<size_t>(m->batch * m->rows);
  if (real->element_count() != expected || imag->element_count() != expected) {
    return InvalidArgument("eig: eigenvalue results must be [..., n]");
  }
  return Unimplemented(JAX_GPU_PREFIX "_eig_real_ffi", "a host LAPACK");
}

}  // namespace
}  // namespace jax::JAX_GPU_NAMESPACE

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    EigRealFfi, jax::JAX_GPU_NAMESPACE::EigRealImpl,
    xla::ffi::Ffi::Bind()
        .Arg<xla::ffi::Buffer<xla::ffi::F32>>()    // a
        .Ret<xla::ffi::Buffer<xla::ffi::F32>>()    // real parts
        .Ret<xla::ffi::Buffer<xla::ffi::F32>>());  // imaginary parts
