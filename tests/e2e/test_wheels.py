"""The wheels as users get them: built by `build/ci_build --sources=examples dist_wheels`,
installed into a fresh venv next to real jax/jaxlib 0.10.2 from PyPI.

The venv lives in the sandbox (Debian sid, Python 3.14), the system the wheels were
built on: their manylinux policy follows the build system's glibc (the audit certifies
it), which is newer than this host's.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, sandbox

pytestmark = pytest.mark.e2e

SANDBOX_PYTHON = "3.14"
JAX = ["jax==0.10.2", "jaxlib==0.10.2"]


def host_python_has_headers() -> bool:
    return Path(sysconfig.get_paths()["include"], "Python.h").exists()


def dist_wheels(checkout: Path, output: Path) -> tuple[list[Path], str]:
    result = subprocess.run([sys.executable, "build/ci_build", "--sources=examples", "dist_wheels", f"--output-dir={output}"],
                            cwd=checkout, capture_output=True, text=True)
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    wheels = sorted(output.glob("*.whl"))
    assert wheels and all(w.name in result.stdout for w in wheels), "the summary table lists every wheel"
    return wheels, result.stderr


@pytest.fixture(scope="session")
def built(sandbox_root, tmp_path_factory) -> tuple[list[Path], str]:
    return dist_wheels(CHECKOUT, tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def wheels(built) -> list[Path]:
    return built[0]


@pytest.fixture(scope="session")
def jax_venv(tmp_path_factory, wheels) -> Path:
    """A fresh venv in the sandbox with jax/jaxlib 0.10.2 from PyPI, then our plugin wheel
    from a --find-links folder."""
    root = tmp_path_factory.mktemp("venv")
    python = root / "bin" / "python"
    sandbox("run", "--", f"python{SANDBOX_PYTHON}", "-m", "venv", str(root))
    sandbox("run", "--", str(python), "-m", "pip", "install", "-q", *JAX)
    # Only the plugin wheel is named: pip must find the pjrt wheel it requires, by its pinned version.
    install = sandbox("run", "--", str(python), "-m", "pip", "install", "--no-index", "--find-links",
                      str(wheels[0].parent), "jax-rocm7-plugin", check=False)
    assert install.returncode == 0, install.stdout + install.stderr
    return python


def in_venv(python: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`python ARGS` in the sandbox, with only the variables given (JAX_*, HIP_* ... unset)."""
    extra = [a for k, v in env.items() for a in ("--env", f"{k}={v}")]
    return sandbox("run", *extra, "--", str(python), *args, check=False, timeout=600)


