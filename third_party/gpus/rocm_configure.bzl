"""Repository rules that locate ROCm and generate @local_config_rocm.

`rocm_configure` runs find_rocm_config.py on one toolkit and generates, every file from a
template of templates/ filled with the finder's facts (_fill; stanzas repeated in a file,
one per library, have templates of their own):
  rocm/BUILD.bazel   XLA's names and layout: a cc_library per library (a target that
                     fails naming the package to install when the toolkit lacks it),
                     rocm_headers ("rocm/include/<lib>/<h>"), rocm_config
                     ("rocm/rocm_config.h"), hip_runtime, rocm_rpath, toolchain_data,
                     rocminfo
  rocm/build_defs.bzl  XLA's build_defs names (if_rocm_is_configured, rocm_copts,
                     rocm_library ...) over //:build_defs.bzl
  BUILD.bazel        this project's names (aliases into //rocm) and the HIP toolchain
  build_defs.bzl     if_rocm, is_rocm_configured, rocm_default_copts,
                     rocm_gpu_architectures, rocm_version_number, rocm_only,
                     rocm_release and rocm_major (the finder's, for the wheels)
  rocm_config.json   the finder's JSON plus the default amdgpu targets and why
                     (amdgpu_targets, amdgpu_targets_origin; TheRock: therock.family,
                     therock.device_code_targets; therock_pip_families, the link_only
                     RUNPATH's): the one record of what this build used (wheel metadata reads it)

Default amdgpu targets (what --//rocm:amdgpu_targets defaults to): TF_ROCM_AMDGPU_TARGETS
if set, checked against the toolkit; else JAX's wheel list (the finder's
DEFAULT_AMDGPU_TARGETS, which it splits and defaults to), which a TheRock toolkit
narrows to the targets it has device code for (its family's: the wheel list's targets
in the family, or the family's own when there are none). An explicit
--//rocm:amdgpu_targets is checked at analysis against the same limit
(rocm/private/amdgpu_targets.bzl looks it up in the finder's therock.allowed_targets).

Where the toolkit comes from (rocm_toolkit_archive decides), first match wins; XLA's names
in XLA's order, with XLA's meaning, then this project's:
  ROCM_PATH=DIR                                  an extracted toolkit, /opt/rocm-X, /usr
  TF_ROCM_MULTIPLE_PATHS=A:B (+ LLVM_PATH)       installations merged into one tree of links
  ROCM_DISTRO_URL=URL + ROCM_DISTRO_HASH         a tarball (+ ROCM_DISTRO_LINKS=target:link,...)
    or THEROCK_URL=URL + THEROCK_SHA256          the same, this project's name (not both)
  ROCM_DISTRO_VERSION=NAME                       an entry of the XLA tree's rocm_redist.bzl
  rocm.therock(...) / rocm.local(...)            in MODULE.bazel (rocm/extensions.bzl)
  nothing                                        search $ROCM_PATH, /opt/rocm, /opt/rocm-* (newest first), /usr
A name set beside a higher one is reported in one line (toolkit_sources.py choose), never
ignored silently. Unlike XLA, nothing set means a search of this machine, not a download
of XLA's default ROCM_DISTRO_VERSION: a build works offline by default.

Nothing is searched unless TF_NEED_ROCM=1 (what --config=rocm sets); without it
the repository builds nothing ROCm and any ROCm target fails at analysis, saying
which flag to add.
"""

# Not through //rocm:defs.bzl, which loads @local_config_rocm: the repository this rule makes.
load("//third_party/gpus/private:runpath.bzl", "ROCM_PATH_TYPES", "link_only_runpath", "runpath_linkopts", "system_runpath")
load("//third_party/repo_utils:repo_utils.bzl", "run_checked", "run_for_answer")

# Where the toolkit comes from (rocm_toolkit_archive decides, _toolkit_choice): XLA's names in
# XLA's order (its rocm_configure.bzl), then this project's THEROCK_*.
TOOLKIT_SOURCE_ENVIRON = [
    "ROCM_PATH",
    "TF_ROCM_MULTIPLE_PATHS",
    "LLVM_PATH",
    "ROCM_DISTRO_URL",
    "ROCM_DISTRO_HASH",
    "ROCM_DISTRO_LINKS",
    "ROCM_DISTRO_VERSION",
    "THEROCK_URL",
    "THEROCK_SHA256",
    "THEROCK_STRIP_PREFIX",
    # Refused in one line: this project generates @local_config_rocm itself.
    "TF_ROCM_CONFIG_REPO",
]

# Names XLA's rocm_configure reads that this project reads not at all, and why: the pre-flight
# (build/ci_build_cli/preflight_names.py) counts them as answered.
_NO_WRAPPER = "XLA writes it into its hipcc compiler wrapper; this project's rocm_library runs ROCm's clang directly, without that wrapper"
XLA_ENVIRON_NOT_NEEDED = {
    "TMPDIR": _NO_WRAPPER,
    # Read at JAX 0.10.2's XLA pin (_hipcc_env), no longer at XLA main.
    "HIP_CLANG_PATH": _NO_WRAPPER + " (clang is the toolkit's, from the finder)",
    "DEVICE_LIB_PATH": _NO_WRAPPER + " (the device libraries are the toolkit's, from the finder)",
    "HIP_VDI_HOME": _NO_WRAPPER,
    "HIPCC_VERBOSE": _NO_WRAPPER + " (Bazel's --subcommands shows each compile)",
    "HIPCC_COMPILE_FLAGS_APPEND": _NO_WRAPPER + " (--@jax_rocm_build//rocm:copts adds flags to every HIP compile)",
    "HIPCC_LINK_FLAGS_APPEND": _NO_WRAPPER + " (HIP objects link through the C++ toolchain: --linkopt adds flags)",
}

