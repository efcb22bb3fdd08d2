// examples/jax stand-in (not JAX's file): hands FFI handlers to Python.
#ifndef JAXLIB_KERNEL_NANOBIND_HELPERS_H_
#define JAXLIB_KERNEL_NANOBIND_HELPERS_H_

#include <string>
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

// A PyCapsule holding a legacy (api_version=0) custom call, named as XLA wants.
template <typename T>
nanobind::capsule EncapsulateLegacyCustomCall(T* fn) {
  return nanobind::capsule(reinterpret_cast<void*>(fn), "xla._CUSTOM_CALL_TARGET");
}

// Raises NotImplementedError for a function of JAX's module API this tree only
// names: jaxlib's Python binds such functions when it imports the module, so they
// must exist, and calling one says plainly that this is the stand-in.
[[noreturn]] inline void ExampleUnimplemented(const char* module, const char* name) {
  std::string message = std::string("examples/jax: ") + module + "." + name +
                        " is not implemented in this stand-in for JAX's sources";
  PyErr_SetString(PyExc_NotImplementedError, message.c_str());
  throw nanobind::python_error();
}

// Defines module.name(*args, **kwargs) raising ExampleUnimplemented.
inline void DefUnimplemented(nanobind::module_& m, const char* module, const char* name) {
  m.def(name, [module, name](nanobind::args, nanobind::kwargs) -> nanobind::object {
    ExampleUnimplemented(module, name);
  });
}

// Marks a module as built from this stand-in tree: tests assert the attribute
// to prove that --override_repository=jax=examples/jax was used.
inline void MarkExampleModule(nanobind::module_& m) {
  m.attr("_jax_rocm_example") = "examples/jax";
}

}  // namespace jax

#endif  // JAXLIB_KERNEL_NANOBIND_HELPERS_H_