def run_python(python: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    return in_venv(python, "-c", code, **env)


def test_every_python_found_gets_a_plugin_wheel_and_the_audit_tags_them(built):
    wheels, log = built
    names = [w.name for w in wheels]
    expected = {"cp314"} | ({"cp%d%d" % sys.version_info[:2]} if host_python_has_headers() else set())
    assert {n.split("-")[2] for n in names if n.startswith("jax_rocm7_plugin-")} == expected
    assert sum(n.startswith("jax_rocm7_pjrt-") and "-py3-none-" in n for n in names) == 1
    tags = {n.rsplit("-", 1)[1].removesuffix(".whl") for n in names}
    assert len(tags) == 1 and tags.pop().startswith("manylinux_2_"), names
    assert "auditing the manylinux policy" in log


def test_plugin_wheel_pulls_the_pjrt_wheel_of_the_same_version(jax_venv, wheels):
    listing = run_python(jax_venv, "import importlib.metadata as m; print(m.version('jax-rocm7-plugin'), m.version('jax-rocm7-pjrt'))")
    plugin_version, pjrt_version = listing.stdout.split()
    assert plugin_version == pjrt_version and "+rocm7.2.4" in plugin_version


def test_jax_discovers_the_plugin_entry_point(jax_venv):
    result = run_python(jax_venv, "import importlib.metadata as m; print([e.value for e in m.entry_points(group='jax_plugins')])")
    assert "jax_plugins.xla_rocm7" in result.stdout


def test_without_a_gpu_jax_runs_on_cpu_with_one_clear_message(jax_venv):
    result = run_python(jax_venv, "import jax; print(jax.devices())")
    assert result.returncode == 0, result.stderr
    assert "CpuDevice" in result.stdout
    assert "Traceback" not in result.stderr
    messages = [line for line in result.stderr.splitlines() if "AMD GPU" in line]
    assert len(messages) == 1, result.stderr


def test_with_a_forced_gpu_count_jax_reaches_our_pjrt_library(jax_venv):
    result = run_python(jax_venv, "import jax; jax.devices('rocm')", JAX_ROCM_GPU_COUNT="1", JAX_PLATFORMS="rocm")
    assert result.returncode != 0
    assert "example plugin: no devices" in result.stderr


def test_build_info_says_what_the_wheels_were_built_from(jax_venv):
    result = run_python(jax_venv, "import json, jax_plugins.xla_rocm7 as p; print(json.dumps(p.build_info()))")
    info = json.loads(result.stdout)
    assert info["rocm_version"] == "7.2.4" and info["rocm_major"] == 7 and info["jax_version"] == "0.10.2"
    assert info["plugin_version"] == "0.10.2+rocm7.2.4"
    assert info["amdgpu_targets"][:3] == ["gfx908", "gfx90a", "gfx942"]
    assert info["sources"]["xla"]["origin"] == info["sources"]["jax"]["origin"] == "override"
    assert info["sources"]["nanobind"] | {"origin": "pinned"} == info["sources"]["nanobind"]
    assert info["library_path"].endswith("jax_plugins/xla_rocm7/xla_rocm_plugin.so")


def test_the_plugin_package_says_what_it_was_built_for(jax_venv):
    result = run_python(jax_venv, "import json, jax_rocm7_plugin as p; print(json.dumps(p.build_info()))")
    info = json.loads(result.stdout)
    assert info["python_tag"] == "cp314" and info["rocm_version"] == "7.2.4"


def test_wheel_metadata_passes_the_standard_checkers(wheels, tmp_path):
    for wheel in wheels:
        subprocess.run([sys.executable, "-m", "wheel", "unpack", "-d", str(tmp_path), str(wheel)], check=True, capture_output=True)
        with zipfile.ZipFile(wheel) as z:
            names = z.namelist()
            record = z.read(next(n for n in names if n.endswith(".dist-info/RECORD"))).decode()
            meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
            wheel_file = z.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
        assert "Root-Is-Purelib: false" in wheel_file
        assert "ROCm 7.2.4" in meta and "ROCm:unknown" not in meta
        assert len(record.strip().splitlines()) == len(names)
    checked = subprocess.run([sys.executable, "-m", "check_wheel_contents", *map(str, wheels)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    twine = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, wheels)], capture_output=True, text=True)
    assert twine.returncode == 0, twine.stdout + twine.stderr


def test_two_builds_from_different_checkouts_are_byte_identical(wheels, scratch_checkout, tmp_path):
    again, _ = dist_wheels(scratch_checkout, tmp_path / "dist")
    digest = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    assert {w.name: digest(w) for w in again} == {w.name: digest(w) for w in wheels}


def run_smoke(python: Path, **env: str) -> subprocess.CompletedProcess:
    return in_venv(python, "-m", "jax_plugins.xla_rocm7.smoke", "--size", "64", **env)


def test_the_smoke_test_says_there_is_no_gpu_and_exits_2(jax_venv):
    result = run_smoke(jax_venv)
    assert result.returncode == 2, result.stdout + result.stderr
    assert '"rocm_version": "7.2.4"' in result.stdout and "devices: [CpuDevice" in result.stdout
    (line,) = [l for l in result.stdout.splitlines() if l.startswith("smoke:")]
    assert line.startswith("smoke: no AMD GPU is usable here (") and "Traceback" not in result.stderr


def test_the_smoke_test_reports_a_backend_that_cannot_start_with_exit_3(jax_venv):
    result = run_smoke(jax_venv, JAX_ROCM_GPU_COUNT="1")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "JAX could not start the ROCm backend" in result.stdout and "example plugin: no devices" in result.stdout
