// examples/jax stand-in (not JAX's file): _solver's FFI handlers, over hipSOLVER and
// hipBLAS (solver_interface.h) and this tree's batch-pointer and Householder kernels.
#include "jaxlib/gpu/solver_kernels_ffi.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/blas_handle_pool.h"
#include "jaxlib/gpu/gpu_kernel_helpers.h"
#include "jaxlib/gpu/householder_kernels.h"
#include "jaxlib/gpu/make_batch_pointers.h"
#include "jaxlib/gpu/solver_handle_pool.h"
#include "jaxlib/gpu/solver_interface.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

namespace ffi = ::xla::ffi;

// Checks that `out` has the operand's type and shape, and copies the operand into it
// when they are not the same buffer (the solvers work in place).
ffi::Error CopyOperand(gpuStream_t stream, const ffi::AnyBuffer& a, ffi::AnyBuffer* out,
                       const char* what) {
  if (out->element_type() != a.element_type() || !(out->dimensions() == a.dimensions())) {
    return InvalidArgument(absl::StrFormat("%s: the result must match the operand", what));
  }
  if (out->untyped_data() != a.untyped_data()) {
    JAX_FFI_CHECK_GPU(gpuMemcpyAsync(out->untyped_data(), a.untyped_data(), a.size_bytes(),
                                     gpuMemcpyDeviceToDevice, stream));
  }
  return ffi::Error::Success();
}

template <typename T>
ffi::Error GetrfTyped(gpuStream_t stream, ffi::ScratchAllocator& scratch, MatrixBatch m,
                      T* a, int32_t* ipiv, int32_t* info) {
  auto rows = CastOrError<int>(m.rows, "getrf rows");
  auto cols = CastOrError<int>(m.cols, "getrf columns");
  if (!rows) return rows.error();
  if (!cols) return cols.error();
  auto handle = BorrowSolverHandle(stream);
  JAX_FFI_RETURN_IF_ERROR_STATUS(handle.status());
  auto lwork = solver::GetrfBufferSize<T>(handle->get(), *rows, *cols);
  JAX_FFI_RETURN_IF_ERROR_STATUS(lwork.status());
  auto work = scratch.Allocate(sizeof(T) * std::max(*lwork, 1));
  if (!work) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "getrf: no scratch memory");
  const int64_t k = std::min(m.rows, m.cols);
  for (int64_t b = 0; b < m.batch; ++b) {
    JAX_FFI_RETURN_IF_ERROR_STATUS(solver::Getrf<T>(handle->get(), *rows, *cols,
                                                    a + b * m.rows * m.cols,
                                                    static_cast<T*>(*work), ipiv + b * k,
                                                    info + b));
  }
  return ffi::Error::Success();
}

template <typename T>
ffi::Error GetrfBatchedTyped(gpuStream_t stream, MatrixBatch m, T* a, void** pointers,
                             int32_t* ipiv, int32_t* info) {
  auto n = CastOrError<int>(m.rows, "getrf_batched size");
  auto batch = CastOrError<int>(m.batch, "getrf_batched batch");
  if (!n) return n.error();
  if (!batch) return batch.error();
  JAX_FFI_CHECK_GPU(MakeBatchPointersAsync(stream, a, pointers, m.batch,
                                           static_cast<int64_t>(sizeof(T)) * m.rows * m.cols));
  auto handle = BorrowBlasHandle(stream);
  JAX_FFI_RETURN_IF_ERROR_STATUS(handle.status());
  JAX_FFI_RETURN_IF_ERROR_STATUS(solver::GetrfBatched<T>(
      handle->get(), *n, reinterpret_cast<T**>(pointers), ipiv, info, *batch));
  return ffi::Error::Success();
}

// A batch of square matrices goes through hipBLAS's batched getrf (one call for the
// batch, on device pointers made by MakeBatchPointersAsync), anything else through
// hipSOLVER's getrf one matrix at a time.
template <typename T>
ffi::Error GetrfDispatch(gpuStream_t stream, ffi::ScratchAllocator& scratch, MatrixBatch m,
                         T* a, int32_t* ipiv, int32_t* info) {
  if (m.rows == m.cols && m.batch > 1) {
    auto pointers = scratch.Allocate(sizeof(void*) * m.batch);
    if (!pointers) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "getrf: no scratch memory");
    return GetrfBatchedTyped<T>(stream, m, a, static_cast<void**>(*pointers), ipiv, info);
  }
  return GetrfTyped<T>(stream, scratch, m, a, ipiv, info);
}

ffi::Error GetrfImpl(gpuStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer a,
                     ffi::Result<ffi::AnyBuffer> lu, ffi::Result<ffi::Buffer<ffi::S32>> ipiv,
                     ffi::Result<ffi::Buffer<ffi::S32>> info) {
  auto m = SplitBatch2D(a.dimensions(), "getrf operand");
  if (!m) return m.error();
  if (ipiv->element_count() != static_cast<size_t>(m->batch * std::min(m->rows, m->cols)) ||
      info->element_count() != static_cast<size_t>(m->batch)) {
    return InvalidArgument("getrf: pivots must be [..., min(m, n)] and info [...]");
  }
  JAX_FFI_RETURN_IF_ERROR(CopyOperand(stream, a, &*lu, "getrf"));
  switch (a.element_type()) {
    case ffi::F32:
      return GetrfDispatch<float>(stream, scratch, *m, static_cast<float*>(lu->untyped_data()),
                               ipiv->typed_data(), info->typed_data());
    case ffi::F64:
      return GetrfDispatch<double>(stream, scratch, *m, static_cast<double*>(lu->untyped_data()),
                                ipiv->typed_data(), info->typed_data());
    default:
      return InvalidArgument("getrf: this stand-in supports f32 and f64");
  }
}