# Every environment variable these rules read; changing one re-runs them, nothing else does.
ROCM_CONFIGURE_ENVIRON = ["TF_NEED_ROCM", "TF_NEED_CUDA", "TF_ROCM_AMDGPU_TARGETS"] + TOOLKIT_SOURCE_ENVIRON + [
    # XLA's remote-execution settings: //rocm:linux_x64's properties, build_defs.get_rbe_amdgpu_pool().
    "TF_ROCM_RBE_DOCKER_IMAGE",
    "TF_ROCM_RBE_POOL",
    "TF_ROCM_RBE_SINGLE_GPU_POOL",
    "TF_ROCM_RBE_MULTI_GPU_POOL",
]

# XLA's defaults for the pools (its rocm_configure.bzl); no default worker image: a cluster's own.
_RBE_POOL_DEFAULTS = {
    "TF_ROCM_RBE_POOL": "default",
    "TF_ROCM_RBE_SINGLE_GPU_POOL": "linux_x64_gpu",
    "TF_ROCM_RBE_MULTI_GPU_POOL": "linux_x64_multigpu",
}

# Libraries the finder reports (third_party/gpus/find_rocm_config.py LIBRARIES);
# each becomes a cc_library, unconfigured or not.

_TEMPLATES = {
    "build": Label("//third_party/gpus:templates/BUILD.tpl"),
    "unconfigured": Label("//third_party/gpus:templates/BUILD.unconfigured.tpl"),
    "build_defs": Label("//third_party/gpus:templates/build_defs.bzl.tpl"),
    "library": Label("//third_party/gpus:templates/rocm_library.tpl"),
    "rocm_build": Label("//third_party/gpus:templates/rocm_BUILD.tpl"),
    "rocm_build_defs": Label("//third_party/gpus:templates/rocm_build_defs.bzl.tpl"),
    "rocm_config_h": Label("//third_party/gpus:templates/rocm_config.h.tpl"),
    "rocm_xla_settings": Label("//third_party/gpus:templates/rocm_xla_settings.tpl"),
    "crosstool_build": Label("//third_party/gpus:templates/crosstool_BUILD.tpl"),
    "rocm_build_unconfigured": Label("//third_party/gpus:templates/rocm_BUILD.unconfigured.tpl"),
    # Stanzas repeated inside the files above (one per library, per missing library ...).
    "alias": Label("//third_party/gpus:templates/alias.tpl"),
    "missing": Label("//third_party/gpus:templates/rocm_missing.tpl"),
    "unconfigured_target": Label("//third_party/gpus:templates/rocm_unconfigured.tpl"),
    "rocminfo": Label("//third_party/gpus:templates/rocminfo.tpl"),
    "kernel_packs": Label("//third_party/gpus:templates/rocm_kernel_packs.tpl"),
    "rocm_path_type": Label("//third_party/gpus:templates/rocm_path_type.tpl"),
}

_TOOLCHAIN = {
    "%{toolchain_bzl}": str(Label("//rocm/private:toolchain.bzl")),
    "%{toolchain_type}": str(Label("//rocm:toolchain_type")),
}

# Targets of //rocm besides one per library: XLA's names (its third_party/gpus/rocm/BUILD.tpl).
_XLA_EXTRA_TARGETS = [
    "rocm_headers",
    "rocm_config",
    "hip_runtime",
    "rocm_rpath",
    "toolchain_data",
    "rocminfo",
    "rocm_root",
    "rocm_redist",
    "rocm_dist",
    "smi",
]

# How HIP compiles see the toolkit (rocm_BUILD.tpl's comment), by toolkit_in_inputs().
_IN_INPUTS_NOTE = {
    True: "by exec-root-relative paths: the toolkit is in Bazel's external repositories",
    False: "tracked for changes; clang runs from its absolute path, which a remote worker's image must have",
}

def _fill(rctx, template, substitutions):
    """The text of one of _TEMPLATES with its %{...} placeholders substituted: the one way this
    rule generates text. Whole files go through rctx.template, which does the same; stanzas
    repeated inside a file (one per library ...) are filled here and substituted into it."""
    text = rctx.read(rctx.path(_TEMPLATES[template]))
    for placeholder, value in substitutions.items():
        text = text.replace(placeholder, value)
    return text

def _target_name(library):
    return library.replace("-", "_")

def _truthy(value):
    return value.strip().lower() in ("1", "true", "yes", "on")

def _python(rctx):
    python = rctx.which("python3")
    if not python:
        fail("rocm_configure: python3 was not found on PATH; it runs third_party/gpus/find_rocm_config.py. Install Python 3.11 or newer.")
    return python

def _ask_finder(rctx, *args):
    """The JSON answer of one of the finder's questions that search no toolkit."""
    result = run_checked(
        rctx,
        [_python(rctx), rctx.path(rctx.attr._finder)] + list(args),
        "rocm_configure: third_party/gpus/find_rocm_config.py %s failed:\n{output}" % args[0],
        timeout = 60,
    )
    return json.decode(result.stdout)

def _library_names(rctx):
    """The finder's library table (one target each in //rocm), asked of the finder itself."""
    return _ask_finder(rctx, "--library-names")

def _unconfigured_targets(rctx):
    """What a build without ROCm records as its amdgpu targets: TF_ROCM_AMDGPU_TARGETS's, else
    JAX's wheel list, as the finder (the list's one home) splits and defaults them."""
    return _ask_finder(rctx, "--unconfigured-targets", rctx.getenv("TF_ROCM_AMDGPU_TARGETS", ""))

def _root_aliases(rctx, libraries):
    """This project's names (//:hip, //:rocm_headers ...) for the targets in //rocm."""
    names = ["rocm_headers"] + [_target_name(n) for n in libraries]
    return "".join([_fill(rctx, "alias", {"%{name}": n}) for n in names])

def _rbe_setting(rctx, name):
    return rctx.getenv(name, "").strip() or _RBE_POOL_DEFAULTS[name]

