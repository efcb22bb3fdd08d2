"""JAX PJRT plugin loader for AMD GPUs (ROCm), as built by jax-rocm-build.

The wheel rule copies this package into the pjrt wheel as ``jax_plugins/xla_rocm<N>/``
(N = ROCm major) next to the native library ``xla_rocm_plugin.so`` and a generated
``build_info.json``; the wheel's entry point ``[jax_plugins] xla_rocm<N>`` makes JAX call
:func:`initialize` once, when it first looks for backends. Nothing here names a ROCm
major: N comes from ``build_info.json`` or else from this module's name.

``build_info.json`` (written by the wheel rule; every key optional for this loader)::

    {
      "jax_version": "0.10.2",                   # jax/jaxlib the plugin was built against
      "rocm_version": "7.2.4",                   # ROCm the native code was built with
      "rocm_major": 7,                           # the N of xla_rocm<N> / jax_rocm<N>_plugin
      "rocm_package_version": "7.2.4",           # as the toolkit states it (TheRock: 7.10.0a20251120)
      "hip_version": "7.2.53211",
      "clang_version": "22.1.8",
      "rocm_layout": "multiarch",                # the finder's layout: therock, therock_pip, opt_rocm, multiarch
      "rocm_source": "...",                      # what chose the toolkit (ROCM_PATH=..., THEROCK_URL=...)
      "rocm_therock_family": "",                 # a TheRock tarball's family (gfx94X-dcgpu ...), else ""
      "amdgpu_targets": ["gfx942", "gfx950"],    # offload architectures compiled in
      "rocm_path_type": "link_only",             # where the .so files look for ROCm (third_party/gpus/private/runpath.bzl)
      "python_tag": "py3",                       # cpXY in the plugin wheel
      "sources": {                               # whose code, by source (the pjrt wheel: xla alone)
          "xla": {"commit": "<sha>", "sha256": "<archive>", "version": "",
                  "origin": "pinned"},           # origin: pinned | override | examples (a stand-in)
          "nanobind": {...}, "xla_ffi_headers": {...}, "com_google_absl": {...},
          "jax": {"origin": "local checkout", ...},  # jax, eigen, xla_python_headers: what their
          "eigen": {...}, "xla_python_headers": {...}},  # repository rule found, not the pin
      "artifacts": {"_linalg.so": {"origin": "jax", "stand_ins": []}},  # each native file: whose
                                                 # code (origin: jax | xla | examples), stand-ins
      "plugin_version": "0.10.2.dev20261128+rocm7.2.4",  # the wheels' PEP 440 version
      "built_by": "jax-rocm-build"
    }

Environment:
  JAX_ROCM_PLUGIN_LIBRARY=/path/to/other.so  load that PJRT library instead (debugging).
  JAX_ROCM_GPU_COUNT=N                       take N as the number of AMD GPUs (no detection).
  JAX_PLATFORMS                              containing ``rocm`` or ``gpu``: register even when
                                             no GPU is detected, so JAX reports its own error.
GPUs are counted without initialising HIP: GPU nodes (simd_count > 0) of the KFD topology
in sysfs, filtered by ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES as the ROCm runtime does;
that logic lives in gpus.py, packed beside this file from pytest_rocm/pytest_rocm/gpus.py, pytest-rocm's.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

# Relative: the wheel renames this package to xla_rocm<N>.
from .gpus import KFD_NODES, hip_visible_count, kfd_gpus, rocr_visible

logger = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parent
LIBRARY_NAME = "xla_rocm_plugin.so"
BUILD_INFO_NAME = "build_info.json"
LIBRARY_VARIABLE = "JAX_ROCM_PLUGIN_LIBRARY"
GPU_COUNT_VARIABLE = "JAX_ROCM_GPU_COUNT"
PLATFORM = "ROCM"  # XLA's platform name for custom calls and FFI targets
PRIORITY = 500  # as the published loader: above CPU
# RCCL keeps its inter-process buffers in /dev/shm; Docker's default of 64 MiB makes
# multi-GPU collectives fail mid-run. The published loader warns at <= 64 MiB; we warn
# below 1 GiB, the size RCCL/NCCL documentation recommends at least.
SHM_MIN_BYTES = 1 << 30
# Modules of the jax_rocm<N>_plugin package that carry FFI targets.
EXTENSION_MODULES = ("rocm_plugin_extension", "_linalg", "_prng", "_solver", "_sparse", "_hybrid", "_rnn", "_triton")
# In these, registrations() also holds legacy custom calls (API version 0): jaxlib's own
# gpu_prng/gpu_solver/gpu_sparse/gpu_rnn take version 1 only for names ending in "_ffi".
SUFFIX_VERSIONED_MODULES = frozenset({"_prng", "_solver", "_sparse", "_rnn"})
NO_GPU_HINT = (
    "check that the amdgpu driver is loaded and that /dev/kfd and /dev/dri are readable and writable "
    "(groups render/video; in a container --device=/dev/kfd --device=/dev/dri), or set JAX_PLATFORMS=cpu "
    "to silence this"
)

_warned: set[str] = set()
_library_path: Path | None = None


# ----------------------------------------------------------------------------- pure helpers


def rocm_major_from_name(module_name: str) -> int | None:
    """7 for ``jax_plugins.xla_rocm7``; None for a name without a ROCm major."""
    match = re.search(r"(?:^|\.)xla_rocm(\d+)$", module_name)
    return int(match.group(1)) if match else None


def read_build_info(path: Path) -> dict[str, Any]:
    """The parsed build_info.json; {} when it is missing or unreadable (logged at debug)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        logger.debug("%s does not exist", path)
        return {}
    except (OSError, ValueError) as e:
        logger.debug("cannot read %s: %s", path, e)
        return {}
    return data if isinstance(data, dict) else {}


