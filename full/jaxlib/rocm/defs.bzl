"""xla_nanobind_extension: one of JAX's ROCm modules that need XLA's internals, as JAX links it.

JAX builds these with XLA's nanobind and XLA's Python headers (rules_python's hermetic
Python, --repo_env=HERMETIC_PYTHON_VERSION), one Python per build. The wheel rules of
jax_rocm_build name modules by the extension suffix of each Python of @local_config_python
(--repo_env=JAX_ROCM_PYTHON), so full mode needs both to be that one Python; this macro
fails at loading, naming both flags, when they differ.
"""

load("@jax_rocm_build//rocm:defs.bzl", "ROCM_RPATH")
load("@local_config_python//:defs.bzl", "EXT_SUFFIX", "PYTHON_VERSIONS")
load("@python_version_repo//:py_version.bzl", "HERMETIC_PYTHON_VERSION")
load("@rules_cc//cc:defs.bzl", "cc_binary")

_VERSION_SCRIPT = "@jax_rocm_build//third_party/nanobind:extension.lds"

def _the_one_python():
    if PYTHON_VERSIONS != [HERMETIC_PYTHON_VERSION]:
        fail("full mode builds JAX's modules for XLA's hermetic Python %s, but @local_config_python describes %s. " % (HERMETIC_PYTHON_VERSION, ", ".join(PYTHON_VERSIONS)) +
             "Name one Python for both: --repo_env=HERMETIC_PYTHON_VERSION=3.X --repo_env=JAX_ROCM_PYTHON=python3.X.")
    return HERMETIC_PYTHON_VERSION

def xla_nanobind_extension(name, srcs, deps, copts = [], visibility = None):
    """`name<EXT_SUFFIX>` (exporting only PyInit_<name>) and a filegroup `name` holding it."""
    module = name + EXT_SUFFIX[_the_one_python()]
    cc_binary(
        name = module,
        srcs = srcs,
        copts = ["-fvisibility=hidden", "-fexceptions", "-fno-strict-aliasing"] + copts,
        features = ["-use_header_modules"],
        linkshared = True,
        linkopts = ["-Wl,--version-script=$(location %s)" % _VERSION_SCRIPT],
        additional_linker_inputs = [_VERSION_SCRIPT],
        deps = deps + [
            ROCM_RPATH,
            "@nanobind",
            "@xla//third_party/python_runtime:headers",
        ],
        visibility = visibility,
    )
    native.filegroup(name = name, srcs = [module], visibility = visibility)
