"""Where every shipped .so looks for ROCm at run time: XLA's build setting rocm_path_type.

    --@local_config_rocm//rocm:rocm_path_type=link_only|system|multiple|hermetic

decides the RUNPATH of the PJRT library and of every FFI module (and of whatever links
@local_config_rocm//rocm:rocm_rpath, as in XLA):

  link_only  (the release default, --config=rocm_release) the places users keep ROCm, never
             the build machine's: TheRock's pip packages beside the wheel (_rocm_sdk_core,
             _rocm_sdk_libraries and _rocm_sdk_libraries_<family> for every family,
             from jax_rocm<N>_plugin/ one level up and from jax_plugins/xla_rocm<N>/ two),
             the same packages under another python3.X of the same prefix and under
             /usr/local/lib/python3.X/dist-packages, then $ORIGIN/../rocm/lib (a toolkit
             unpacked beside the wheel) and /opt/rocm/lib; after those the system loader
             (LD_LIBRARY_PATH, ld.so.cache: distribution packages).
  system     (XLA's default) /opt/rocm/lib and the configured toolkit's own library
             folders, unless they lie in Bazel's output base (an extracted tarball).
  multiple   link_only's places, then system's.
  hermetic   the toolkit's library folders as Bazel sees them, for tests in the build tree
             only; the wheel rule refuses it.

The RUNPATH is DT_RUNPATH (--enable-new-dtags): LD_LIBRARY_PATH still comes first.
Bazel adds its own entries into its build tree ($ORIGIN/../../_solib_k8/...), which a
target cannot turn off (the toolchains imply runtime_library_search_directories): the
wheel rule strips them from every .so it packs (wheel/private/runpath.py), and
build/ci_build_cli/wheel_audit.py fails a wheel that still holds one.
"""

# XLA's values (its third_party/gpus/rocm/BUILD.tpl).
ROCM_PATH_TYPES = ["system", "hermetic", "multiple", "link_only"]

# Pythons whose site-packages another interpreter's TheRock install may be in.
_PYTHON_MINORS = range(9, 16)

# Shipped .so files sit in jax_rocm<N>_plugin/ (one level below site-packages) and in
# jax_plugins/xla_rocm<N>/ (two); the loader skips entries that do not exist.
_TO_SITE_PACKAGES = ["$ORIGIN/..", "$ORIGIN/../.."]

def therock_pip_runpath(pip_families):
    """TheRock's pip packages, beside the wheel and in the usual site-packages. pip_families:
    the finder's therock_pip_families (find_rocm_config.py THEROCK_PIP_FAMILIES, in
    rocm_config.json), in their order."""
    core = ["_rocm_sdk_core/lib", "_rocm_sdk_libraries/lib"]
    beside = core + ["_rocm_sdk_libraries_%s/lib" % f.replace("-", "_") for f in pip_families]
    entries = []
    for site in _TO_SITE_PACKAGES:
        entries += ["%s/%s" % (site, lib) for lib in beside]
    for site in _TO_SITE_PACKAGES:
        for minor in _PYTHON_MINORS:
            for kind in ("site-packages", "dist-packages"):
                entries += ["%s/../../python3.%d/%s/%s" % (site, minor, kind, lib) for lib in core]
    for minor in _PYTHON_MINORS:
        entries += ["/usr/local/lib/python3.%d/dist-packages/%s" % (minor, lib) for lib in core]
    return entries

def link_only_runpath(pip_families):
    """The release default: the places users keep ROCm, in order (pip_families: therock_pip_runpath's)."""
    return therock_pip_runpath(pip_families) + ["$ORIGIN/../rocm/lib", "$ORIGIN/../../rocm/lib", "/opt/rocm/lib"]

def system_runpath(toolkit_library_dirs, output_base):
    """/opt/rocm/lib and the configured toolkit's folders outside Bazel's output base."""
    own = [d for d in toolkit_library_dirs if d != "/opt/rocm/lib" and not (d + "/").startswith(output_base.rstrip("/") + "/")]
    return ["/opt/rocm/lib"] + own

def runpath_linkopts(entries):
    """Linker flags for these RUNPATH entries, as written in a BUILD file ($ is $$ there)."""
    return ["-Wl,--enable-new-dtags"] + ["-Wl,-rpath," + e.replace("$", "$$") for e in entries]
