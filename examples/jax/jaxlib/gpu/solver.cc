// examples/jax stand-in (not JAX's file): the _solver extension module.
#include "jaxlib/gpu/solver_kernels_ffi.h"
#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"

namespace nb = nanobind;

NB_MODULE(_solver, m) {
  jax::MarkExampleModule(m);
  m.def("registrations", []() {
    nb::dict targets;
    targets[JAX_GPU_PREFIX "_getrf_ffi"] = jax::EncapsulateFfiHandler(GetrfFfi);
    targets[JAX_GPU_PREFIX "_batch_pointers_ffi"] =
        jax::EncapsulateFfiHandler(BatchPointersFfi);
    return targets;
  });
}
