// examples/jax stand-in (not JAX's file): picks the GPU runtime and libraries for the
// vendor-neutral sources of jaxlib/gpu. Only HIP is provided here; the build defines
// JAX_GPU_HIP=1 through //jaxlib/rocm:hip_vendor.
#ifndef JAXLIB_GPU_VENDOR_H_
#define JAXLIB_GPU_VENDOR_H_

#if defined(JAX_GPU_HIP)

#include <hip/hip_runtime_api.h>
#include <hipblas/hipblas.h>
#include <hipsolver/hipsolver.h>
#include <hipsparse/hipsparse.h>

#define JAX_GPU_NAMESPACE hip
#define JAX_GPU_PREFIX "hip"  // prefix of every FFI target name, e.g. "hip_threefry2x32_ffi"

typedef hipStream_t gpuStream_t;
typedef hipError_t gpuError_t;
#define gpuSuccess hipSuccess
#define gpuGetLastError hipGetLastError
#define gpuGetErrorName hipGetErrorName
#define gpuGetErrorString hipGetErrorString
#define gpuPointerAttributes hipPointerAttribute_t
#define gpuPointerGetAttributes hipPointerGetAttributes
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuGetDevice hipGetDevice

typedef hipblasHandle_t gpublasHandle_t;
typedef hipblasStatus_t gpublasStatus_t;
typedef hipsolverHandle_t gpusolverDnHandle_t;
typedef hipsolverStatus_t gpusolverStatus_t;
typedef hipsparseHandle_t gpusparseHandle_t;
typedef hipsparseStatus_t gpusparseStatus_t;

#else
#error "examples/jax: only HIP is supported; build with JAX_GPU_HIP=1 (//jaxlib/rocm:hip_vendor)"
#endif

#endif  // JAXLIB_GPU_VENDOR_H_