def _hipcc_config(config):
    """The fields of rules_ml_toolchain's hipcc_config() (its @config_rocm_hipcc, which full
    mode replaces with this repository), for this toolkit; empty when none is configured."""
    if not config:
        return {
            "version_number": 0,
            "hipcc_path": "",
            "rocm_path": "",
            "rocm_root": "",
            "miopen_version": 0,
            "hipruntime_version": 0,
            "clang_version": "",
            "lib_paths": [],
        }
    return {
        "version_number": config["rocm_version_number"],
        "hipcc_path": config.get("hipcc_path") or "",
        "rocm_path": config["rocm_toolkit_path"],
        "rocm_root": "rocm",
        "miopen_version": (config["libraries"].get("miopen") or {}).get("version_number", 0),
        "hipruntime_version": config["hip_version_number"],  # HIP_VERSION's encoding: 7.2.53211 -> 70253211
        "clang_version": config["clang_version"] or "",
        "lib_paths": sorted({info["library_dir"]: True for info in config["libraries"].values() if info.get("library_dir") and not info.get("static")}.keys()),
    }

def _write_rocm_build_defs(rctx, hipblaslt, config = None):
    rctx.template("rocm/build_defs.bzl", _TEMPLATES["rocm_build_defs"], {
        # The rule itself, not //rocm:defs.bzl, which loads this repository: no load cycle.
        "%{rocm_library_bzl}": str(Label("//rocm/private:rocm_library.bzl")),
        "%{cuda_needed}": repr(_truthy(rctx.getenv("TF_NEED_CUDA", "0"))),
        "%{hipblaslt}": repr(hipblaslt),
        "%{hipcc_config}": repr(_hipcc_config(config)),
        "%{single_gpu_rbe_pool}": repr(_rbe_setting(rctx, "TF_ROCM_RBE_SINGLE_GPU_POOL")),
        "%{multi_gpu_rbe_pool}": repr(_rbe_setting(rctx, "TF_ROCM_RBE_MULTI_GPU_POOL")),
    })

def _xla_settings(rctx):
    """XLA's config settings and RBE platform in //rocm (rocm_xla_settings.tpl), and its
    //crosstool; written alike whether ROCm is configured or not."""
    properties = {"OSFamily": "Linux", "Pool": _rbe_setting(rctx, "TF_ROCM_RBE_POOL")}
    image = rctx.getenv("TF_ROCM_RBE_DOCKER_IMAGE", "").strip()
    if image:
        properties["container-image"] = image if "://" in image else "docker://" + image
    rctx.template("crosstool/BUILD.bazel", _TEMPLATES["crosstool_build"], {})
    return _fill(rctx, "rocm_xla_settings", {"%{rbe_exec_properties}": repr(properties)})

def _write_unconfigured(rctx, reason, advice):
    libraries = _library_names(rctx)
    rctx.template("BUILD.bazel", _TEMPLATES["unconfigured"], {
        "%{reason}": reason,
        "%{aliases}": _root_aliases(rctx, libraries),
        "%{advice}": repr(advice),
    } | _TOOLCHAIN)
    rctx.template("build_defs.bzl", _TEMPLATES["build_defs"], {
        "%{configured}": "False",
        "%{rocm_version_number}": "0",
        "%{rocm_release}": repr(""),
        "%{rocm_major}": "0",
        "%{amdgpu_targets}": repr(_unconfigured_targets(rctx)),
        "%{build_info}": "{}",
        "%{unconfigured_message}": repr(advice),
    })
    targets = [_target_name(n) for n in libraries] + _XLA_EXTRA_TARGETS
    rctx.template("rocm/BUILD.bazel", _TEMPLATES["rocm_build_unconfigured"], {
        "%{reason}": reason,
        "%{targets}": "".join([_fill(rctx, "unconfigured_target", {"%{name}": t}) for t in targets]),
        "%{rocm_path_type}": _rocm_path_type_stanza(rctx),
        "%{xla_settings}": _xla_settings(rctx),
    })
    _write_rocm_build_defs(rctx, False)
    rctx.file("rocm_config.json", json.encode_indent({"configured": False, "reason": reason, "advice": advice}) + "\n")

def _toolkit_source(rctx):
    """(description, path or None for a search, declared TheRock family, tarball URL) of the
    toolkit rocm_toolkit_archive chose (its toolkit.json); the finder reads the family from the
    tarball's name."""
    toolkit = json.decode(rctx.read(rctx.path(rctx.attr.toolkit_archive)))
    return (toolkit["source"], toolkit["root"], toolkit["family"], toolkit["url"] or "")

def _link_kernel_packs(rctx, config):
    """Links a multi-arch toolkit's kernel packs and their manifests under rocm/.kpack/; returns
    {library: [its pack dicts with their `label`]}: what each library's kernel_packs target
    chooses from (a manifest's target is "")."""
    by_library = {}
    for pack in config["kernel_packs"] + config["kernel_pack_manifests"]:
        label = ".kpack/" + pack["path"].split("/")[-1]
        rctx.symlink(pack["path"], "rocm/" + label)
        for library in pack["libraries"]:
            by_library.setdefault(library, []).append(pack | {"label": label})
    return by_library

def _link_kpack_runtime(rctx, config):
    """librocm_kpack, which loads the packs, linked under rocm/lib/: hip's data ([] without it)."""
    if not config["kpack_runtime"]:
        return []
    label = "lib/" + config["kpack_runtime"].split("/")[-1]
    rctx.symlink(config["kpack_runtime"], "rocm/" + label)
    return [label]

def _kernel_packs_stanza(rctx, name, packs):
    """(the library's kernel_packs target as its data, that target's stanza); ([], "") without packs."""
    chosen = {p["label"]: p["target"] for p in packs if p["target"]}
    if not chosen:
        return [], ""
    target = _target_name(name) + "_kernel_packs"
    stanza = _fill(rctx, "kernel_packs", {
        "%{library}": name,
        "%{name}": target,
        "%{packs}": repr(chosen),
        "%{manifests}": repr([p["label"] for p in packs if not p["target"]]),
    })
    return [":" + target], stanza

