// examples/jax stand-in (not JAX's file): solver FFI handlers.
#include "jaxlib/gpu/solver_kernels_ffi.h"

#include <algorithm>
#include <cstdint>

#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/gpu_kernel_helpers.h"
#include "jaxlib/gpu/make_batch_pointers.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

namespace ffi = ::xla::ffi;

ffi::Error GetrfImpl(ffi::AnyBuffer a, ffi::Result<ffi::AnyBuffer> lu,
                     ffi::Result<ffi::Buffer<ffi::S32>> pivots,
                     ffi::Result<ffi::Buffer<ffi::S32>> info) {
  switch (a.element_type()) {
    case ffi::F32: case ffi::F64: case ffi::C64: case ffi::C128: break;
    default: return InvalidArgument("getrf: unsupported element type");
  }
  auto m = SplitBatch2D(a.dimensions(), "getrf operand");
  if (!m) return m.error();
  if (lu->element_type() != a.element_type() ||
      !(lu->dimensions() == a.dimensions())) {
    return InvalidArgument("getrf: the LU result must match the operand");
  }
  if (pivots->element_count() != static_cast<size_t>(m->batch * std::min(m->rows, m->cols)) ||
      info->element_count() != static_cast<size_t>(m->batch)) {
    return InvalidArgument("getrf: pivots must be [..., min(m, n)] and info [...]");
  }
  return Unimplemented(JAX_GPU_PREFIX "_getrf_ffi", "hipSOLVER");
}

ffi::Error BatchPointersImpl(gpuStream_t stream, ffi::AnyBuffer a,
                             ffi::Result<ffi::BufferR1<ffi::U64>> pointers) {
  auto dims = a.dimensions();
  const int64_t batch = pointers->dimensions()[0];
  if (dims.size() < 1 || dims[0] != batch) {
    return InvalidArgument("batch_pointers: operand must be [b, ...] with b = " +
                           std::to_string(batch));
  }
  const int64_t stride = batch ? static_cast<int64_t>(a.size_bytes()) / batch : 0;
  JAX_FFI_CHECK_GPU(MakeBatchPointersAsync(
      stream, a.untyped_data(),
      reinterpret_cast<void**>(pointers->typed_data()), batch, stride));
  return ffi::Error::Success();
}

}  // namespace
}  // namespace jax::JAX_GPU_NAMESPACE

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    GetrfFfi, jax::JAX_GPU_NAMESPACE::GetrfImpl,
    xla::ffi::Ffi::Bind()
        .Arg<xla::ffi::AnyBuffer>()                // a
        .Ret<xla::ffi::AnyBuffer>()                // lu
        .Ret<xla::ffi::Buffer<xla::ffi::S32>>()    // pivots
        .Ret<xla::ffi::Buffer<xla::ffi::S32>>());  // info

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    BatchPointersFfi, jax::JAX_GPU_NAMESPACE::BatchPointersImpl,
    xla::ffi::Ffi::Bind()
        .Ctx<xla::ffi::PlatformStream<gpuStream_t>>()
        .Arg<xla::ffi::AnyBuffer>()                   // a
        .Ret<xla::ffi::BufferR1<xla::ffi::U64>>());  // pointers
