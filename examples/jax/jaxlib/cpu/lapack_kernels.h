// examples/jax stand-in (not JAX's file): host linear algebra for the hybrid kernels.
// JAX's file calls LAPACK through function pointers taken from scipy at run time; this
// stand-in has its own small routine instead.
#ifndef JAXLIB_CPU_LAPACK_KERNELS_H_
#define JAXLIB_CPU_LAPACK_KERNELS_H_

#include <cstdint>

namespace jax {

// QR with column pivoting, as LAPACK's ?geqp3 leaves it: `a` (m x n, column-major) is
// overwritten with R above the diagonal and the Householder vectors below it, tau[k]
// (k < min(m, n)) holds the reflectors' scales, and jpvt[j] = the 1-based index of the
// column of the input that became column j. Every column is free (jpvt is output only).
template <typename T>
void Geqp3(int64_t m, int64_t n, T* a, int32_t* jpvt, T* tau);

extern template void Geqp3<float>(int64_t, int64_t, float*, int32_t*, float*);
extern template void Geqp3<double>(int64_t, int64_t, double*, int32_t*, double*);

}  // namespace jax

#endif  // JAXLIB_CPU_LAPACK_KERNELS_H_
