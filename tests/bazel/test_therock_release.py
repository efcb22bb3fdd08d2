"""The release command as ROCm's documentation spells it (rocm-jax's README), with TheRock
family tarballs:

    python3 build/ci_build --compiler=clang --python-versions="3.12" --rocm-version="7.10.0a20251120" \\
      --therock-path="https://rocm.nightlies.amd.com/tarball/therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz" dist_wheels

verbatim but for the tarball (a local one of the test's own making, named as TheRock names
them, without dist_info.json so that the family in the name is what limits the targets),
the Python (one the sandbox has), and the sources: the offline stand-ins (--sources=examples:
examples/xla, and examples/jax unless JAX_ROCM_TEST_JAX_TREE names a real JAX tree; so
--allow-stand-ins). Two families, one target each: the defaults follow the family, and the
wheels record targets and family.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, jax_tree_from_env, sandbox
from tests.infra.therock_toolkit import MAKE_TARBALL, VERSION
from tools import fatbin

pytestmark = pytest.mark.bazel

# A real JAX tree when JAX_ROCM_TEST_JAX_TREE is set; else --sources=examples's examples/jax.
JAX_TREE = jax_tree_from_env()

PYTHON = "3.14"  # the sandbox's own


@pytest.fixture(scope="module")
def tarballs(sandbox_root, tmp_path_factory) -> dict[str, Path]:
    """family -> a TheRock tarball of that family, under /tmp (seen by host and sandbox)."""
    www = tmp_path_factory.mktemp("therock")
    script = www / "make.sh"
    script.write_text(MAKE_TARBALL)
    first = www / f"therock-dist-linux-gfx94X-dcgpu-{VERSION}.tar.gz"
    sandbox("run", "--", "sh", str(script), str(first))
    second = www / f"therock-dist-linux-gfx950-dcgpu-{VERSION}.tar.gz"
    second.write_bytes(first.read_bytes())  # the same toolkit: only the name says the family
    return {"gfx94X-dcgpu": first, "gfx950-dcgpu": second}


def rocm_docs_command(therock_path: str, output: Path) -> list[str]:
    return [sys.executable, "build/ci_build", "--compiler=clang", f"--python-versions={PYTHON}", f"--rocm-version={VERSION}",
            f"--therock-path={therock_path}", "dist_wheels", "--sources=examples",
            *([f"--jax-source-dir={JAX_TREE}"] if JAX_TREE else []), "--allow-stand-ins", f"--output-dir={output}"]


def device_targets(wheel: Path, scratch: Path) -> list[str]:
    """The amdgpu targets of the code objects in the wheel's shared libraries."""
    found = set()
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.endswith(".so"):
                found |= set(fatbin.targets(fatbin.read(Path(z.extract(name, scratch)))))
    return sorted(found)


def build_info(wheel: Path) -> dict:
    with zipfile.ZipFile(wheel) as z:
        return json.loads(z.read(next(n for n in z.namelist() if n.endswith("/build_info.json"))))


@pytest.mark.parametrize("family, url, target", [
    ("gfx94X-dcgpu", False, "gfx942"),   # the tarball's path
    # A second family's whole build: the slow tier (docs/testing.md); its refusal below stays.
    pytest.param("gfx950-dcgpu", True, "gfx950", marks=pytest.mark.slow),    # its file:// URL
])
def test_rocms_release_command_builds_wheels_for_the_familys_targets(tarballs, tmp_path, family, url, target):
    tarball = tarballs[family]
    result = subprocess.run(rocm_docs_command(tarball.as_uri() if url else str(tarball), tmp_path / "dist"),
                            cwd=CHECKOUT, capture_output=True, text=True)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-6000:]
    assert f"TheRock family {family}: amdgpu targets {target} (default: JAX's wheel list limited" in result.stderr
    assert f"TheRock family {family}) for amdgpu targets {target}" in result.stderr
    wheels = sorted((tmp_path / "dist").glob("*.whl"))
    assert [w.name.split("-")[0] for w in wheels] == ["jax_rocm7_pjrt", "jax_rocm7_plugin"], wheels
    # The toolkit's version string unchanged (not 7.10.0, XLA's number spelled out again).
    assert f"-cp{PYTHON.replace('.', '')}-" in wheels[1].name and f"+rocm{VERSION}-" in wheels[1].name
    for wheel in wheels:
        assert f"+rocm{VERSION}-" in wheel.name, wheel.name
        with zipfile.ZipFile(wheel) as z:
            metadata = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        assert f"for AMD GPUs (ROCm {VERSION})" in metadata, metadata[:800]
        info = build_info(wheel)
        assert info["amdgpu_targets"] == [target] and info["rocm_therock_family"] == family, (wheel.name, info)
        assert (info["rocm_package_version"], info["rocm_layout"]) == (VERSION, "therock")
        assert info["rocm_source"] == f"THEROCK_URL=file://{tarball}"
    assert device_targets(wheels[1], tmp_path / "unzipped") == [target]  # what the FFI modules really carry


def test_an_explicit_target_outside_the_family_is_refused_at_analysis(tarballs):
    """--//rocm:amdgpu_targets is checked against the family (not only against clang), naming both."""
    tarball = tarballs["gfx950-dcgpu"]
    sha256 = subprocess.run(["sha256sum", str(tarball)], capture_output=True, text=True, check=True).stdout.split()[0]
    result = sandbox("run", "--", "bazel", "build", "--nobuild", "--config=rocm", f"--repo_env=THEROCK_URL=file://{tarball}",
                     f"--repo_env=THEROCK_SHA256={sha256}", "--//rocm:amdgpu_targets=gfx950,gfx942", "//rocm:amdgpu_targets",
                     cwd=CHECKOUT, check=False)
    assert result.returncode != 0
    assert ("--//rocm:amdgpu_targets=gfx950,gfx942: 'gfx942' is not covered by the TheRock toolkit of family gfx950-dcgpu, "
            "which has device code for gfx950 only.") in result.stderr, result.stderr[-3000:]
    assert "Ask only for targets it covers: --//rocm:amdgpu_targets=gfx950, or leave" in result.stderr  # Bazel's flag, not the CLI's
    ok = sandbox("run", "--", "bazel", "build", "--nobuild", "--config=rocm", f"--repo_env=THEROCK_URL=file://{tarball}",
                 f"--repo_env=THEROCK_SHA256={sha256}", "--//rocm:amdgpu_targets=gfx950,gfx9-4-generic", "//rocm:amdgpu_targets",
                 cwd=CHECKOUT, check=False)
    assert ok.returncode == 0, ok.stderr[-3000:]
