/* This project's stand-in for TSL's tsl/platform/platform.h (third_party/xla_compat/README.md):
 * the platform macros JAX's kernels test, for the platform its ROCm wheels are built for
 * (Linux). PLATFORM_GOOGLE is never defined: JAX guards Google-internal code with it. */
#ifndef JAX_ROCM_BUILD_XLA_COMPAT_TSL_PLATFORM_PLATFORM_H_
#define JAX_ROCM_BUILD_XLA_COMPAT_TSL_PLATFORM_PLATFORM_H_

#if !defined(__linux__)
#error "jax-rocm-build's tsl/platform/platform.h describes Linux only"
#endif

#if !defined(PLATFORM_POSIX) && !defined(PLATFORM_GOOGLE)
#define PLATFORM_POSIX
#endif

#if defined(__x86_64__)
#define PLATFORM_IS_X86
#elif defined(__aarch64__)
#define PLATFORM_IS_ARM
#define PLATFORM_IS_ARM64
#endif

#endif  /* JAX_ROCM_BUILD_XLA_COMPAT_TSL_PLATFORM_PLATFORM_H_ */