def rocm_major(info: Mapping[str, Any], module_name: str) -> int | None:
    """N of xla_rocm<N>: build_info.json's rocm_major, else the module's own name."""
    value = info.get("rocm_major")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return rocm_major_from_name(module_name)


def resolve_library(environ: Mapping[str, str], package_dir: Path) -> tuple[Path | None, str]:
    """The PJRT library to load and, when there is none, why (for a message)."""
    override = environ.get(LIBRARY_VARIABLE, "").strip()
    if override:
        path = Path(override).expanduser()
        if path.is_file():
            logger.debug("using the PJRT library %s from %s instead of %s", path, LIBRARY_VARIABLE,
                         package_dir / LIBRARY_NAME)
            return path.resolve(), ""
        return None, f"{LIBRARY_VARIABLE}={override} does not exist"
    path = package_dir / LIBRARY_NAME
    if path.is_file():
        return path, ""
    return None, f"{path} does not exist"


@dataclasses.dataclass(frozen=True)
class GpuCount:
    count: int
    reason: str  # where the count came from, or why it is zero (for messages)


def count_gpus(environ: Mapping[str, str], root: Path = Path("/")) -> GpuCount:
    """AMD GPUs this process can use, without initialising HIP; root is "/" but for tests."""
    forced = environ.get(GPU_COUNT_VARIABLE, "").strip()
    if forced:
        if forced.isdigit():
            return GpuCount(int(forced), f"{GPU_COUNT_VARIABLE}={forced}")
        _warn_once("forced", f"{GPU_COUNT_VARIABLE}={forced!r} is not a GPU count; ignored")
    nodes = root / KFD_NODES
    shown = Path("/") / KFD_NODES
    gpus = kfd_gpus(nodes)
    if gpus is None:
        if (root / "dev/dxg").exists():  # WSL: no KFD; upstream counts one GPU
            return GpuCount(1, "/dev/dxg (WSL)")
        return GpuCount(0, f"no KFD topology at {shown}: the amdgpu driver is not loaded or /sys is not visible")
    if not gpus:
        return GpuCount(0, f"no GPU node in {shown}")
    count, reason = len(gpus), f"{len(gpus)} GPU node(s) in {shown}"
    if "ROCR_VISIBLE_DEVICES" in environ:
        rvd = environ["ROCR_VISIBLE_DEVICES"]
        count = len(rocr_visible(rvd, gpus))
        reason += f", {count} of them visible with ROCR_VISIBLE_DEVICES={rvd!r}"
    hvd = environ.get("HIP_VISIBLE_DEVICES", "").strip()
    if count and hvd:
        count = hip_visible_count(hvd, count)
        reason += f", {count} with HIP_VISIBLE_DEVICES={hvd!r}"
    if count and not os.access(root / "dev/kfd", os.R_OK | os.W_OK):
        return GpuCount(0, f"{reason}, but /dev/kfd is missing or not readable and writable by this user")
    return GpuCount(count, reason)


