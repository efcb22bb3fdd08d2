// examples/jax stand-in (not JAX's file): the _rnn extension module.
#include "jaxlib/gpu/rnn_kernels.h"
#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"

namespace nb = nanobind;

NB_MODULE(_rnn, m) {
  jax::MarkExampleModule(m);
  m.def("registrations", []() {
    nb::dict targets;
    targets[JAX_GPU_PREFIX "_rnn_ffi"] = jax::EncapsulateFfiHandler(RnnForwardFfi);
    return targets;
  });
  // jaxlib.gpu_rnn binds this at import; building RNN descriptors needs MIOpen.
  jax::DefUnimplemented(m, "_rnn", "compute_rnn_workspace_reserve_space_sizes");
  jax::DefUnimplemented(m, "_rnn", "build_rnn_descriptor");
}
