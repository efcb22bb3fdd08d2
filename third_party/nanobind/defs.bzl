"""nanobind_extension: a Python extension module, built once per Python of @local_config_python.

    nanobind_extension(name = "_prng", srcs = ["prng.cc"], deps = [":prng_kernels"])

makes `_prng<EXT_SUFFIX>` for each Python (e.g. `_prng.cpython-314-x86_64-linux-gnu.so`,
importable as `_prng`) and a filegroup `_prng` holding all of them. Only `PyInit_*`
is exported; Python's own symbols stay undefined, as CPython extension modules require.
`per_python_deps` are labels with `{python}` in them (e.g. `//x:numpy_{python}`), made
per Python as `3_11`, `3_14` ..., for libraries compiled against one Python's headers.
"""

load("@local_config_python//:defs.bzl", "EXT_SUFFIX", "PYTHON_VERSIONS")
load("@rules_cc//cc:defs.bzl", "cc_binary")

_VERSION_SCRIPT = Label("//third_party/nanobind:extension.lds")
_MANYLINUX_2_28 = Label("//toolchains/manylinux:glibc_2_28")

def nanobind_extension(name, srcs, deps = [], per_python_deps = [], copts = [], linkopts = [], visibility = None, tags = [], **kwargs):
    """One extension module per Python of @local_config_python and a filegroup `name` of them (see above)."""
    modules = []
    for version in PYTHON_VERSIONS:
        tag = version.replace(".", "_")
        module = name + EXT_SUFFIX[version]
        cc_binary(
            name = module,
            srcs = srcs,
            copts = ["-std=c++17", "-fvisibility=hidden", "-fexceptions", "-fno-strict-aliasing"] + select({
                # Under --config=manylinux_2_28 every module links its own copy of libc++abi,
                # which matches a caught exception's type by type_info address. nanobind's
                # internals (and their exception translators) are shared by all modules of
                # a domain, so an exception thrown in one module would be translated by
                # another's copy, fail to match and surface as SystemError. One domain per
                # module keeps each exception with its own module's translator.
                _MANYLINUX_2_28: ["-DNB_DOMAIN=jax_rocm_" + name],
                "//conditions:default": [],
            }) + copts,
            linkshared = True,
            # libstdc++ is linked in: the build host's may be newer than the users' (the
            # sandbox is Debian sid), and manylinux allows only old GLIBCXX versions.
            linkopts = ["-Wl,--version-script=$(location %s)" % _VERSION_SCRIPT, "-static-libstdc++", "-static-libgcc"] + linkopts,
            additional_linker_inputs = [_VERSION_SCRIPT],
            deps = deps + [d.replace("{python}", tag) for d in per_python_deps] + [
                Label("//third_party/nanobind:nanobind_py" + tag),
                "@local_config_python//:python_headers_" + tag,
            ],
            visibility = visibility,
            tags = tags,
            **kwargs
        )
        modules.append(module)
    native.filegroup(name = name, srcs = modules, visibility = visibility, tags = tags)
