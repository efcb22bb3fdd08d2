"""rocm_nanobind_extension: a JAX FFI module whose RUNPATH rocm_path_type decides.

The nanobind_extension of third_party/nanobind, plus @local_config_rocm//rocm:rocm_rpath
(the RUNPATH of --@local_config_rocm//rocm:rocm_path_type, third_party/gpus/private/runpath.bzl).
Bazel's own RUNPATHs into its build tree ($ORIGIN/../../_solib_k8/...) cannot be turned
off for one target (its toolchains imply runtime_library_search_directories); the wheel
rule strips them when packing (wheel/private/runpath.py). JAX's own
jaxlib/rocm/rocm_rpath.bzl does the same for its wheels with link_only.
"""

load("//rocm:defs.bzl", "ROCM_RPATH")
load("//third_party/nanobind:defs.bzl", "nanobind_extension")

def rocm_nanobind_extension(name, deps = [], **kwargs):
    nanobind_extension(
        name = name,
        deps = deps + [ROCM_RPATH],
        **kwargs
    )
