"""Public Starlark API of //jaxlib/rocm.

rocm_nanobind_extension makes a JAX FFI module, one per Python, with the RUNPATH
--@local_config_rocm//rocm:rocm_path_type decides (private/rpath.bzl).
"""

load("//jaxlib/rocm/private:rpath.bzl", _rocm_nanobind_extension = "rocm_nanobind_extension")

rocm_nanobind_extension = _rocm_nanobind_extension
