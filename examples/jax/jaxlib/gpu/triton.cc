// examples/jax stand-in (not JAX's file): the _triton extension module.
#include "jaxlib/gpu/triton_kernels.h"
#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"

namespace nb = nanobind;

NB_MODULE(_triton, m) {
  jax::MarkExampleModule(m);
  m.def("registrations", []() {
    nb::dict targets;
    targets[JAX_GPU_PREFIX "_triton_kernel_call_ffi"] =
        jax::EncapsulateFfiHandler(TritonKernelCallFfi);
    return targets;
  });
}
