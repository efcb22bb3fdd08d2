// examples/jax stand-in (not JAX's file): the FFI handler of threefry2x32.
#include "jaxlib/gpu/prng_kernels.h"

#include <cstdint>
#include <string>

#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/gpu_kernel_helpers.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

namespace ffi = ::xla::ffi;
using U32 = ffi::Buffer<ffi::U32>;

ffi::Error Threefry2x32Impl(gpuStream_t stream, U32 key0, U32 key1, U32 data0,
                            U32 data1, ffi::Result<U32> out0,
                            ffi::Result<U32> out1) {
  const size_t n = out0->element_count();
  for (size_t count : {key0.element_count(), key1.element_count(),
                       data0.element_count(), data1.element_count(),
                       out1->element_count()}) {
    if (count != n) {
      return InvalidArgument("threefry2x32: operands have " +
                             std::to_string(count) + " and " +
                             std::to_string(n) + " elements");
    }
  }
  JAX_FFI_CHECK_GPU(LaunchThreefry2x32(
      stream, key0.typed_data(), key1.typed_data(), data0.typed_data(),
      data1.typed_data(), out0->typed_data(), out1->typed_data(),
      static_cast<int64_t>(n)));
  return ffi::Error::Success();
}

}  // namespace
}  // namespace jax::JAX_GPU_NAMESPACE

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    Threefry2x32Ffi, jax::JAX_GPU_NAMESPACE::Threefry2x32Impl,
    xla::ffi::Ffi::Bind()
        .Ctx<xla::ffi::PlatformStream<gpuStream_t>>()
        .Arg<xla::ffi::Buffer<xla::ffi::U32>>()  // key0
        .Arg<xla::ffi::Buffer<xla::ffi::U32>>()  // key1
        .Arg<xla::ffi::Buffer<xla::ffi::U32>>()  // data0
        .Arg<xla::ffi::Buffer<xla::ffi::U32>>()  // data1
        .Ret<xla::ffi::Buffer<xla::ffi::U32>>()  // out0
        .Ret<xla::ffi::Buffer<xla::ffi::U32>>());  // out1
