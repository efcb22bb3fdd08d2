// examples/jax stand-in (not JAX's file): the _hybrid extension module.
#include "jaxlib/gpu/hybrid_kernels.h"
#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"

namespace nb = nanobind;

NB_MODULE(_hybrid, m) {
  jax::MarkExampleModule(m);
  m.def("registrations", []() {
    nb::dict targets;
    targets[JAX_GPU_PREFIX "_eig_real_ffi"] = jax::EncapsulateFfiHandler(EigRealFfi);
    return targets;
  });
  // jaxlib.gpu_solver calls these before using the hybrid kernels: this tree
  // links no MAGMA, so there is nothing to load.
  m.def("initialize", []() {});
  m.def("has_magma", []() { return false; });
}
