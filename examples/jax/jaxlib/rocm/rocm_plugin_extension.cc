// examples/jax stand-in (not JAX's file): the rocm_plugin_extension module.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "jaxlib/gpu/vendor.h"
#include "jaxlib/kernel_nanobind_helpers.h"
#include "nanobind/nanobind.h"

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

}  // namespace

NB_MODULE(rocm_plugin_extension, m) {
  jax::MarkExampleModule(m);
  // The plugin's own FFI targets: none in this tree.
  m.def("registrations", []() { return nb::dict(); });
  m.def("get_device_ordinal", &GetDeviceOrdinal, nb::arg("data_ptr"));
}