template <typename T>
ffi::Error PotrfTyped(gpuStream_t stream, ffi::ScratchAllocator& scratch, MatrixBatch m,
                      bool lower, T* a, int32_t* info) {
  auto n = CastOrError<int>(m.rows, "potrf size");
  if (!n) return n.error();
  auto handle = BorrowSolverHandle(stream);
  JAX_FFI_RETURN_IF_ERROR_STATUS(handle.status());
  auto lwork = solver::PotrfBufferSize<T>(handle->get(), lower, *n);
  JAX_FFI_RETURN_IF_ERROR_STATUS(lwork.status());
  auto work = scratch.Allocate(sizeof(T) * std::max(*lwork, 1));
  if (!work) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "potrf: no scratch memory");
  for (int64_t b = 0; b < m.batch; ++b) {
    JAX_FFI_RETURN_IF_ERROR_STATUS(solver::Potrf<T>(handle->get(), lower, *n,
                                                    a + b * m.rows * m.cols,
                                                    static_cast<T*>(*work), *lwork, info + b));
  }
  return ffi::Error::Success();
}

ffi::Error PotrfImpl(gpuStream_t stream, ffi::ScratchAllocator scratch, bool lower,
                     ffi::AnyBuffer a, ffi::Result<ffi::AnyBuffer> out,
                     ffi::Result<ffi::Buffer<ffi::S32>> info) {
  auto m = SplitBatch2D(a.dimensions(), "potrf operand");
  if (!m) return m.error();
  if (m->rows != m->cols) return InvalidArgument("potrf: matrices must be square");
  if (info->element_count() != static_cast<size_t>(m->batch)) {
    return InvalidArgument("potrf: info must be [...]");
  }
  JAX_FFI_RETURN_IF_ERROR(CopyOperand(stream, a, &*out, "potrf"));
  switch (a.element_type()) {
    case ffi::F32:
      return PotrfTyped<float>(stream, scratch, *m, lower,
                               static_cast<float*>(out->untyped_data()), info->typed_data());
    case ffi::F64:
      return PotrfTyped<double>(stream, scratch, *m, lower,
                                static_cast<double*>(out->untyped_data()), info->typed_data());
    default:
      return InvalidArgument("potrf: this stand-in supports f32 and f64");
  }
}

ffi::Error OrgqrImpl(gpuStream_t stream, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> tau,
                     ffi::Result<ffi::Buffer<ffi::F32>> q) {
  auto m = SplitBatch2D(a.dimensions(), "orgqr operand");
  if (!m) return m.error();
  if (m->cols != 1 || tau.element_count() != static_cast<size_t>(m->batch)) {
    return InvalidArgument(
        "orgqr: this stand-in forms a single reflector: a must be [..., m, 1] and tau [..., 1]");
  }
  if (q->element_count() != static_cast<size_t>(m->batch * m->rows * m->rows)) {
    return InvalidArgument("orgqr: the result must be [..., m, m]");
  }
  auto n = CastOrError<int32_t>(m->rows, "orgqr rows");
  if (!n) return n.error();
  JAX_FFI_CHECK_GPU(LaunchHouseholderReflector(stream, m->batch, *n, a.typed_data(),
                                               tau.typed_data(), q->typed_data()));
  return ffi::Error::Success();
}

}  // namespace

absl::StatusOr<std::string> RocsolverVersionForModule() { return solver::RocsolverVersion(); }

}  // namespace jax::JAX_GPU_NAMESPACE

XLA_FFI_DEFINE_HANDLER_SYMBOL(GetrfFfi, jax::JAX_GPU_NAMESPACE::GetrfImpl,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::PlatformStream<gpuStream_t>>()
                                  .Ctx<xla::ffi::ScratchAllocator>()
                                  .Arg<xla::ffi::AnyBuffer>()                // a
                                  .Ret<xla::ffi::AnyBuffer>()                // lu
                                  .Ret<xla::ffi::Buffer<xla::ffi::S32>>()    // ipiv
                                  .Ret<xla::ffi::Buffer<xla::ffi::S32>>());  // info

XLA_FFI_DEFINE_HANDLER_SYMBOL(PotrfFfi, jax::JAX_GPU_NAMESPACE::PotrfImpl,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::PlatformStream<gpuStream_t>>()
                                  .Ctx<xla::ffi::ScratchAllocator>()
                                  .Attr<bool>("lower")
                                  .Arg<xla::ffi::AnyBuffer>()                // a
                                  .Ret<xla::ffi::AnyBuffer>()                // factor
                                  .Ret<xla::ffi::Buffer<xla::ffi::S32>>());  // info

XLA_FFI_DEFINE_HANDLER_SYMBOL(OrgqrFfi, jax::JAX_GPU_NAMESPACE::OrgqrImpl,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::PlatformStream<gpuStream_t>>()
                                  .Arg<xla::ffi::Buffer<xla::ffi::F32>>()    // a
                                  .Arg<xla::ffi::Buffer<xla::ffi::F32>>()    // tau
                                  .Ret<xla::ffi::Buffer<xla::ffi::F32>>());  // q