def _library_stanza(rctx, name, info, linked_headers, packs, extra_data):
    """The cc_library of one library in //rocm; its files are linked under rocm/include and rocm/lib.
    Its data: the shared library as lib<name>.so, the name XLA's rocm_lib_import globs into data
    (what JAX's rocm_libs_data, XLA's collect_data_files, collects: the .so files of `data`), its
    kernel packs (a multi-arch toolkit's), and `extra_data` (hip: librocm_kpack)."""
    srcs, runtime = [], []
    if info.get("library"):
        rctx.symlink(info["library"], "rocm/lib/" + info["soname_file"])
        srcs = ["lib/" + info["soname_file"]]
        if not info.get("static"):
            unversioned = info["soname_file"].split(".so")[0] + ".so"
            if unversioned != info["soname_file"]:
                rctx.symlink(info["library"], "rocm/lib/" + unversioned)
            runtime = ["lib/" + unversioned]
    packs_data, packs_stanza = _kernel_packs_stanza(rctx, name, packs)
    data = runtime + packs_data + extra_data
    deps = [] if name in ("hip", "hsa-runtime") else [":hip"]
    hdrs = []
    for header in info["headers"]:
        path = "include/" + header
        if path not in linked_headers:
            rctx.symlink(info["include_dir"] + "/" + header, "rocm/" + path)
            linked_headers[path] = True
        hdrs.append(path)
    return packs_stanza + _fill(rctx, "library", {
        "%{name}": _target_name(name),
        "%{hdrs}": repr(hdrs),
        "%{srcs}": repr(srcs),
        "%{deps}": repr(deps),
        "%{data}": repr(data),
    })

def _missing_stanza(rctx, name, package, description):
    message = "the ROCm this build uses (%s) has no %s (its headers are not installed). Install %s (Debian/Ubuntu), or use a toolkit that has it (TheRock tarballs ship every library: --repo_env=THEROCK_URL=...)." % (description, name, package)
    return _fill(rctx, "missing", {"%{name}": _target_name(name), "%{message}": repr(message)})

# ROCm SMI, which AMD SMI replaces: TheRock ships no librocm_smi64 after its #6852, yet JAX's
# //jaxlib/tools:rocm_libs_data still names @local_config_rocm//rocm:rocm_smi for its runtime files.
_SUPERSEDED_SMI = "rocm_smi"

def _absent_smi_stanza(rctx, name, config):
    """rocm_smi missing from a toolkit whose :smi is AMD SMI (ROCm 7.13 on, or AMD SMI alone): an
    empty library, so that what only collects runtime files from it builds; a compile that
    includes its headers fails naming rocm_smi/rocm_smi.h, as it would with XLA's own repository."""
    return "\n# %s: not in this toolkit, whose :smi is %s; empty, so that what collects runtime files\n# from it (JAX's rocm_libs_data) builds.%s" % (
        name,
        config["smi_library"],
        _fill(rctx, "library", {"%{name}": name, "%{hdrs}": "[]", "%{srcs}": "[]", "%{deps}": "[]", "%{data}": "[]"}),
    )

def _toolchain_data(rctx, config):
    """Links the toolkit's clang and device libraries under rocm/ for the toolchain_data filegroup
    (and the toolkit's root as rocm/rocm_dist, rules_ml_toolchain's name for it)."""
    rctx.symlink(config["rocm_toolkit_path"], "rocm/rocm_dist")
    rctx.symlink(config["clang_path"], "rocm/llvm/bin/clang")
    files = ["llvm/bin/clang"]
    if config.get("hipcc_path"):
        rctx.symlink(config["hipcc_path"], "rocm/bin/hipcc")
        files.append("bin/hipcc")
    rctx.symlink(config["device_libs_path"], "rocm/amdgcn/bitcode")
    return repr(files) + ' + glob(["amdgcn/bitcode/*.bc"], allow_empty = True)'

# What clang runs from its own folder for a HIP compile (device link, offload bundle).
_CLANG_TOOLS = ["lld", "ld.lld", "clang-offload-bundler", "clang-offload-packager", "clang-linker-wrapper", "llvm-link"]

# TF_ROCM_TOOLKIT_PATH of a toolkit that exists only inside the build (a TheRock tarball):
# where users conventionally install ROCm.
RUNTIME_ROCM_PATH = "/opt/rocm"

def toolkit_in_inputs(rctx, toolkit_path):
    """Whether the toolkit lies in Bazel's external repositories (an extracted TheRock tarball),
    so that HIP compiles can take it as inputs; a toolkit elsewhere (/opt/rocm, /usr) is the
    machine's, and a remote worker's image must have it at the same path."""
    external = str(rctx.path(".").dirname) + "/"
    return toolkit_path.startswith(external)

def _hip_compiler_files(rctx, config, in_inputs):
    """Links what clang reads beside itself (tools, resource headers, libraries) and HIP's version
    file under rocm/, when the toolkit is in the inputs; returns their glob for hip_compiler_files."""
    if not in_inputs:
        return "[]"
    clang_dir = rctx.path(config["clang_path"]).dirname
    for tool in _CLANG_TOOLS:
        if clang_dir.get_child(tool).exists:
            rctx.symlink(clang_dir.get_child(tool), "rocm/llvm/bin/" + tool)
    llvm_lib = clang_dir.dirname.get_child("lib")
    if llvm_lib.exists:
        rctx.symlink(llvm_lib, "rocm/llvm/lib")
    version = rctx.path(config["rocm_toolkit_path"] + "/share/hip/version")
    if version.exists:
        rctx.symlink(version, "rocm/share/hip/version")
    return repr(["llvm/bin/" + t for t in _CLANG_TOOLS if clang_dir.get_child(t).exists]) + \
           ' + glob(["llvm/lib/clang/**", "llvm/lib/*.so*", "share/hip/version"], allow_empty = True)'

