// examples/jax stand-in (not JAX's file): hands FFI handlers to Python.
#ifndef JAXLIB_KERNEL_NANOBIND_HELPERS_H_
#define JAXLIB_KERNEL_NANOBIND_HELPERS_H_

#include <type_traits>

#include "nanobind/nanobind.h"
#include "xla/ffi/api/c_api.h"

namespace jax {

// A PyCapsule holding an XLA FFI handler, for jax.ffi.register_ffi_target
// (api_version=1). The capsule is unnamed, like jax.ffi.pycapsule() makes;
// the name "xla._CUSTOM_CALL_TARGET" belongs to legacy (api_version=0)
// custom calls, which this tree does not have.
template <typename T>
nanobind::capsule EncapsulateFfiHandler(T* fn) {
  static_assert(std::is_invocable_r_v<XLA_FFI_Error*, T, XLA_FFI_CallFrame*>,
                "not an XLA FFI handler: XLA_FFI_Error* (XLA_FFI_CallFrame*)");
  return nanobind::capsule(reinterpret_cast<void*>(fn));
}

// Marks a module as built from this stand-in tree: tests assert the attribute
// to prove that --override_repository=jax=examples/jax was used.
inline void MarkExampleModule(nanobind::module_& m) {
  m.attr("_jax_rocm_example") = "examples/jax";
}

}  // namespace jax

#endif  // JAXLIB_KERNEL_NANOBIND_HELPERS_H_
