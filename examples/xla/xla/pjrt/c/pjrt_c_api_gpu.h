/* Stand-in for XLA's GPU plugin entry point, written for jax-rocm-build's
 * offline tests (not XLA code). A PJRT plugin is a shared library exporting
 * exactly this function; jaxlib finds it with dlsym("GetPjrtApi"). */
#ifndef XLA_PJRT_C_PJRT_C_API_GPU_H_
#define XLA_PJRT_C_PJRT_C_API_GPU_H_

#include "xla/pjrt/c/pjrt_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exported even from a library built with -fvisibility=hidden. */
__attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi(void);

#ifdef __cplusplus
}
#endif

#endif /* XLA_PJRT_C_PJRT_C_API_GPU_H_ */