def _rocminfo_stanza(rctx, config, description):
    for candidate in ("bin/rocminfo",):
        path = rctx.path(config["rocm_toolkit_path"] + "/" + candidate)
        if path.exists:
            rctx.symlink(path, "rocm/bin/rocminfo")
            return _fill(rctx, "rocminfo", {})
    message = "the ROCm this build uses (%s) has no bin/rocminfo. Install rocminfo (Debian/Ubuntu), or use a toolkit that has it." % description
    return _fill(rctx, "missing", {"%{name}": "rocminfo", "%{message}": repr(message)})

def _rocm_path_type_stanza(rctx):
    """XLA's build setting and its config_settings, in //rocm of @local_config_rocm, configured or not."""
    return _fill(rctx, "rocm_path_type", {"%{values}": repr(ROCM_PATH_TYPES)})

def _rpath_substitutions(rctx, config):
    """The rocm_rpath linkopts of each rocm_path_type."""
    lib_dirs = sorted({info["library_dir"]: True for info in config["libraries"].values() if info.get("library_dir") and not info.get("static")}.keys())
    output_base = str(rctx.path(".").dirname.dirname)
    system = system_runpath(lib_dirs, output_base)
    link_only = link_only_runpath(config["therock_pip_families"])
    return {
        "%{rocm_path_type}": _rocm_path_type_stanza(rctx),
        "%{rpath_hermetic}": repr(runpath_linkopts(lib_dirs)),
        "%{rpath_link_only}": repr(runpath_linkopts(link_only)),
        "%{rpath_multiple}": repr(runpath_linkopts(link_only + [d for d in system if d != "/opt/rocm/lib"])),
        "%{rpath_system}": repr(runpath_linkopts(system)),
    }

def _find_toolkit(rctx):
    """(where the toolkit comes from, the finder's answer for it): find_rocm_config.py computes
    what the toolkit is, once; fail() names the source and the fix where there is none."""
    description, path, family, archive_url = _toolkit_source(rctx)
    args = [_python(rctx), rctx.path(rctx.attr._finder)]
    requested = rctx.getenv("TF_ROCM_AMDGPU_TARGETS", "")
    if requested.strip():  # else the finder's defaults: JAX's wheel list
        args += ["--require-targets", requested]
    if path:
        args += ["--rocm-path", path]
    if family:
        args += ["--therock-family", family]
    if archive_url:
        args += ["--therock-archive", archive_url]
    hint = ""
    if description.startswith("ROCM_PATH="):  # a variable users export and forget
        hint = "\n(ROCM_PATH comes from --repo_env or the environment Bazel runs in: fix it, unset it (`unset ROCM_PATH`, or --repo_env=ROCM_PATH= to search the default places))"
    result = run_checked(
        rctx,
        args,
        "rocm_configure: no usable ROCm from %s:\n{output}%s" % (description, hint),
        environment = {"ROCM_PATH": ""},
        timeout = 300,
    )
    config = json.decode(result.stdout)
    if config["amdgpu_targets_note"]:  # the defaults did not hold as they are (a TheRock family's)
        # buildifier: disable=print
        print("rocm_configure: %s; change them with --//rocm:amdgpu_targets=... or TF_ROCM_AMDGPU_TARGETS" % config["amdgpu_targets_note"])
    return description, config

def _watch_toolkit(rctx, config):
    """Re-run when the toolkit's own version files change (an upgrade in place), and when a
    library it lacks is installed (its header appears where the finder looked)."""
    if not hasattr(rctx, "watch"):
        return
    for watched in (config["rocm_version_source"].split(" (")[0], config["libraries"]["hip"]["version_source"]):
        if watched and rctx.path(watched).exists:
            rctx.watch(watched)
    for awaited in config["awaited_headers"]:
        rctx.watch(awaited)

def _write_rocm_package(rctx, config, description, in_inputs):
    """rocm/: rocm_config.h and the BUILD file of the libraries, the toolchain and XLA's names."""
    stanzas = []
    linked_headers = {}  # one symlink per header file: include/ may hold symlink loops
    packs = _link_kernel_packs(rctx, config)
    kpack_runtime = _link_kpack_runtime(rctx, config)
    for name in sorted(config["libraries"]):
        if name in config["missing_libraries"]:
            continue  # a runtime without headers: nothing to compile against
        extra = kpack_runtime if name == "hip" else []
        stanzas.append(_library_stanza(rctx, name, config["libraries"][name], linked_headers, packs.get(name, []), extra))
    where = "%s at %s" % (config["layout"], config["rocm_toolkit_path"])
    missing = [
        _absent_smi_stanza(rctx, name, config) if name == _SUPERSEDED_SMI and config["smi_library"] != name else _missing_stanza(rctx, name, config["missing_libraries"][name], where)
        for name in sorted(config["missing_libraries"])
    ]
    libraries = config["libraries"]
    rctx.template("rocm/rocm_config.h", _TEMPLATES["rocm_config_h"], {
        "%{rocm_version_number}": str(config["rocm_version_number"]),
        # XLA's default ROCm root at run time. A toolkit extracted into this output base has
        # no path there, and naming the output base would make every compile that includes
        # this header differ between checkouts (no remote cache hit across them).
        "%{rocm_path}": RUNTIME_ROCM_PATH if in_inputs else config["rocm_toolkit_path"],
        "%{hipblaslt}": "1" if "hipblaslt" not in config["missing_libraries"] else "0",
        "%{miopen_version_number}": str((libraries.get("miopen") or {}).get("version_number", 0)),
    })
    rctx.template("rocm/BUILD.bazel", _TEMPLATES["rocm_build"], _rpath_substitutions(rctx, config) | {
        "%{rocm_version}": config["rocm_version"],
        "%{layout}": config["layout"],
        "%{rocm_path}": config["rocm_toolkit_path"],
        "%{all_hdrs}": repr(sorted(linked_headers.keys())),
        "%{libraries}": "".join(stanzas),
        "%{kernel_packs_bzl}": str(Label("//rocm/private:kernel_packs.bzl")),
        "%{smi}": config["smi_library"],
        "%{toolchain_data}": _toolchain_data(rctx, config),
        "%{hip_compiler_files}": _hip_compiler_files(rctx, config, in_inputs),
        "%{toolkit_in_inputs_note}": _IN_INPUTS_NOTE[in_inputs],
        "%{rocminfo}": _rocminfo_stanza(rctx, config, description),
        "%{missing}": "".join(missing),
        "%{xla_settings}": _xla_settings(rctx),
    })
    _write_rocm_build_defs(rctx, "hipblaslt" not in config["missing_libraries"], config)

