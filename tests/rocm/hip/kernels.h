// Host entry points of the test kernels (tests/rocm/hip): plain C so that Python's
// ctypes can call them from the shared library.
#pragma once
#ifdef __cplusplus
extern "C" {
#endif
// y = a * x + y on the current device; returns the hipError_t of the launch.
int jax_rocm_test_saxpy(int n, float a, const float* x, float* y);
// x = x * factor on the current device; returns the hipError_t of the launch.
int jax_rocm_test_scale(int n, float factor, float* x);
#ifdef __cplusplus
}
#endif
