// examples/jax stand-in (not JAX's file): the _linalg extension module.
#include "jaxlib/gpu/linalg_kernels.h"
#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"

namespace nb = nanobind;

NB_MODULE(_linalg, m) {
  jax::MarkExampleModule(m);
  m.def("registrations", []() {
    nb::dict targets;
    targets[JAX_GPU_PREFIX "_lu_pivots_to_permutation"] =
        jax::EncapsulateFfiHandler(LuPivotsToPermutation);
    return targets;
  });
}