def _write_root_package(rctx, config, in_inputs):
    """The repository's root BUILD file: its aliases and the HIP toolchain's facts."""
    named = sorted(config["libraries"].keys() + [n for n in config["missing_libraries"] if n not in config["libraries"]])
    therock = config.get("therock") or {}
    device_code = therock.get("device_code_targets") or []
    rctx.template("BUILD.bazel", _TEMPLATES["build"], {
        "%{rocm_version}": config["rocm_version"],
        "%{layout}": config["layout"],
        "%{rocm_path}": config["rocm_toolkit_path"],
        "%{aliases}": _root_aliases(rctx, named),
        "%{clang}": repr(config["clang_path"]),
        "%{offload_bundler}": repr(config["offload_bundler_path"] or ""),
        # rocm/llvm/bin/ links the bundler where the toolkit is in the inputs (_hip_compiler_files).
        "%{offload_bundler_file}": repr("//rocm:llvm/bin/clang-offload-bundler") if in_inputs and config["offload_bundler_path"] else "None",
        "%{toolkit_in_inputs}": repr(in_inputs),
        "%{clang_version}": repr(config["clang_version"] or ""),
        "%{hip_version}": repr(config["hip_version"] or ""),
        "%{rocm_path_repr}": repr(config["rocm_toolkit_path"]),
        "%{device_libs_path}": repr(config["device_libs_path"]),
        "%{supported_amdgpu_targets}": repr(config["amdgpu_targets_supported"]),
        "%{dist_amdgpu_targets}": repr(device_code),
        "%{dist_allowed_amdgpu_targets}": repr(therock.get("allowed_targets") or []),
        "%{dist_description}": repr(_device_code_description(therock) if device_code else ""),
        "%{dist_remedy}": repr(therock.get("device_code_remedy") or ""),
        "%{compiler_description}": repr("clang %s of ROCm %s" % (config["clang_version"] or "(unknown version)", config["rocm_version"])),
    } | _TOOLCHAIN)

def _write_build_defs(rctx, config, description):
    """build_defs.bzl: what the build's rules and settings read of the configured toolkit."""
    therock = config.get("therock") or {}
    rctx.template("build_defs.bzl", _TEMPLATES["build_defs"], {
        "%{configured}": "True",
        "%{rocm_version_number}": str(config["rocm_version_number"]),
        "%{rocm_release}": repr(config["rocm_release"]),
        "%{rocm_major}": str(config["rocm_major"]),
        "%{amdgpu_targets}": repr(config["amdgpu_targets"]),
        "%{build_info}": repr({
            "rocm_version": config["rocm_version"],
            "hip_version": config["hip_version"],
            "clang_version": config["clang_version"] or "",
            "layout": config["layout"],
            "source": description,
            "therock_family": therock.get("family") or "",
            "wheel_local": config["rocm_wheel_local"],
        }),
        "%{unconfigured_message}": "None",
    })

def _rocm_configure_impl(rctx):
    if not _truthy(rctx.getenv("TF_NEED_ROCM", "0")):
        _write_unconfigured(
            rctx,
            reason = "TF_NEED_ROCM is not 1",
            advice = "add --config=rocm (it sets --repo_env=TF_NEED_ROCM=1); the toolkit comes from ROCM_PATH, THEROCK_URL, or rocm.local()/rocm.therock() in MODULE.bazel",
        )
        return
    description, config = _find_toolkit(rctx)
    _watch_toolkit(rctx, config)
    in_inputs = toolkit_in_inputs(rctx, config["rocm_toolkit_path"])
    _write_rocm_package(rctx, config, description, in_inputs)
    _write_root_package(rctx, config, in_inputs)
    _write_build_defs(rctx, config, description)

    # rocm_config.json: the finder's answer, and what this rule made of it. toolkit_in_inputs
    # True: HIP compiles take clang and the device libraries as inputs by relative paths (any
    # worker runs them); False: by absolute paths, which a remote worker's image must match.
    config = config | {"configured": True, "source": description, "toolkit_in_inputs": in_inputs}
    rctx.file("rocm_config.json", json.encode_indent(config) + "\n")
    rctx.file("hip_action_key.json", _hip_action_key(rctx, config))

def _hip_action_key(rctx, config):
    """The file every HIP compile takes as an input so that a change of toolkit re-runs it.

    A toolkit outside Bazel (/opt/rocm, /usr) is the finder's JSON as it is: clang runs from
    that absolute path. A toolkit in the inputs (a TheRock tarball) lies in this output base,
    whose path differs between checkouts; naming it would make every compile miss the remote
    cache from another checkout. Its key names the toolkit by exec-root-relative paths and
    leaves out the URL it came from: its files are inputs already, so their contents decide."""
    if not config["toolkit_in_inputs"]:
        return json.encode_indent(config) + "\n"
    external = str(rctx.path(".").dirname) + "/"
    key = {name: value for name, value in config.items() if name != "source"}
    return json.encode_indent(key).replace(external, "external/") + "\n"

