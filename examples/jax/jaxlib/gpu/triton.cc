// examples/jax stand-in (not JAX's file): the _triton extension module.
#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "jaxlib/gpu/triton_kernels.h"
#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"

namespace nb = nanobind;

namespace {

// The types jaxlib.gpu_triton binds at import. Constructing one raises, so no
// lowering can emit a "triton_kernel_call" for the legacy target below.
struct TritonKernel {};
struct TritonKernelCall {};
struct TritonAutotunedKernelCall {};

// The legacy (api_version=0) "triton_kernel_call" target jaxlib registers at
// import. Unreachable (see above); reporting an error through XLA's status API
// would need XLA's runtime, which this tree does not link, so it aborts loudly.
void LegacyTritonKernelCall(void*, void**, const char*, std::size_t, void*) {
  std::fprintf(stderr, "examples/jax: triton_kernel_call has no implementation in this stand-in\n");
  std::abort();
}

template <typename T>
void DefUnconstructible(nb::module_& m, const char* name) {
  nb::class_<T>(m, name).def("__init__", [name](T*, nb::args, nb::kwargs) {
    jax::ExampleUnimplemented("_triton", name);
  });
}

}  // namespace

NB_MODULE(_triton, m) {
  jax::MarkExampleModule(m);
  m.def("registrations", []() {
    nb::dict targets;
    targets[JAX_GPU_PREFIX "_triton_kernel_call_ffi"] =
        jax::EncapsulateFfiHandler(TritonKernelCallFfi);
    return targets;
  });
  m.def("get_custom_call", []() { return jax::EncapsulateLegacyCustomCall(LegacyTritonKernelCall); });
  DefUnconstructible<TritonKernel>(m, "TritonKernel");
  DefUnconstructible<TritonKernelCall>(m, "TritonKernelCall");
  DefUnconstructible<TritonAutotunedKernelCall>(m, "TritonAutotunedKernelCall");
  for (const char* name : {"create_array_parameter", "create_scalar_parameter", "get_compute_capability",
                           "get_arch_details", "get_serialized_metadata"}) {
    jax::DefUnimplemented(m, "_triton", name);
  }
}
