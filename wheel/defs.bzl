"""Public API of the wheel rules: the two ROCm wheels of JAX.

    load("//wheel:defs.bzl", "jax_rocm_pjrt_wheel", "jax_rocm_plugin_wheels", "rocm_wheel_set")

jax_rocm<N>_pjrt: the PJRT plugin (xla_rocm_plugin.so) and its Python loader, for any
Python (py3-none-<platform>). jax_rocm<N>_plugin: the FFI extension modules, one wheel
per Python of @local_config_python (cpXY-cpXY-<platform>), requiring the pjrt wheel of
the same version. N is the configured ROCm's major version.

Each wheel target's output is its .whl, named at analysis (RocmWheelInfo.wheel and .version;
rocm_wheel_set passes each wheel's RocmWheelInfo on in RocmWheelSetInfo). Its description
(RocmWheelInfo.description, the `rocm_wheel_info` output group, which the set keeps too) names
the .whl, version, tags and build_info.json for programs:

    bazel cquery --config=rocm --output=files --output_groups=rocm_wheel_info //:jax_rocm_wheels

build_info.json says for every artifact whose code it is: `jax` (with @jax's tree:
commit, sha256, pinned or local) or `xla`, or `examples` with the stand-in targets
(tagged jax_rocm_stand_in) it was built from; a wheel holding a stand-in says so in its
description too.
"""

load("@local_config_python//:defs.bzl", "EXT_SUFFIX", "PYTHON_VERSIONS")
load("@local_config_rocm//:build_defs.bzl", "rocm_only")
load("//wheel/private:wheel.bzl", "rocm_wheel", _RocmWheelInfo = "RocmWheelInfo", _RocmWheelSetInfo = "RocmWheelSetInfo", _WHEEL_INFO_GROUP = "WHEEL_INFO_GROUP", _rocm_wheel_set = "rocm_wheel_set")

RocmWheelInfo = _RocmWheelInfo
RocmWheelSetInfo = _RocmWheelSetInfo
WHEEL_INFO_GROUP = _WHEEL_INFO_GROUP
rocm_wheel_set = _rocm_wheel_set

# No license classifier: METADATA carries License-Expression (PEP 639), which replaces them.
_CLASSIFIERS = [
    "Development Status :: 4 - Beta",
    "Environment :: GPU",
    "Intended Audience :: Science/Research",
    "Operating System :: POSIX :: Linux",
    "Topic :: Scientific/Engineering :: Artificial Intelligence",
]

# The ROCm runtime packages on PyPI that `pip install jax-rocmN-plugin[with-rocm]` adds.
_WITH_ROCM = [
    "amd_rocm_hip_runtime_instinct",
    "amd_rocm_hip_runtime_devel_instinct",
    "amd_rocm_language_runtime_instinct",
    "amd_rocm_device_libs_instinct",
    "amd_rocm_llvm_instinct",
    "amd_hipblas_instinct",
    "amd_hipsparse_instinct",
    "amd_hipsolver_instinct",
    "amd_hipfft_instinct",
    "amd_miopen_hip_instinct",
    "amd_rccl_instinct",
    "amd_hipsparselt_instinct",
]

def jax_rocm_pjrt_wheel(name, plugin, loader, description = None, **kwargs):
    rocm_wheel(
        name = name,
        distribution = "jax_rocm{major}_pjrt",
        srcs = {plugin: "jax_plugins/xla_rocm{major}", loader: "jax_plugins/xla_rocm{major}"},
        origins = {str(native.package_relative_label(plugin)): "xla"},
        sources = ["xla"],
        build_info_dest = "jax_plugins/xla_rocm{major}/build_info.json",
        summary = "JAX XLA PJRT Plugin for AMD GPUs (ROCm {rocm_version})",
        description = description,
        classifiers = _CLASSIFIERS + ["Programming Language :: Python :: 3"],
        entry_points = {"jax_plugins": json.encode({"xla_rocm{major}": "jax_plugins.xla_rocm{major}"})},
        target_compatible_with = rocm_only(),
        **kwargs
    )

def jax_rocm_plugin_wheels(name, modules, package_files, description = None, **kwargs):
    """One plugin wheel per Python; `modules` are nanobind_extension names in their package."""
    wheels = []
    for version in PYTHON_VERSIONS:
        tag = "cp" + version.replace(".", "")
        wheel = "%s_%s" % (name, tag)
        rocm_wheel(
            name = wheel,
            distribution = "jax_rocm{major}_plugin",
            srcs = dict([(m + EXT_SUFFIX[version], "jax_rocm{major}_plugin") for m in modules] + [(package_files, "jax_rocm{major}_plugin")]),
            origins = {str(native.package_relative_label(m + EXT_SUFFIX[version])): "jax" for m in modules},
            sources = ["jax", "nanobind", "xla_ffi_headers", "com_google_absl"],
            # Label(): resolved in this module, whichever module's package calls the macro.
            source_infos = [Label("@jax//:source_info.json"), Label("@eigen_archive//:eigen.json"), Label("@xla_python_headers//:source_info.json")],
            source_info_names = ["jax", "eigen", "xla_python_headers"],
            build_info_dest = "jax_rocm{major}_plugin/build_info.json",
            python_tag = tag,
            abi_tag = tag,
            summary = "JAX Plugin for AMD GPUs (ROCm {rocm_version})",
            description = description,
            requires_python = "==%s.*" % version,
            requires_dist = ["jax-rocm{major}-pjrt=={version}"],
            extras = {"with-rocm": _WITH_ROCM},
            classifiers = _CLASSIFIERS + ["Programming Language :: Python :: " + version],
            target_compatible_with = rocm_only(),
            **kwargs
        )
        wheels.append(wheel)
    rocm_wheel_set(name = name, wheels = wheels, **kwargs)