def _device_code_description(therock):
    """'the TheRock toolkit of family gfx950-dcgpu', for the analysis-time target check."""
    family = therock.get("family")
    if therock.get("device_code_source", "").startswith("its kernel packs"):
        return "the multi-arch TheRock toolkit (per %s)" % therock["device_code_source"]
    if family and therock.get("device_code_source", "").startswith("its family"):
        return "the TheRock toolkit of family %s" % family
    return "the TheRock toolkit%s (per its share/therock/dist_info.json)" % (" of family %s" % family if family else "")

rocm_configure = repository_rule(
    implementation = _rocm_configure_impl,
    doc = "Generates @local_config_rocm from one ROCm toolkit (see this file's docstring for the order).",
    attrs = {
        "toolkit_archive": attr.label(doc = "toolkit.json of the rocm_toolkit_archive repository: which toolkit, from where."),
        "_finder": attr.label(default = Label("//third_party/gpus:find_rocm_config.py")),
    },
    environ = ROCM_CONFIGURE_ENVIRON,
    configure = True,
)

def _archive_suffix(url):
    for suffix in (".tar.gz", ".tgz", ".tar.xz", ".tar.zst", ".tar"):
        if url.endswith(suffix):
            return suffix
    fail("rocm_toolkit_archive: %s is not a .tar.gz/.tar.xz/.tar.zst TheRock tarball; give the URL of the tarball itself." % url)

def _sources_tool(rctx, python, timeout, *args):
    """The JSON answer of third_party/gpus/toolkit_sources.py; its one-line error fails the rule.
    The toolkit names are passed explicitly: the program reads nothing else of the environment."""
    environment = {name: rctx.getenv(name, "") for name in TOOLKIT_SOURCE_ENVIRON}
    result = run_checked(
        rctx,
        [python, rctx.path(rctx.attr._sources)] + list(args),
        "rocm_toolkit_archive: {output}",
        environment = environment,
        timeout = timeout,
    )
    return json.decode(result.stdout)

def _toolkit_json(rctx, source, root = None, url = None, family = ""):
    rctx.file("toolkit.json", json.encode({"source": source, "root": root, "url": url, "family": family}))

def _rocm_toolkit_archive_impl(rctx):
    """Decides where the toolkit comes from (XLA's names in XLA's order, then this project's),
    gets it (download, merge), and records the answer in toolkit.json for rocm_configure."""
    rctx.file("BUILD.bazel", 'exports_files(["toolkit.json"])\n')
    if not _truthy(rctx.getenv("TF_NEED_ROCM", "0")):
        _toolkit_json(rctx, "none (TF_NEED_ROCM is not 1)")  # nothing is read or downloaded
        return
    config_repo = rctx.getenv("TF_ROCM_CONFIG_REPO", "").strip()
    if config_repo:
        fail("rocm_configure: TF_ROCM_CONFIG_REPO=%s names a pre-generated @local_config_rocm, which this project generates itself from a toolkit; unset it and name the toolkit (ROCM_PATH, ROCM_DISTRO_VERSION, ROCM_DISTRO_URL, THEROCK_URL)." % config_repo)
    python = _python(rctx)
    choice = _sources_tool(rctx, python, 60, "choose")
    if choice["note"]:
        # buildifier: disable=print
        print(choice["note"])
    name, value = choice["winner"] or "", rctx.getenv(choice["winner"] or "NONE", "").strip()
    if name == "ROCM_PATH":
        _toolkit_json(rctx, "ROCM_PATH=" + value, root = value)
    elif name == "TF_ROCM_MULTIPLE_PATHS":
        llvm = rctx.getenv("LLVM_PATH", "").strip()
        rctx.report_progress("Merging the ROCm installations of TF_ROCM_MULTIPLE_PATHS")
        _sources_tool(rctx, python, 600, "merge", "--into", "toolkit", *((["--llvm-path", llvm] if llvm else []) + value.split(":")))
        _toolkit_json(rctx, "TF_ROCM_MULTIPLE_PATHS=" + value + (" with LLVM_PATH=" + llvm if llvm else ""), root = str(rctx.path("toolkit")))
    elif name == "ROCM_DISTRO_URL":
        sha256 = rctx.getenv("ROCM_DISTRO_HASH", "").strip()
        if not sha256:
            fail("rocm_toolkit_archive: ROCM_DISTRO_URL=%s is set without ROCM_DISTRO_HASH; XLA requires it, and an unverified toolkit is refused. Add --repo_env=ROCM_DISTRO_HASH=<sha256sum of the tarball>." % value)
        root = _fetch_tarball(rctx, python, [value], sha256, "", rctx.getenv("ROCM_DISTRO_LINKS", "").strip())
        _toolkit_json(rctx, "ROCM_DISTRO_URL=" + value, root = root, url = value)
    elif name == "THEROCK_URL":
        sha256 = rctx.getenv("THEROCK_SHA256", "").strip()
        if not sha256:
            fail("rocm_toolkit_archive: THEROCK_URL=%s is set without THEROCK_SHA256; an unverified toolkit is refused. Add --repo_env=THEROCK_SHA256=<sha256sum of the tarball>." % value)
        root = _fetch_tarball(rctx, python, [value], sha256, rctx.getenv("THEROCK_STRIP_PREFIX", ""), "")
        _toolkit_json(rctx, "THEROCK_URL=" + value, root = root, url = value)
    elif name == "ROCM_DISTRO_VERSION":
        table = _redistribution_table(rctx)
        if not table:
            fail("rocm_toolkit_archive: ROCM_DISTRO_VERSION=%s names an entry of XLA's third_party/gpus/rocm/rocm_redist.bzl, but the XLA tree in use has no redistribution table (the stand-in examples/xla has none). Build with a real XLA (--override_repository=xla=DIR), or name the toolkit: --repo_env=ROCM_PATH=DIR or ROCM_DISTRO_URL=URL with ROCM_DISTRO_HASH." % value)
        distro = _sources_tool(rctx, python, 60, "distro", "--table", str(table), "--name", value)
        links = ",".join(["%s:%s" % (target, link) for target, link in distro["links"]])
        root = _fetch_tarball(rctx, python, [distro["url"]], distro["sha256"], distro["rocm_root"], links)
        _toolkit_json(rctx, "ROCM_DISTRO_VERSION=%s (%s, from XLA's third_party/gpus/rocm/rocm_redist.bzl)" % (value, distro["url"]), root = root, url = distro["url"])
    elif rctx.attr.urls:
        root = _fetch_tarball(rctx, python, rctx.attr.urls, rctx.attr.sha256, rctx.attr.strip_prefix, "")
        _toolkit_json(rctx, "rocm.therock(%s) in MODULE.bazel" % rctx.attr.urls[0], root = root, url = rctx.attr.urls[0], family = rctx.attr.family)
    elif rctx.attr.local_path:
        _toolkit_json(rctx, "rocm.local(path = %s) in MODULE.bazel" % rctx.attr.local_path, root = rctx.attr.local_path)
    else:
        _toolkit_json(rctx, "search of $ROCM_PATH, /opt/rocm, /opt/rocm-* (newest first), /usr")  # find_rocm_config.SEARCH_ORDER_TEXT