def rocm_requested(jax_platforms: str | None) -> bool:
    """Whether JAX_PLATFORMS (or jax_platforms) explicitly asks for ROCm ("rocm" or "gpu")."""
    return bool({p.strip().lower() for p in (jax_platforms or "").split(",")} & {"rocm", "gpu"})


def shm_warning(gpu_count: int, shm_bytes: int | None, prefix: str = "jax_rocm") -> str | None:
    """The /dev/shm warning for gpu_count GPUs and a /dev/shm of shm_bytes (None: missing)."""
    if gpu_count < 2 or (shm_bytes is not None and shm_bytes >= SHM_MIN_BYTES):
        return None
    size = "missing" if shm_bytes is None else f"only {shm_bytes / (1 << 20):.0f} MiB"
    return (f"{prefix}: {gpu_count} GPUs but /dev/shm is {size} (less than {SHM_MIN_BYTES >> 20} MiB); "
            "RCCL collectives across GPUs may fail, give /dev/shm more (e.g. docker run --shm-size=16g)")


def shm_bytes(path: Path = Path("/dev/shm")) -> int | None:
    """Total size of the file system at path; None if it does not exist."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_frsize * st.f_blocks


def api_version(module: str, target: str) -> int:
    """The custom-call API version of target in module's registrations(), as jaxlib has it."""
    if module in SUFFIX_VERSIONED_MODULES:
        return 1 if target.endswith("_ffi") else 0
    return 1


# ----------------------------------------------------------------------------- the loader


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.warning("%s", message)


def build_info() -> dict[str, Any]:
    """What this plugin was built from, for bug reports and ``jax.print_environment_info``-like use.

    The keys of build_info.json (see the module docstring; absent when it is missing) and:
      ``library_path``: the PJRT library loaded (or to be loaded, with JAX_ROCM_PLUGIN_LIBRARY
      applied) as a string, None when there is none;
      ``module``: this package's name, e.g. ``jax_plugins.xla_rocm7``.
    """
    info = read_build_info(PACKAGE_DIR / BUILD_INFO_NAME)
    path = _library_path or resolve_library(os.environ, PACKAGE_DIR)[0]
    return {**info, "library_path": str(path) if path else None, "module": __name__}


def _jax_platforms(environ: Mapping[str, str]) -> str | None:
    try:
        from jax._src import config  # the value jax.config.update may have set
        return config.jax_platforms.value
    except Exception:  # a stand-in jax, or a jax without it
        return environ.get("JAX_PLATFORMS")


def _plugin_options(xla_client: Any) -> dict[str, Any]:
    generate = getattr(xla_client, "generate_pjrt_gpu_plugin_options", None)
    if generate is None:
        logger.debug("xla_client.generate_pjrt_gpu_plugin_options is missing; default options")
        options: dict[str, Any] = {}
    else:
        options = dict(generate())  # ValueError on a bad XLA_PYTHON_CLIENT_* variable
    options["platform_name"] = PLATFORM
    return options


# "libamdhip64.so.7: cannot open shared object file: No such file or directory"
_MISSING_LIBRARY = re.compile(r"(lib[\w.+-]*\.so[\w.]*): cannot open shared object file")


def rocm_search_places(site_packages: Path, rocm_path_type: str) -> list[str]:
    """Where the modules' RUNPATH (third_party/gpus/private/runpath.bzl, recorded as build_info.json's
    rocm_path_type) makes the loader look for ROCm, in order, as paths a user can check."""
    places = []
    if rocm_path_type in ("link_only", "multiple"):
        places += [f"{site_packages}/_rocm_sdk_core/lib", f"{site_packages}/_rocm_sdk_libraries[_<family>]/lib",
                   f"{site_packages}/rocm/lib", "/opt/rocm/lib"]
    if rocm_path_type in ("system", "multiple"):
        places += ["/opt/rocm/lib", "the build machine's ROCm"]
    places += ["LD_LIBRARY_PATH", "the system's library path (ld.so.cache, /usr/lib)"]
    return list(dict.fromkeys(places))


