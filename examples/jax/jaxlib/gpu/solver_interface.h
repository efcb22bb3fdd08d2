// examples/jax stand-in (not JAX's file): typed wrappers over hipSOLVER, hipBLAS and
// rocSOLVER, so the handlers are written once for float and double.
#ifndef JAXLIB_GPU_SOLVER_INTERFACE_H_
#define JAXLIB_GPU_SOLVER_INTERFACE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jaxlib/gpu/vendor.h"

namespace jax::JAX_GPU_NAMESPACE::solver {

// getrf (LU with partial pivoting) of one column-major m x n matrix.
template <typename T>
absl::StatusOr<int> GetrfBufferSize(gpusolverDnHandle_t handle, int m, int n);
template <typename T>
absl::Status Getrf(gpusolverDnHandle_t handle, int m, int n, T* a, T* workspace,
                   int* ipiv, int* info);

// potrf (Cholesky) of one column-major n x n matrix; `lower` picks the triangle.
template <typename T>
absl::StatusOr<int> PotrfBufferSize(gpusolverDnHandle_t handle, bool lower, int n);
template <typename T>
absl::Status Potrf(gpusolverDnHandle_t handle, bool lower, int n, T* a, T* workspace,
                   int lwork, int* info);

// getrf of `batch` n x n matrices whose device pointers are in `a` (hipBLAS).
template <typename T>
absl::Status GetrfBatched(gpublasHandle_t handle, int n, T** a, int* ipiv, int* info,
                          int batch);

// rocSOLVER's version string ("3.32.0.abc"): a host call, no GPU needed.
absl::StatusOr<std::string> RocsolverVersion();

}  // namespace jax::JAX_GPU_NAMESPACE::solver

#endif  // JAXLIB_GPU_SOLVER_INTERFACE_H_
