// examples/jax stand-in (not JAX's file): the _solver extension module.
#include <stdexcept>
#include <string>

#include "jaxlib/gpu/solver_kernels_ffi.h"
#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"
#include "nanobind/stl/string.h"

namespace nb = nanobind;

NB_MODULE(_solver, m) {
  jax::MarkExampleModule(m);
  m.def("registrations", []() {
    nb::dict targets;
    targets[JAX_GPU_PREFIX "solver_getrf_ffi"] = jax::EncapsulateFfiHandler(GetrfFfi);
    targets[JAX_GPU_PREFIX "solver_potrf_ffi"] = jax::EncapsulateFfiHandler(PotrfFfi);
    targets[JAX_GPU_PREFIX "solver_orgqr_ffi"] = jax::EncapsulateFfiHandler(OrgqrFfi);
    return targets;
  });
  // rocSOLVER's version, read from the library this module links (no GPU needed).
  m.def("rocsolver_version", []() -> std::string {
    auto version = jax::JAX_GPU_NAMESPACE::RocsolverVersionForModule();
    if (!version.ok()) throw std::runtime_error(std::string(version.status().message()));
    return *version;
  });
}
