// examples/jax stand-in (not JAX's file).
#include "jaxlib/gpu/sparse_kernels.h"

#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/gpu_kernel_helpers.h"
#include "jaxlib/gpu/handle_pool.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {

absl::StatusOr<SparseHandle> BorrowSparseHandle(gpuStream_t stream) {
  static auto* pool = new HandlePool<gpusparseHandle_t>();
  gpusparseHandle_t handle;
  if (!pool->TryTake(&handle)) {
    absl::Status created = JAX_AS_STATUS(hipsparseCreate(&handle));
    if (!created.ok()) return created;
  }
  SparseHandle borrowed(pool, handle);
  absl::Status bound = JAX_AS_STATUS(hipsparseSetStream(handle, stream));
  if (!bound.ok()) return bound;
  return std::move(borrowed);
}

namespace {

namespace ffi = ::xla::ffi;

// hipsparse<S>gtsv2_nopivot and its buffer size, by element type.
template <typename T>
struct Gtsv2;

template <>
struct Gtsv2<float> {
  static gpusparseStatus_t BufferSize(gpusparseHandle_t h, int m, int n, const float* dl,
                                      const float* d, const float* du, const float* b,
                                      size_t* size) {
    return hipsparseSgtsv2_nopivot_bufferSizeExt(h, m, n, dl, d, du, b, m, size);
  }
  static gpusparseStatus_t Solve(gpusparseHandle_t h, int m, int n, const float* dl,
                                 const float* d, const float* du, float* b, void* buffer) {
    return hipsparseSgtsv2_nopivot(h, m, n, dl, d, du, b, m, buffer);
  }
};

template <>
struct Gtsv2<double> {
  static gpusparseStatus_t BufferSize(gpusparseHandle_t h, int m, int n, const double* dl,
                                      const double* d, const double* du, const double* b,
                                      size_t* size) {
    return hipsparseDgtsv2_nopivot_bufferSizeExt(h, m, n, dl, d, du, b, m, size);
  }
  static gpusparseStatus_t Solve(gpusparseHandle_t h, int m, int n, const double* dl,
                                 const double* d, const double* du, double* b, void* buffer) {
    return hipsparseDgtsv2_nopivot(h, m, n, dl, d, du, b, m, buffer);
  }
};

template <typename T>
ffi::Error Gtsv2Typed(gpuStream_t stream, ffi::ScratchAllocator& scratch, int64_t batch,
                      int m, int n, const ffi::AnyBuffer& dl, const ffi::AnyBuffer& d,
                      const ffi::AnyBuffer& du, ffi::AnyBuffer* x) {
  auto handle = BorrowSparseHandle(stream);
  JAX_FFI_RETURN_IF_ERROR_STATUS(handle.status());
  const T* dlp = static_cast<const T*>(dl.untyped_data());
  const T* dp = static_cast<const T*>(d.untyped_data());
  const T* dup = static_cast<const T*>(du.untyped_data());
  T* xp = static_cast<T*>(x->untyped_data());
  size_t size = 0;
  JAX_FFI_CHECK_GPU(Gtsv2<T>::BufferSize(handle->get(), m, n, dlp, dp, dup, xp, &size));
  auto buffer = scratch.Allocate(size > 0 ? size : 1, 256);
  if (!buffer) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "gtsv2: no scratch memory");
  for (int64_t b = 0; b < batch; ++b) {
    JAX_FFI_CHECK_GPU(Gtsv2<T>::Solve(handle->get(), m, n, dlp + b * m, dp + b * m,
                                      dup + b * m, xp + b * m * n, *buffer));
  }
  return ffi::Error::Success();
}

ffi::Error Gtsv2Impl(gpuStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer dl,
                     ffi::AnyBuffer d, ffi::AnyBuffer du, ffi::AnyBuffer b,
                     ffi::Result<ffi::AnyBuffer> x) {
  auto shape = SplitBatch2D(b.dimensions(), "gtsv2 right-hand side");
  if (!shape) return shape.error();
  for (const ffi::AnyBuffer* diagonal : {&dl, &d, &du}) {
    if (diagonal->element_type() != b.element_type() ||
        diagonal->element_count() != static_cast<size_t>(shape->batch * shape->rows)) {
      return InvalidArgument("gtsv2: the diagonals must be [..., m] of b's type");
    }
  }
  if (x->element_type() != b.element_type() || !(x->dimensions() == b.dimensions())) {
    return InvalidArgument("gtsv2: x must match b");
  }
  auto m = CastOrError<int>(shape->rows, "gtsv2 m");
  auto n = CastOrError<int>(shape->cols, "gtsv2 n");
  if (!m) return m.error();
  if (!n) return n.error();
  if (x->untyped_data() != b.untyped_data()) {
    JAX_FFI_CHECK_GPU(gpuMemcpyAsync(x->untyped_data(), b.untyped_data(), b.size_bytes(),
                                     gpuMemcpyDeviceToDevice, stream));
  }
  switch (b.element_type()) {
    case ffi::F32:
      return Gtsv2Typed<float>(stream, scratch, shape->batch, *m, *n, dl, d, du, &*x);
    case ffi::F64:
      return Gtsv2Typed<double>(stream, scratch, shape->batch, *m, *n, dl, d, du, &*x);
    default:
      return InvalidArgument("gtsv2: this stand-in supports f32 and f64");
  }
}

}  // namespace
}  // namespace jax::JAX_GPU_NAMESPACE

XLA_FFI_DEFINE_HANDLER_SYMBOL(Gtsv2Ffi, jax::JAX_GPU_NAMESPACE::Gtsv2Impl,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::PlatformStream<gpuStream_t>>()
                                  .Ctx<xla::ffi::ScratchAllocator>()
                                  .Arg<xla::ffi::AnyBuffer>()   // dl
                                  .Arg<xla::ffi::AnyBuffer>()   // d
                                  .Arg<xla::ffi::AnyBuffer>()   // du
                                  .Arg<xla::ffi::AnyBuffer>()   // b
                                  .Ret<xla::ffi::AnyBuffer>());  // x
