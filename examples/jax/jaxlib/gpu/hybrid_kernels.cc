// examples/jax stand-in (not JAX's file).
#include "jaxlib/gpu/hybrid_kernels.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "jaxlib/cpu/lapack_kernels.h"
#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/gpu_kernel_helpers.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

namespace ffi = ::xla::ffi;

template <typename T>
ffi::Error Geqp3Typed(gpuStream_t stream, MatrixBatch shape, const void* a_in, void* a_out,
                      int32_t* jpvt_out, void* tau_out) {
  const int64_t per_matrix = shape.rows * shape.cols;
  const int64_t k = std::min(shape.rows, shape.cols);
  std::vector<T> a(shape.batch * per_matrix), tau(shape.batch * k);
  std::vector<int32_t> jpvt(shape.batch * shape.cols);
  JAX_FFI_CHECK_GPU(gpuMemcpyAsync(a.data(), a_in, a.size() * sizeof(T), gpuMemcpyDeviceToHost,
                                   stream));
  JAX_FFI_CHECK_GPU(gpuStreamSynchronize(stream));
  for (int64_t b = 0; b < shape.batch; ++b) {
    Geqp3<T>(shape.rows, shape.cols, a.data() + b * per_matrix, jpvt.data() + b * shape.cols,
             tau.data() + b * k);
  }
  JAX_FFI_CHECK_GPU(gpuMemcpyAsync(a_out, a.data(), a.size() * sizeof(T), gpuMemcpyHostToDevice,
                                   stream));
  JAX_FFI_CHECK_GPU(gpuMemcpyAsync(jpvt_out, jpvt.data(), jpvt.size() * sizeof(int32_t),
                                   gpuMemcpyHostToDevice, stream));
  JAX_FFI_CHECK_GPU(gpuMemcpyAsync(tau_out, tau.data(), tau.size() * sizeof(T),
                                   gpuMemcpyHostToDevice, stream));
  // The host vectors go away on return: wait for the copies out of them.
  JAX_FFI_CHECK_GPU(gpuStreamSynchronize(stream));
  return ffi::Error::Success();
}

ffi::Error Geqp3Impl(gpuStream_t stream, ffi::AnyBuffer a, ffi::Buffer<ffi::S32> jpvt,
                     ffi::Result<ffi::AnyBuffer> a_out,
                     ffi::Result<ffi::Buffer<ffi::S32>> jpvt_out,
                     ffi::Result<ffi::AnyBuffer> tau) {
  auto shape = SplitBatch2D(a.dimensions(), "geqp3 operand");
  if (!shape) return shape.error();
  const size_t columns = static_cast<size_t>(shape->batch * shape->cols);
  if (jpvt.element_count() != columns || jpvt_out->element_count() != columns) {
    return InvalidArgument("geqp3: jpvt must be [..., n]");
  }
  if (a_out->element_type() != a.element_type() || !(a_out->dimensions() == a.dimensions()) ||
      tau->element_type() != a.element_type() ||
      tau->element_count() != static_cast<size_t>(shape->batch * std::min(shape->rows, shape->cols))) {
    return InvalidArgument("geqp3: the results must be a's shape and [..., min(m, n)] of a's type");
  }
  switch (a.element_type()) {
    case ffi::F32:
      return Geqp3Typed<float>(stream, *shape, a.untyped_data(), a_out->untyped_data(),
                               jpvt_out->typed_data(), tau->untyped_data());
    case ffi::F64:
      return Geqp3Typed<double>(stream, *shape, a.untyped_data(), a_out->untyped_data(),
                                jpvt_out->typed_data(), tau->untyped_data());
    default:
      return InvalidArgument("geqp3: this stand-in supports f32 and f64");
  }
}

}  // namespace
}  // namespace jax::JAX_GPU_NAMESPACE

XLA_FFI_DEFINE_HANDLER_SYMBOL(kGeqp3Ffi, jax::JAX_GPU_NAMESPACE::Geqp3Impl,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::PlatformStream<gpuStream_t>>()
                                  .Arg<xla::ffi::AnyBuffer>()                // a
                                  .Arg<xla::ffi::Buffer<xla::ffi::S32>>()    // jpvt
                                  .Ret<xla::ffi::AnyBuffer>()                // a
                                  .Ret<xla::ffi::Buffer<xla::ffi::S32>>()    // jpvt
                                  .Ret<xla::ffi::AnyBuffer>());              // tau
