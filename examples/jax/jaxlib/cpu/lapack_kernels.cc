// examples/jax stand-in (not JAX's file): Householder QR with column pivoting.
#include "jaxlib/cpu/lapack_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace jax {

template <typename T>
void Geqp3(int64_t m, int64_t n, T* a, int32_t* jpvt, T* tau) {
  auto at = [&](int64_t i, int64_t j) -> T& { return a[i + j * m]; };
  for (int64_t j = 0; j < n; ++j) jpvt[j] = static_cast<int32_t>(j + 1);
  const int64_t steps = std::min(m, n);
  for (int64_t k = 0; k < steps; ++k) {
    // The remaining column with the largest norm below row k goes to column k.
    int64_t pivot = k;
    T best = -1;
    for (int64_t j = k; j < n; ++j) {
      T norm2 = 0;
      for (int64_t i = k; i < m; ++i) norm2 += at(i, j) * at(i, j);
      if (norm2 > best) best = norm2, pivot = j;
    }
    if (pivot != k) {
      for (int64_t i = 0; i < m; ++i) std::swap(at(i, k), at(i, pivot));
      std::swap(jpvt[k], jpvt[pivot]);
    }
    // The reflector H = I - tau v v^T, v = (1, a[k+1:, k] / (alpha - beta)), that maps
    // a[k:, k] to (beta, 0, ..., 0).
    const T alpha = at(k, k);
    T tail2 = 0;
    for (int64_t i = k + 1; i < m; ++i) tail2 += at(i, k) * at(i, k);
    if (tail2 == 0) {
      tau[k] = 0;
      continue;
    }
    const T beta = -std::copysign(std::sqrt(alpha * alpha + tail2), alpha);
    tau[k] = (beta - alpha) / beta;
    const T scale = 1 / (alpha - beta);
    for (int64_t i = k + 1; i < m; ++i) at(i, k) *= scale;
    at(k, k) = beta;
    // Apply H to the columns on the right.
    for (int64_t j = k + 1; j < n; ++j) {
      T w = at(k, j);
      for (int64_t i = k + 1; i < m; ++i) w += at(i, k) * at(i, j);
      w *= tau[k];
      at(k, j) -= w;
      for (int64_t i = k + 1; i < m; ++i) at(i, j) -= w * at(i, k);
    }
  }
}

template void Geqp3<float>(int64_t, int64_t, float*, int32_t*, float*);
template void Geqp3<double>(int64_t, int64_t, double*, int32_t*, double*);

}  // namespace jax