def missing_rocm_libraries(errors: Mapping[str, str]) -> dict[str, list[str]]:
    """{library: [modules that need it]} from the modules' import errors ({module: message})."""
    missing: dict[str, list[str]] = {}
    for module, message in errors.items():
        match = _MISSING_LIBRARY.search(message)
        if match:
            missing.setdefault(match[1], []).append(module)
    return missing


def missing_rocm_message(prefix: str, missing: Mapping[str, Sequence[str]], places: Sequence[str]) -> str:
    """One line: which ROCm library is missing, for which modules, and where it was looked for."""
    libraries = ", ".join(f"{lib} (needed by {', '.join(mods)})" for lib, mods in missing.items())
    return (f"{prefix}: ROCm library {libraries} not found; searched {', '.join(places)}. Install ROCm in one of "
            f"them (TheRock's pip packages, or /opt/rocm) or add its lib folder to LD_LIBRARY_PATH; JAX's ROCm "
            f"custom calls (linalg, prng, ...) are unavailable until then")


def _import_extensions(package: str, prefix: str, rocm_path_type: str = "link_only") -> list[tuple[str, ModuleType]]:
    try:
        root = importlib.import_module(package)
    except ImportError as e:
        logger.debug("%s is not installed (%s): no ROCm FFI targets (linalg, prng, ...)", package, e)
        return []
    modules, errors = [], {}
    for name in EXTENSION_MODULES:
        full = f"{package}.{name}"
        try:
            modules.append((name, importlib.import_module(full)))
        except ModuleNotFoundError as e:
            if e.name != full:
                errors[full] = str(e)
            else:
                logger.debug("%s is not in this build", full)
        except ImportError as e:
            errors[full] = str(e)
    missing = missing_rocm_libraries(errors)
    if missing:
        site_packages = Path(getattr(root, "__file__", None) or PACKAGE_DIR).resolve().parent.parent
        _warn_once("missing-rocm", missing_rocm_message(prefix, missing, rocm_search_places(site_packages, rocm_path_type)))
    for full, message in errors.items():
        if not _MISSING_LIBRARY.search(message):
            _warn_once(full, f"{prefix}: cannot load {full}: {message}")
    return modules


def _call(fn_name: str, module: ModuleType) -> dict[str, Any]:
    fn = getattr(module, fn_name, None)
    return dict(fn()) if callable(fn) else {}


def register_ffi(c_api: Any, modules: Sequence[tuple[str, ModuleType]], prefix: str) -> int:
    """Routes ROCM custom calls to the plugin and registers the modules' FFI types and
    targets; returns how many targets were registered. Failures are logged per target."""
    import jax.ffi
    from jax._src.lib import xla_client

    extension = dict(modules).get("rocm_plugin_extension")
    if extension is not None:
        # Without these handlers xla_client queues every ROCM registration forever.
        xla_client.register_custom_type_handler(PLATFORM, functools.partial(extension.register_custom_type, c_api))
        xla_client.register_custom_call_handler(
            PLATFORM, functools.partial(extension.register_custom_call_target, c_api))
        if hasattr(extension, "compile_triton_to_asm"):
            try:
                from jax._src.lib import triton
                triton.register_compilation_handler(
                    PLATFORM, functools.partial(extension.compile_triton_to_asm, c_api))
            except Exception as e:
                logger.debug("no Triton compilation handler for %s: %s", PLATFORM, e)
    elif modules:
        _warn_once("extension", f"{prefix}: rocm_plugin_extension is missing from the plugin package; "
                                "ROCm custom calls (linalg, prng, ...) will not work")
    registered, failed = 0, []
    for name, module in modules:
        for type_name, registration in {**_call("ffi_types", module), **_call("type_registrations", module)}.items():
            try:
                jax.ffi.register_ffi_type(type_name, registration, platform=PLATFORM)
            except Exception as e:
                failed.append(f"type {type_name} ({name}): {e}")
        targets = [(t, fn, 1) for t, fn in _call("ffi_handlers", module).items()]
        targets += [(t, fn, api_version(name, t)) for t, fn in _call("registrations", module).items()]
        for target, fn, version in targets:
            try:
                jax.ffi.register_ffi_target(target, fn, platform=PLATFORM, api_version=version)
                registered += 1
            except Exception as e:
                failed.append(f"{target} ({name}): {e}")
    if failed:
        _warn_once("ffi-some", f"{prefix}: {len(failed)} FFI registration(s) failed, the first: {failed[0]}")
    return registered


