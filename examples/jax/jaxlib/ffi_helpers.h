// examples/jax stand-in (not JAX's file): helpers for XLA FFI handlers.
#ifndef JAXLIB_FFI_HELPERS_H_
#define JAXLIB_FFI_HELPERS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "jaxlib/kernel_helpers.h"
#include "xla/ffi/api/ffi.h"

namespace jax {

namespace ffi = ::xla::ffi;

// Returns from the enclosing handler when `expr` (an ffi::Error) failed.
#define JAX_FFI_RETURN_IF_ERROR(expr)                 \
  do {                                                \
    if (::xla::ffi::Error jax_ffi_error_ = (expr);    \
        jax_ffi_error_.failure()) {                   \
      return jax_ffi_error_;                          \
    }                                                 \
  } while (0)

// An absl::Status (what the vendor-library wrappers of jaxlib/gpu return) as an FFI
// error with the same code and message.
inline ffi::Error FromStatus(const absl::Status& status) {
  if (status.ok()) return ffi::Error::Success();
  return ffi::Error(static_cast<ffi::ErrorCode>(status.code()),
                    std::string(status.message()));
}

// Returns from the enclosing handler when `expr` (an absl::Status) failed.
#define JAX_FFI_RETURN_IF_ERROR_STATUS(expr) \
  JAX_FFI_RETURN_IF_ERROR(::jax::FromStatus(expr))

// The error of a target whose arguments were decoded and checked but that this
// tree cannot run (it does not link the vendor library the real one calls).
inline ffi::Error Unimplemented(std::string_view target, std::string_view missing) {
  return ffi::Error(ffi::ErrorCode::kUnimplemented,
                    "examples/jax: " + std::string(target) +
                        " has no device implementation (needs " +
                        std::string(missing) + ")");
}

inline ffi::Error InvalidArgument(std::string_view what) {
  return ffi::Error::InvalidArgument("examples/jax: " + std::string(what));
}

// `value` as `To`, or an InvalidArgument error naming `what`.
template <typename To, typename From>
ffi::ErrorOr<To> CastOrError(From value, std::string_view what) {
  if (auto cast = CheckedCast<To>(value)) return *cast;
  return ffi::Unexpected(InvalidArgument(std::string(what) + " = " +
                                         std::to_string(value) + " is out of range"));
}

// A stack of matrices: dimensions [..., rows, cols].
struct MatrixBatch {
  int64_t batch;
  int64_t rows;
  int64_t cols;
};

inline ffi::ErrorOr<MatrixBatch> SplitBatch2D(ffi::Span<const int64_t> dims,
                                              std::string_view what) {
  if (dims.size() < 2) {
    return ffi::Unexpected(InvalidArgument(std::string(what) +
                                           " must have rank >= 2"));
  }
  MatrixBatch m{1, dims[dims.size() - 2], dims[dims.size() - 1]};
  for (size_t i = 0; i + 2 < dims.size(); ++i) m.batch *= dims[i];
  return m;
}

}  // namespace jax

#endif  // JAXLIB_FFI_HELPERS_H_
