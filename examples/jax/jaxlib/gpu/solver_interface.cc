// examples/jax stand-in (not JAX's file).
#include "jaxlib/gpu/solver_interface.h"

#include <rocsolver/rocsolver.h>

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "jaxlib/gpu/gpu_kernel_helpers.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE::solver {
namespace {

hipblasFillMode_t Fill(bool lower) { return lower ? HIPBLAS_FILL_MODE_LOWER : HIPBLAS_FILL_MODE_UPPER; }

}  // namespace

#define JAX_EXAMPLE_SOLVER(T, S)                                                          \
  template <>                                                                             \
  absl::StatusOr<int> GetrfBufferSize<T>(gpusolverDnHandle_t handle, int m, int n) {      \
    int lwork = 0;                                                                        \
    absl::Status s = JAX_AS_STATUS(                                                       \
        hipsolverDn##S##getrf_bufferSize(handle, m, n, nullptr, m, &lwork));              \
    if (!s.ok()) return s;                                                                \
    return lwork;                                                                         \
  }                                                                                       \
  template <>                                                                             \
  absl::Status Getrf<T>(gpusolverDnHandle_t handle, int m, int n, T* a, T* workspace,     \
                        int* ipiv, int* info) {                                           \
    return JAX_AS_STATUS(hipsolverDn##S##getrf(handle, m, n, a, m, workspace, ipiv, info)); \
  }                                                                                       \
  template <>                                                                             \
  absl::StatusOr<int> PotrfBufferSize<T>(gpusolverDnHandle_t handle, bool lower, int n) { \
    int lwork = 0;                                                                        \
    absl::Status s = JAX_AS_STATUS(                                                       \
        hipsolverDn##S##potrf_bufferSize(handle, Fill(lower), n, nullptr, n, &lwork));    \
    if (!s.ok()) return s;                                                                \
    return lwork;                                                                         \
  }                                                                                       \
  template <>                                                                             \
  absl::Status Potrf<T>(gpusolverDnHandle_t handle, bool lower, int n, T* a,              \
                        T* workspace, int lwork, int* info) {                             \
    return JAX_AS_STATUS(                                                                 \
        hipsolverDn##S##potrf(handle, Fill(lower), n, a, n, workspace, lwork, info));     \
  }                                                                                       \
  template <>                                                                             \
  absl::Status GetrfBatched<T>(gpublasHandle_t handle, int n, T** a, int* ipiv,           \
                               int* info, int batch) {                                    \
    return JAX_AS_STATUS(hipblas##S##getrfBatched(handle, n, a, n, ipiv, info, batch));   \
  }

JAX_EXAMPLE_SOLVER(float, S)
JAX_EXAMPLE_SOLVER(double, D)

#undef JAX_EXAMPLE_SOLVER

absl::StatusOr<std::string> RocsolverVersion() {
  size_t size = 0;
  if (rocsolver_get_version_string_size(&size) != rocblas_status_success || size == 0) {
    return absl::InternalError("rocsolver_get_version_string_size failed");
  }
  std::string version(size, '\0');
  if (rocsolver_get_version_string(version.data(), size) != rocblas_status_success) {
    return absl::InternalError("rocsolver_get_version_string failed");
  }
  version.resize(version.find('\0') == std::string::npos ? size : version.find('\0'));
  while (!version.empty() && version.back() == '.') version.pop_back();  // "3.32.0." without a tweak
  return version;
}

}  // namespace jax::JAX_GPU_NAMESPACE::solver
