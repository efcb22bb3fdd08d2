// examples/jax stand-in (not JAX's file): the _sparse extension module.
#include "jaxlib/gpu/sparse_kernels.h"
#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"

namespace nb = nanobind;

NB_MODULE(_sparse, m) {
  jax::MarkExampleModule(m);
  m.def("registrations", []() {
    nb::dict targets;
    targets[JAX_GPU_PREFIX "sparse_gtsv2_ffi"] = jax::EncapsulateFfiHandler(Gtsv2Ffi);
    return targets;
  });
}
