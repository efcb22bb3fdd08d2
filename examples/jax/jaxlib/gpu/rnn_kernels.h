// examples/jax stand-in (not JAX's file): _rnn's MIOpen side.
#ifndef JAXLIB_GPU_RNN_KERNELS_H_
#define JAXLIB_GPU_RNN_KERNELS_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {

// What jaxlib.gpu_rnn passes to build_rnn_descriptor, carried to the handlers as the
// custom call's opaque bytes (this layout is this stand-in's own).
struct RnnDescriptor {
  int32_t input_size;
  int32_t hidden_size;
  int32_t num_layers;
  int32_t batch_size;
  int32_t max_seq_length;
  float dropout;
  int32_t bidirectional;
  int32_t allow_tf32;
  int64_t workspace_size;
  int64_t reserve_space_size;
};

std::string PackRnnDescriptor(const RnnDescriptor& descriptor);

// MIOpen's (workspace, reserve space) sizes in float elements for an LSTM of this
// shape: a MIOpen handle, RNN and tensor descriptors. Needs a GPU (MIOpen's handle).
absl::StatusOr<std::pair<int64_t, int64_t>> RnnComputeWorkspaceReserveSpaceSizes(
    int input_size, int hidden_size, int num_layers, int batch_size, int max_seq_length,
    float dropout, bool bidirectional);

// MIOpen's version, "major.minor.patch" (a host call, no GPU needed).
std::string MiopenVersion();

}  // namespace jax::JAX_GPU_NAMESPACE

// "hipdnn_rnn_ffi" and "hipdnn_rnn_bwd_ffi": decode the descriptor and build MIOpen's
// RNN descriptor from it; running the RNN is not implemented in this stand-in.
XLA_FFI_DECLARE_HANDLER_SYMBOL(RNNForwardFfi);
XLA_FFI_DECLARE_HANDLER_SYMBOL(RNNBackwardFfi);

#endif  // JAXLIB_GPU_RNN_KERNELS_H_
