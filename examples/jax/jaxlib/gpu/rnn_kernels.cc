// examples/jax stand-in (not JAX's file).
#include "jaxlib/gpu/rnn_kernels.h"

#include <miopen/miopen.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "jaxlib/ffi_helpers.h"
#include "jaxlib/gpu/gpu_kernel_helpers.h"
#include "jaxlib/gpu/vendor.h"
#include "xla/ffi/api/ffi.h"

namespace jax::JAX_GPU_NAMESPACE {
namespace {

namespace ffi = ::xla::ffi;

absl::Status MiopenStatus(miopenStatus_t status, const char* what) {
  if (status == miopenStatusSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrFormat("%s failed: %s", what, miopenGetErrorString(status)));
}

#define JAX_MIOPEN_RETURN_IF_ERROR(expr)                     \
  do {                                                       \
    absl::Status jax_miopen_status_ = MiopenStatus((expr), #expr); \
    if (!jax_miopen_status_.ok()) return jax_miopen_status_; \
  } while (0)

// MIOpen objects destroyed at the end of a scope.
struct RnnObjects {
  miopenHandle_t handle = nullptr;
  miopenRNNDescriptor_t rnn = nullptr;
  std::vector<miopenTensorDescriptor_t> x;
  ~RnnObjects() {
    for (miopenTensorDescriptor_t d : x) miopenDestroyTensorDescriptor(d);
    if (rnn) miopenDestroyRNNDescriptor(rnn);
    if (handle) miopenDestroy(handle);
  }
};

// An LSTM descriptor of JAX's shape (linear input, bias, float).
absl::Status SetLstm(miopenRNNDescriptor_t rnn, int hidden_size, int num_layers,
                     bool bidirectional) {
  JAX_MIOPEN_RETURN_IF_ERROR(miopenSetRNNDescriptor(
      rnn, hidden_size, num_layers, miopenRNNlinear,
      bidirectional ? miopenRNNbidirection : miopenRNNunidirection, miopenLSTM,
      miopenRNNwithBias, miopenRNNdefault, miopenFloat));
  return absl::OkStatus();
}

}  // namespace

std::string PackRnnDescriptor(const RnnDescriptor& descriptor) {
  return std::string(reinterpret_cast<const char*>(&descriptor), sizeof(descriptor));
}

absl::StatusOr<std::pair<int64_t, int64_t>> RnnComputeWorkspaceReserveSpaceSizes(
    int input_size, int hidden_size, int num_layers, int batch_size, int max_seq_length,
    float dropout, bool bidirectional) {
  if (input_size <= 0 || hidden_size <= 0 || num_layers <= 0 || batch_size <= 0 ||
      max_seq_length <= 0) {
    return absl::InvalidArgumentError("examples/jax: RNN sizes must be positive");
  }
  (void)dropout;  // JAX's RNN has no dropout at inference; the sizes do not depend on it
  RnnObjects objects;
  JAX_MIOPEN_RETURN_IF_ERROR(miopenCreate(&objects.handle));
  JAX_MIOPEN_RETURN_IF_ERROR(miopenCreateRNNDescriptor(&objects.rnn));
  absl::Status set = SetLstm(objects.rnn, hidden_size, num_layers, bidirectional);
  if (!set.ok()) return set;
  const int dims[2] = {batch_size, input_size};
  const int strides[2] = {input_size, 1};
  for (int t = 0; t < max_seq_length; ++t) {
    miopenTensorDescriptor_t d;
    JAX_MIOPEN_RETURN_IF_ERROR(miopenCreateTensorDescriptor(&d));
    objects.x.push_back(d);
    JAX_MIOPEN_RETURN_IF_ERROR(miopenSetTensorDescriptor(d, miopenFloat, 2, dims, strides));
  }
  size_t workspace = 0, reserve = 0;
  JAX_MIOPEN_RETURN_IF_ERROR(miopenGetRNNWorkspaceSize(objects.handle, objects.rnn,
                                                       max_seq_length, objects.x.data(),
                                                       &workspace));
  JAX_MIOPEN_RETURN_IF_ERROR(miopenGetRNNTrainingReserveSize(
      objects.handle, objects.rnn, max_seq_length, objects.x.data(), &reserve));
  return std::make_pair(static_cast<int64_t>((workspace + 3) / 4),
                        static_cast<int64_t>((reserve + 3) / 4));
}

std::string MiopenVersion() {
  size_t major = 0, minor = 0, patch = 0;
  if (miopenGetVersion(&major, &minor, &patch) != miopenStatusSuccess) return "";
  return absl::StrFormat("%d.%d.%d", major, minor, patch);
}

namespace {

ffi::ErrorOr<RnnDescriptor> Unpack(std::string_view opaque, const char* target) {
  if (opaque.size() != sizeof(RnnDescriptor)) {
    return ffi::Unexpected(InvalidArgument(absl::StrFormat(
        "%s: the opaque descriptor has %d bytes, not %d (made by this module's "
        "build_rnn_descriptor?)", target, opaque.size(), sizeof(RnnDescriptor))));
  }
  RnnDescriptor d;
  std::memcpy(&d, opaque.data(), sizeof(d));
  return d;
}

// Builds MIOpen's descriptor from the custom call's, then says what is missing.
ffi::Error CheckAndRefuse(std::string_view opaque, const char* target) {
  auto d = Unpack(opaque, target);
  if (!d) return d.error();
  int device = -1;  // the call runs on a device: without one, HIP's error says so
  JAX_FFI_CHECK_GPU(gpuGetDevice(&device));
  miopenRNNDescriptor_t rnn = nullptr;
  JAX_FFI_RETURN_IF_ERROR_STATUS(MiopenStatus(miopenCreateRNNDescriptor(&rnn), "miopenCreateRNNDescriptor"));
  absl::Status set = SetLstm(rnn, d->hidden_size, d->num_layers, d->bidirectional != 0);
  miopenDestroyRNNDescriptor(rnn);
  JAX_FFI_RETURN_IF_ERROR_STATUS(set);
  return Unimplemented(target, "MIOpen's RNN kernels, which this stand-in does not call");
}

ffi::Error RnnForwardImpl(std::string_view opaque, ffi::RemainingArgs, ffi::RemainingRets) {
  return CheckAndRefuse(opaque, JAX_GPU_PREFIX "dnn_rnn_ffi");
}

ffi::Error RnnBackwardImpl(std::string_view opaque, ffi::RemainingArgs, ffi::RemainingRets) {
  return CheckAndRefuse(opaque, JAX_GPU_PREFIX "dnn_rnn_bwd_ffi");
}

}  // namespace
}  // namespace jax::JAX_GPU_NAMESPACE

XLA_FFI_DEFINE_HANDLER_SYMBOL(RNNForwardFfi, jax::JAX_GPU_NAMESPACE::RnnForwardImpl,
                              xla::ffi::Ffi::Bind()
                                  .Attr<std::string_view>("opaque")
                                  .RemainingArgs()
                                  .RemainingRets());

XLA_FFI_DEFINE_HANDLER_SYMBOL(RNNBackwardFfi, jax::JAX_GPU_NAMESPACE::RnnBackwardImpl,
                              xla::ffi::Ffi::Bind()
                                  .Attr<std::string_view>("opaque")
                                  .RemainingArgs()
                                  .RemainingRets());
