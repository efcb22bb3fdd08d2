"""Public Starlark API of jax_rocm_build's ROCm rules.

    load("@rules_cc//cc:defs.bzl", "cc_binary")
    load("//rocm:defs.bzl", "rocm_library")

    rocm_library(name = "kernels", srcs = ["kernels.hip"], hdrs = ["kernels.h"])
    cc_binary(name = "libkernels.so", linkshared = True, deps = [":kernels"])

HIP sources are compiled by the ROCm clang of @local_config_rocm for the targets in
--//rocm:amdgpu_targets (default: rocm_gpu_architectures() of @local_config_rocm,
i.e. TF_ROCM_AMDGPU_TARGETS or the list JAX's wheels ship). Without --config=rocm the
targets are incompatible: `//...` skips them and asking for one names the fix.
"""

load("//rocm/private:providers.bzl", _AmdgpuTargetsInfo = "AmdgpuTargetsInfo", _RocmToolchainInfo = "RocmToolchainInfo")
load("//rocm/private:rocm_library.bzl", _rocm_library = "rocm_library")

AmdgpuTargetsInfo = _AmdgpuTargetsInfo
RocmToolchainInfo = _RocmToolchainInfo

# A constraint only a ROCm build's platforms have (@local_config_rocm//:rocm_only). A label, not a
# load of @local_config_rocm: loading this file evaluates no toolkit; analysing a rocm_library does.
_ROCM_ONLY = Label("@local_config_rocm//:rocm_only")

def rocm_library(name, target_compatible_with = [], **kwargs):
    """A HIP library (see rocm/private/rocm_library.bzl for the attributes); builds only with --config=rocm."""
    _rocm_library(
        name = name,
        target_compatible_with = target_compatible_with + [_ROCM_ONLY],
        **kwargs
    )

# What a shipped .so depends on so that --@local_config_rocm//rocm:rocm_path_type decides
# its RUNPATH (third_party/gpus/private/runpath.bzl): linkopts only.
ROCM_RPATH = "@local_config_rocm//rocm:rocm_rpath"