def _redistribution_table(rctx):
    """XLA's table of the XLA tree in use (the pin, --override_repository=xla=DIR, full mode's
    module), or None. Looked up from XLA's root package (a missing file there is a path that does
    not exist; a missing package would be a loading error), and only for ROCM_DISTRO_VERSION,
    so that nothing else fetches @xla for it."""
    table = rctx.path(Label("@xla//:MODULE.bazel")).dirname.get_child("third_party/gpus/rocm/rocm_redist.bzl")
    if not table.exists:
        return None
    if hasattr(rctx, "watch"):
        rctx.watch(table)
    return table

def _fetch_tarball(rctx, python, urls, sha256, strip_prefix, links):
    """Downloads (sha256-checked, kept by Bazel's repository cache) and safely extracts a toolkit
    tarball into toolkit/; makes ROCM_DISTRO_LINKS' links in it. Returns the toolkit's root."""
    urls = [u if "://" in u else "file://" + u for u in urls]
    archive = "archive" + _archive_suffix(urls[0])
    rctx.report_progress("Downloading ROCm toolkit %s" % urls[0])
    if not rctx.download(urls, output = archive, sha256 = sha256, allow_fail = True).success:
        _explain_failed_download(rctx, python, urls[0], archive, sha256)
    rctx.report_progress("Extracting %s" % urls[0].split("/")[-1])

    # The strip_prefix is named only when one was given: advice about a setting the user never
    # made sends them looking in the wrong place.
    fix = "fix the tarball or its strip_prefix" if strip_prefix else "fix the tarball"
    run_checked(
        rctx,
        [python, rctx.path(rctx.attr._extractor), "--archive", archive, "--output", "toolkit", "--strip-prefix", strip_prefix],
        "rocm_toolkit_archive: {output}\n(from %s; %s)" % (urls[0], fix),
        timeout = 3600,
    )
    rctx.delete(archive)  # Bazel's repository cache keeps the download
    root = rctx.path("toolkit")
    entries = root.readdir()
    if not strip_prefix and len(entries) == 1 and entries[0].is_dir:
        root = entries[0]  # a tarball with one top-level folder: that folder is the toolkit
    if links:
        _sources_tool(rctx, python, 60, "links", "--root", str(root), links)
    return str(root)

def _explain_failed_download(rctx, python, url, archive, sha256):
    """A download failed: without a network, say how to build offline; otherwise download
    again without allow_fail, so that Bazel's own error (a wrong sha256 with the real one,
    an HTTP status) is what the user reads."""
    host = url.split("://", 1)[-1].split("/", 1)[0].split(":")[0] if url.startswith(("http://", "https://")) else ""
    if host:
        lookup = run_for_answer(rctx, [python, "-c", "import socket, sys; socket.getaddrinfo(sys.argv[1], 443)", host], timeout = 30)
        if lookup.return_code != 0:
            fail(("rocm_toolkit_archive: cannot download %s: the host %s cannot be reached from here (no network?). " +
                  "Download the tarball where there is a network and pass the file: " +
                  "--repo_env=THEROCK_URL=file:///path/%s with THEROCK_SHA256=%s, or put it, under the " +
                  "same name, in a folder given as --distdir=DIR.") % (url, host, url.split("/")[-1], sha256))
    rctx.download([url], output = archive, sha256 = sha256)

rocm_toolkit_archive = repository_rule(
    implementation = _rocm_toolkit_archive_impl,
    doc = "Decides where the toolkit comes from (see this file's docstring), downloads (sha256-checked, cached) and safely extracts a tarball or merges installations; records the answer in toolkit.json.",
    attrs = {
        "urls": attr.string_list(doc = "rocm.therock(): mirrors of one tarball (https://, file://, or an absolute path)."),
        "sha256": attr.string(doc = "SHA-256 of the tarball; required with urls."),
        "strip_prefix": attr.string(doc = "Directory inside the tarball that is the toolkit root."),
        "family": attr.string(doc = "TheRock amdgpu family; default: the finder reads it from the tarball's file name."),
        "local_path": attr.string(doc = "rocm.local(): a toolkit root on disk."),
        "_extractor": attr.label(default = Label("//third_party/gpus:extract_archive.py")),
        "_sources": attr.label(default = Label("//third_party/gpus:toolkit_sources.py")),
    },
    environ = ["TF_NEED_ROCM"] + TOOLKIT_SOURCE_ENVIRON,
)
