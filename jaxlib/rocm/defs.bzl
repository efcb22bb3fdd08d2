"""Public Starlark API of //jaxlib/rocm: JAX's ROCm targets, one transcription for both modes.

    load("//jaxlib/rocm:defs.bzl", "jax_kernel_modules")
    jax_kernel_modules()        # kernels mode (jaxlib/rocm/BUILD.bazel)

    load("@jax_rocm_build//jaxlib/rocm:defs.bzl", "jax_xla_internal_modules")
    jax_xla_internal_modules(module_rule = xla_nanobind_extension)        # full mode (full/jaxlib/rocm)

Each declares, in the package calling it, JAX's modules of its mode and every JAX library
they need, with that mode's dependencies (private/jax_targets.bzl); the libraries both modes
declare come from the same lines. rocm_nanobind_extension makes one module per Python with
the RUNPATH --@local_config_rocm//rocm:rocm_path_type decides (private/rpath.bzl).
"""

load("//jaxlib/rocm/private:jax_targets.bzl", _jax_kernel_modules = "jax_kernel_modules", _jax_xla_internal_modules = "jax_xla_internal_modules")
load("//jaxlib/rocm/private:rpath.bzl", _rocm_nanobind_extension = "rocm_nanobind_extension")

jax_kernel_modules = _jax_kernel_modules
jax_xla_internal_modules = _jax_xla_internal_modules
rocm_nanobind_extension = _rocm_nanobind_extension
