// examples/jax stand-in (not JAX's file): the _prng extension module.
#include "jaxlib/gpu/prng_kernels.h"
#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"

namespace nb = nanobind;

NB_MODULE(_prng, m) {
  jax::MarkExampleModule(m);
  m.def("registrations", []() {
    nb::dict targets;
    targets[JAX_GPU_PREFIX "_threefry2x32_ffi"] =
        jax::EncapsulateFfiHandler(Threefry2x32Ffi);
    return targets;
  });
}
