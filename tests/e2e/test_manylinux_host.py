"""The wheels where JAX's users are, not in the sandbox that built them.

The README's main command builds them with the manylinux_2_28 toolchain (Zig's clang for
glibc 2.28, toolchains/manylinux). Then:

* on this host itself (Debian 12, glibc 2.36, Debian's own Python 3.11): a fresh venv with
  real jax and jaxlib 0.10.2 from PyPI takes our two wheels (pip refused the old
  manylinux_2_38 ones here); `import jax` discovers the plugin, says once that there is no
  AMD GPU and runs on CPU; with JAX_ROCM_GPU_COUNT=1 JAX_PLATFORMS=rocm JAX loads our PJRT
  library, which answers with its own no-device error, not a loader or glibc error.
* in a Debian bullseye root (glibc 2.31, tests.infra.bullseye_root): bullseye's python3 loads
  the PJRT library with ctypes and calls GetPjrtApi.

What the host can honestly check: the PJRT library links nothing of ROCm (the stand-in
plugin of examples/xla), so it loads and runs here in full. JAX's FFI modules in the plugin
wheel link Debian's ROCm 7.2 libraries (libamdhip64.so.7, libhipsolver.so.1 ...), which this
host does not have: their loading is checked in the sandbox (tests/e2e/test_wheels.py,
tests/bazel/test_manylinux_toolchain.py), and here only that their absence is handled
gracefully (JAX still starts) and that the loader's complaint is the missing ROCm library,
never a glibc version.
"""

from __future__ import annotations

import ctypes.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, sandbox, sandbox_environment
from tests.infra.host_venv import make_host_venv
from tools.venvs import ensure_venv

pytestmark = pytest.mark.e2e

MAIN_JOB = ["build/ci_build", "--sources=examples", "dist_wheels", "--allow-stand-ins"]  # release wheels of the README's demo
PROBE = CHECKOUT / "tests" / "e2e" / "probes" / "get_pjrt_api.py"
PJRT_LIBRARY = "jax_plugins/xla_rocm7/xla_rocm_plugin.so"


def host_glibc() -> tuple[int, int]:
    major, minor = os.confstr("CS_GNU_LIBC_VERSION").split()[1].split(".")[:2]
    return int(major), int(minor)


@pytest.fixture(scope="module")
def wheels(sandbox_root, tmp_path_factory) -> list[Path]:
    """The README's main command (its output in a folder of the test's own): the pjrt wheel and
    one plugin wheel per Python, this host's 3.11 among them."""
    output = tmp_path_factory.mktemp("dist")
    result = subprocess.run([sys.executable, *MAIN_JOB, f"--output-dir={output}"], cwd=CHECKOUT, capture_output=True, text=True)
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    return sorted(output.glob("*.whl"))


@pytest.fixture(scope="module")
def host_venv(wheels, tmp_path_factory) -> Path:
    # Both wheels from their folder, by name: pip must accept their platform tag on this host.
    return make_host_venv(tmp_path_factory.mktemp("host-venv"), wheels[0].parent)


def on_host(python: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    """`python -c CODE` on the host with a clean environment: only PATH, HOME and `env`."""
    base = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}
    return subprocess.run([str(python), "-c", code], env=base | env, capture_output=True, text=True, timeout=600)


def test_every_wheel_is_manylinux_2_28(wheels):
    names = [w.name for w in wheels]
    assert any(n.startswith("jax_rocm7_pjrt-") for n in names) and any(n.startswith("jax_rocm7_plugin-") for n in names)
    assert all(n.endswith("-manylinux_2_28_x86_64.whl") for n in names), names


