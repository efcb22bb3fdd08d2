// examples/jax stand-in (not JAX's file): RNN FFI handlers.
#ifndef JAXLIB_GPU_RNN_KERNELS_H_
#define JAXLIB_GPU_RNN_KERNELS_H_

#include "xla/ffi/api/ffi.h"

// "<prefix>_rnn_ffi": an LSTM forward pass over f32 x[batch, seq, input_size]
// -> f32 y[batch, seq, hidden_size * directions], configured by the attributes
// input_size, hidden_size, num_layers (i64) and bidirectional (bool). Checks
// them, then reports that MIOpen is not linked into this tree.
XLA_FFI_DECLARE_HANDLER_SYMBOL(RnnForwardFfi);

#endif  // JAXLIB_GPU_RNN_KERNELS_H_
