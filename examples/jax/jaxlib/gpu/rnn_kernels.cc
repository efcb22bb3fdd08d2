// examples/jax stand-in (not JAX's file): RNN FFI handlers.
#include "jaxlib/gpu/rnn_kernels.h"

#include <cstdint>

#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

namespace ffi = ::xla::ffi;
using F32 = ffi::BufferR3<ffi::F32>;

ffi::Error RnnForwardImpl(F32 x, ffi::Result<F32> y, int64_t input_size,
                          int64_t hidden_size, int64_t num_layers,
                          bool bidirectional) {
  if (input_size <= 0 || hidden_size <= 0 || num_layers <= 0) {
    return InvalidArgument("rnn: sizes and num_layers must be positive");
  }
  auto xd = x.dimensions();
  auto yd = y->dimensions();
  const int64_t directions = bidirectional ? 2 : 1;
  if (xd[2] != input_size || yd[0] != xd[0] || yd[1] != xd[1] ||
      yd[2] != hidden_size * directions) {
    return InvalidArgument("rnn: x must be [batch, seq, input_size] and y "
                           "[batch, seq, hidden_size * directions]");
  }
  return Unimplemented(JAX_GPU_PREFIX "_rnn_ffi", "MIOpen");
}

}  // namespace
}  // namespace jax::JAX_GPU_NAMESPACE

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    RnnForwardFfi, jax::JAX_GPU_NAMESPACE::RnnForwardImpl,
    xla::ffi::Ffi::Bind()
        .Arg<xla::ffi::BufferR3<xla::ffi::F32>>()  // x
        .Ret<xla::ffi::BufferR3<xla::ffi::F32>>()  // y
        .Attr<int64_t>("input_size")
        .Attr<int64_t>("hidden_size")
        .Attr<int64_t>("num_layers")
        .Attr<bool>("bidirectional"));