def test_auditwheel_certifies_manylinux_2_28_for_every_wheel(wheels):
    """auditwheel's own verdict, through build/ci_build_cli/wheel_audit.py (ROCm libraries excluded)."""
    python = ensure_venv("tools", CHECKOUT / "requirements-tools.txt", "test")
    result = subprocess.run([str(python), "-m", "ci_build_cli.wheel_audit", "--json", "--manylinux=manylinux_2_28", *map(str, wheels)],
                            env=sandbox_environment(), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    verdicts = json.loads(result.stdout)
    assert set(verdicts) == {w.name for w in wheels}, verdicts
    for name, verdict in verdicts.items():
        assert verdict["ok"] and verdict["too_new"] == [] and verdict["foreign_libraries"] == [], (name, verdict)
        # The symbols may meet an older policy too; never a newer one.
        assert tuple(map(int, verdict["platform_tag"].split("_")[1:3])) <= (2, 28), (name, verdict["platform_tag"])


def test_this_host_is_older_than_the_sandbox_that_built_them(sandbox_root):
    """The point of the tests here: the wheels run on a glibc older than the one they were built
    beside (Debian 12's 2.36 against sid's), yet no older than the policy's 2.28."""
    built_beside = tuple(int(n) for n in sandbox("run", "--", "getconf", "GNU_LIBC_VERSION").stdout.split()[1].split(".")[:2])
    if host_glibc() >= built_beside:
        pytest.skip(f"this host's glibc {host_glibc()} is not older than the sandbox's {built_beside}: run on an older host")
    assert (2, 28) <= host_glibc() < built_beside


def test_pip_installs_both_wheels_next_to_real_jax(host_venv):
    result = on_host(host_venv, "import importlib.metadata as m; "
                                "print(m.version('jax'), m.version('jax-rocm7-plugin'), m.version('jax-rocm7-pjrt'))")
    jax_version, plugin, pjrt = result.stdout.split()
    assert jax_version == "0.10.2" and plugin == pjrt and plugin.startswith("0.10.2+rocm")


def test_import_jax_discovers_the_plugin_says_no_gpu_once_and_runs_on_cpu(host_venv):
    result = on_host(host_venv, "import jax, jax.numpy as jnp; print(jax.devices()); print(float(jnp.arange(4.0).sum()))")
    assert result.returncode == 0, result.stderr
    assert "CpuDevice" in result.stdout and "6.0" in result.stdout
    assert "Traceback" not in result.stderr
    messages = [line for line in result.stderr.splitlines() if "AMD GPU" in line]
    assert len(messages) == 1, result.stderr
    assert "GLIBC" not in result.stderr


def test_with_a_forced_gpu_count_our_pjrt_library_loads_and_answers_no_devices(host_venv):
    result = on_host(host_venv, "import jax; jax.devices('rocm')", JAX_ROCM_GPU_COUNT="1", JAX_PLATFORMS="rocm")
    assert result.returncode != 0
    assert "example plugin: no devices" in result.stderr, result.stderr[-3000:]
    for loader_error in ("GLIBC_", "GLIBCXX_", "version `", "cannot open shared object file: No such file or directory: "
                         + PJRT_LIBRARY):
        assert loader_error not in result.stderr, result.stderr[-3000:]


def test_the_ffi_modules_fail_here_only_for_want_of_rocm(host_venv):
    """This host has no ROCm: importing a module that links libamdhip64 must fail naming a ROCm
    library, never a symbol version of glibc or of a C++ library."""
    code = ("import importlib, json\nout = {}\nfor m in ('_prng', '_linalg', '_solver', '_sparse', '_hybrid', '_rnn'):\n"
            "    try:\n        importlib.import_module('jax_rocm7_plugin.' + m); out[m] = 'loaded'\n"
            "    except ImportError as e:\n        out[m] = str(e)\nprint(json.dumps(out))")
    if ctypes.util.find_library("amdhip64"):
        pytest.skip("this host has libamdhip64: the test needs a host without ROCm")
    result = on_host(host_venv, code)
    assert result.returncode == 0, result.stderr
    outcomes = json.loads(result.stdout)
    assert sorted(outcomes) == sorted(["_prng", "_linalg", "_solver", "_sparse", "_hybrid", "_rnn"]), outcomes
    for module, outcome in outcomes.items():
        assert outcome != "loaded", (module, outcome)
        assert "version `" not in outcome and "GLIBC" not in outcome, (module, outcome)
        assert any(lib in outcome for lib in ("libamdhip64", "libhip", "librocsolver", "libMIOpen", "libhsa")), (module, outcome)


@pytest.fixture(scope="module")
def pjrt_library(wheels, tmp_path_factory) -> Path:
    wheel = next(w for w in wheels if w.name.startswith("jax_rocm7_pjrt-"))
    out = tmp_path_factory.mktemp("pjrt")
    with zipfile.ZipFile(wheel) as z:
        target = out / Path(PJRT_LIBRARY).name
        target.write_bytes(z.read(PJRT_LIBRARY))
    return target


@pytest.mark.skipif(os.geteuid() != 0 or not (shutil.which("debootstrap") or Path("/usr/sbin/debootstrap").exists()),
                    reason="a bullseye root needs root and debootstrap")
def test_bullseye_python_loads_the_pjrt_library_and_gets_its_api(pjrt_library):
    tool = [sys.executable, "-m", "tests.infra.bullseye_root"]
    subprocess.run(tool + ["ensure"], cwd=CHECKOUT, check=True)
    info = subprocess.run(tool + ["info"], cwd=CHECKOUT, capture_output=True, text=True, check=True).stdout
    assert "2.31" in info, info
    result = subprocess.run(tool + ["run", str(pjrt_library), str(PROBE), "--", "python3", PROBE.name, "./" + pjrt_library.name],
                            cwd=CHECKOUT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["glibc"] == "2.31" and report["loaded"] and not report["api_is_null"], report
    major, minor = report["api_version"]
    assert (major, minor) >= (0, 1) and report["struct_size"] > 0, report
