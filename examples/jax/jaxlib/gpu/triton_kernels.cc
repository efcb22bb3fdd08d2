// examples/jax stand-in (not JAX's file): Triton kernel call handler.
#include "jaxlib/gpu/triton_kernels.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

namespace ffi = ::xla::ffi;

ffi::Error TritonKernelCallImpl(ffi::RemainingArgs args, ffi::RemainingRets rets,
                                std::string_view kernel_name, int64_t grid_x) {
  if (kernel_name.empty()) return InvalidArgument("triton: empty kernel_name");
  if (grid_x <= 0) return InvalidArgument("triton: grid_x must be positive");
  if (args.size() + rets.size() == 0) {
    return InvalidArgument("triton: kernel '" + std::string(kernel_name) +
                           "' has no buffers");
  }
  return Unimplemented(JAX_GPU_PREFIX "_triton_kernel_call_ffi (kernel '" +
                           std::string(kernel_name) + "')",
                       "a loader for compiled Triton kernels");
}

}  // namespace
}  // namespace jax::JAX_GPU_NAMESPACE

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    TritonKernelCallFfi, jax::JAX_GPU_NAMESPACE::TritonKernelCallImpl,
    xla::ffi::Ffi::Bind()
        .RemainingArgs()
        .RemainingRets()
        .Attr<std::string_view>("kernel_name")
        .Attr<int64_t>("grid_x"));
