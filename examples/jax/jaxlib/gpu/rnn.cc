// examples/jax stand-in (not JAX's file): the _rnn extension module.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "jaxlib/gpu/rnn_kernels.h"
#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"
#include "nanobind/stl/pair.h"
#include "nanobind/stl/string.h"

namespace nb = nanobind;

NB_MODULE(_rnn, m) {
  using namespace jax::JAX_GPU_NAMESPACE;
  jax::MarkExampleModule(m);
  m.def("registrations", []() {
    nb::dict targets;
    targets[JAX_GPU_PREFIX "dnn_rnn_ffi"] = jax::EncapsulateFfiHandler(RNNForwardFfi);
    targets[JAX_GPU_PREFIX "dnn_rnn_bwd_ffi"] = jax::EncapsulateFfiHandler(RNNBackwardFfi);
    return targets;
  });
  // jaxlib.gpu_rnn binds both at import and calls them when lowering an RNN, with JAX's
  // RNN arguments (dropout is a float probability).
  m.def("build_rnn_descriptor",
        [](int input_size, int hidden_size, int num_layers, int batch_size,
           int max_seq_length, float dropout, bool bidirectional, bool allow_tf32,
           int64_t workspace_size, int64_t reserve_space_size) {
          RnnDescriptor d{input_size, hidden_size,  num_layers,     batch_size,
                          max_seq_length, dropout,  bidirectional,  allow_tf32,
                          workspace_size, reserve_space_size};
          std::string packed = PackRnnDescriptor(d);
          return nb::bytes(packed.data(), packed.size());
        });
  m.def("compute_rnn_workspace_reserve_space_sizes",
        [](int input_size, int hidden_size, int num_layers, int batch_size,
           int max_seq_length, float dropout, bool bidirectional, bool allow_tf32) {
          (void)allow_tf32;
          auto sizes = RnnComputeWorkspaceReserveSpaceSizes(
              input_size, hidden_size, num_layers, batch_size, max_seq_length, dropout,
              bidirectional);
          if (!sizes.ok()) throw std::runtime_error(std::string(sizes.status().message()));
          return *sizes;
        });
  // MIOpen's version, read from the library this module links (no GPU needed).
  m.def("miopen_version", []() { return MiopenVersion(); });
}
