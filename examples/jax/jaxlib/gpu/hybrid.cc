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
    targets[JAX_GPU_PREFIX "hybrid_geqp3"] = jax::EncapsulateFfiHandler(kGeqp3Ffi);
    return targets;
  });
  // jaxlib.gpu_solver calls these before the hybrid kernels run: this stand-in's host
  // code is its own (no LAPACK from scipy to look up) and it links no MAGMA.
  m.def("initialize", []() {});
  m.def("has_magma", []() { return false; });
}