def initialize(environ: Mapping[str, str] | None = None, root: Path | str = "/") -> None:
    """Registers the ROCm PJRT plugin with JAX; JAX calls this with no arguments.

    Never raises: without a GPU (or library) it logs one warning and registers nothing, so
    JAX uses the CPU; unexpected errors are logged in one line and registration is skipped.
    """
    environ = os.environ if environ is None else environ
    info = read_build_info(PACKAGE_DIR / BUILD_INFO_NAME)
    major = rocm_major(info, __name__)
    prefix = f"jax_rocm{major}" if major else "jax_rocm"
    try:
        _initialize(environ, Path(root), info, major, prefix)
    except Exception as e:  # JAX must keep working on the CPU
        _warn_once("unexpected", f"{prefix}: ROCm plugin not registered, JAX will use the CPU: "
                                 f"{type(e).__name__}: {e}")


def _initialize(environ: Mapping[str, str], root: Path, info: Mapping[str, Any], major: int | None,
                prefix: str) -> None:
    global _library_path
    library, why = resolve_library(environ, PACKAGE_DIR)
    if library is None:
        if environ.get(LIBRARY_VARIABLE, "").strip() or info:  # a built wheel should have it
            _warn_once("library", f"{prefix}: {why}; ROCm plugin not registered, JAX will use the CPU")
        else:
            logger.debug("%s; ROCm plugin not registered", why)
        return
    _library_path = library

    gpus = count_gpus(environ, root)
    platforms = _jax_platforms(environ)
    if gpus.count == 0 and not rocm_requested(platforms):
        if (platforms or "").strip():  # the user chose other platforms: stay quiet
            logger.debug("%s: no AMD GPU (%s)", prefix, gpus.reason)
        else:
            _warn_once("no-gpu", f"{prefix}: no AMD GPU found ({gpus.reason}); JAX will use the CPU; {NO_GPU_HINT}")
        return
    logger.debug("%s: %d AMD GPU(s): %s", prefix, gpus.count, gpus.reason)
    message = shm_warning(gpus.count, shm_bytes(root / "dev/shm"), prefix)
    if message:
        _warn_once("shm", message)

    import jax._src.xla_bridge as xb
    from jax._src.lib import xla_client

    if "rocm" in getattr(xb, "_backend_factories", {}):
        _warn_once("duplicate", f"{prefix}: another ROCm PJRT plugin is already registered; {library} not loaded "
                                "(install only one jax-rocm<N>-pjrt)")
        return
    options = _plugin_options(xla_client)
    c_api = xb.register_plugin("rocm", priority=PRIORITY, library_path=str(library), options=options)
    if c_api is None:
        logger.debug("%s: register_plugin returned no C API; no FFI targets", prefix)
        return
    if major is None:
        logger.debug("%s: ROCm major unknown (no build_info.json, module %s); no FFI targets", prefix, __name__)
        return
    modules = _import_extensions(f"jax_rocm{major}_plugin", prefix, str(info.get("rocm_path_type") or "link_only"))
    try:
        count = register_ffi(c_api, modules, prefix)
    except Exception as e:
        _warn_once("ffi", f"{prefix}: ROCm plugin registered, but its FFI targets (linalg, prng, ...) are not: "
                          f"{type(e).__name__}: {e}")
        return
    logger.debug("%s: registered %d FFI targets from %d modules", prefix, count, len(modules))
