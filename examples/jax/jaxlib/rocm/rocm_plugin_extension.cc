// examples/jax stand-in (not JAX's file): the rocm_plugin_extension module.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace nb = nanobind;

namespace {

// The ordinal of the device that owns `data_ptr`. Raises RuntimeError (with
// the HIP error, e.g. hipErrorNoDevice on a machine without a GPU) when HIP
// cannot tell, and ValueError for host memory.
int GetDeviceOrdinal(std::uintptr_t data_ptr) {
  gpuPointerAttributes attributes{};
  gpuError_t error =
      gpuPointerGetAttributes(&attributes, reinterpret_cast<void*>(data_ptr));
  if (error != gpuSuccess) {
    (void)gpuGetLastError();  // clear the sticky error for the next call
    throw std::runtime_error(std::string("get_device_ordinal: ") +
                             gpuGetErrorName(error) + " (" +
                             gpuGetErrorString(error) + ")");
  }
  if (attributes.type != hipMemoryTypeDevice &&
      attributes.type != hipMemoryTypeManaged) {
    throw nb::value_error("get_device_ordinal: not device memory");
  }
  return attributes.device;
}

// The extension of `type` in the chain of the PJRT_Api inside `c_api` (the capsule
// jaxlib hands the plugin loader), or null.
const PJRT_Extension_Base* FindExtension(nb::capsule c_api, PJRT_Extension_Type type) {
  const auto* api = static_cast<const PJRT_Api*>(c_api.data());
  if (api == nullptr) throw nb::value_error("not a PJRT_Api capsule");
  for (const PJRT_Extension_Base* e = api->extension_start; e != nullptr; e = e->next) {
    if (e->type == type) return e;
  }
  return nullptr;
}

// JAX's versions register through the plugin's GPU custom-call and FFI
// extensions. This stand-in only finds out whether the plugin has them, and
// says which one is missing: the example PJRT plugin (examples/xla) has none.
[[noreturn]] void RegisterThrough(nb::capsule c_api, PJRT_Extension_Type type, const char* function,
                                  const char* kind, const std::string& name) {
  if (FindExtension(c_api, type) == nullptr) {
    throw std::runtime_error(std::string("cannot register the ") + kind + " " + name +
                             ": the PJRT plugin has no " +
                             (type == PJRT_Extension_Type_FFI ? "FFI" : "GPU custom-call") +
                             " extension (examples/xla's plugin has none)");
  }
  jax::ExampleUnimplemented("rocm_plugin_extension", function);
}

}  // namespace

NB_MODULE(rocm_plugin_extension, m) {
  jax::MarkExampleModule(m);
  // The plugin's own FFI targets: none in this tree.
  m.def("registrations", []() { return nb::dict(); });
  m.def("get_device_ordinal", &GetDeviceOrdinal, nb::arg("data_ptr"));
  // What jax_plugins.xla_rocm<N> binds to the PJRT_Api with functools.partial.
  m.def(
      "register_custom_call_target",
      // traits is jaxlib's CustomCallTargetTraits, an enum object: taken as any object.
      [](nb::capsule c_api, nb::object fn_name, nb::object, nb::object, nb::object, nb::object) {
        RegisterThrough(c_api, PJRT_Extension_Type_Gpu_Custom_Call, "register_custom_call_target",
                        "custom call target", nb::str(fn_name).c_str());
      },
      nb::arg("c_api"), nb::arg("fn_name"), nb::arg("fn"), nb::arg("xla_platform_name"),
      nb::arg("api_version") = nb::none(), nb::arg("traits") = nb::none());
  m.def(
      "register_custom_type",
      [](nb::capsule c_api, nb::object type_name, nb::object) {
        RegisterThrough(c_api, PJRT_Extension_Type_FFI, "register_custom_type", "FFI type",
                        nb::str(type_name).c_str());
      },
      nb::arg("c_api"), nb::arg("type_name"), nb::arg("type_id"));
}
