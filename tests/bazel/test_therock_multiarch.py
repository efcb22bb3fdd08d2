"""TheRock's multi-arch releases in real builds: a tarball laid out as TheRock's RELEASES.md
describes it (.kpack/ beside bin/ include/ lib/), made of the sandbox's Debian ROCm 7.2.4
(tests/infra/therock_toolkit.py MAKE_MULTIARCH_TARBALL: real HIP headers, runtime, clang and
device libraries; interface stubs of the math libraries; kernel packs of opaque bytes, since
nothing here can run them) and named as a ROCm 10 nightly-BKC release. It ships no
librocm_smi64, as TheRock no longer does.

Proven here: the main job's wheels build from it (jax_rocm10_*), for the targets its packs
hold; @local_config_rocm carries the packs of the build's targets, and no other target's, in
the runfiles of the labels XLA and JAX name; a target the packs lack is refused at analysis
naming the tarball that adds it. Not provable here: a GPU loading those packs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, jax_tree_from_env, sandbox
from tests.infra.therock_toolkit import MAKE_MULTIARCH_TARBALL, MULTIARCH_VERSION

pytestmark = pytest.mark.bazel

JAX_TREE = jax_tree_from_env()
PYTHON = "3.14"  # the sandbox's own
PACKED = ["gfx942", "gfx950", "gfx1100"]  # the targets the tarball's kernel packs hold


@pytest.fixture(scope="module")
def tarball(sandbox_root, tmp_path_factory) -> Path:
    """The full multi-arch tarball, under /tmp (seen by host and sandbox)."""
    www = tmp_path_factory.mktemp("therock-multiarch")
    script = www / "make.sh"
    script.write_text(MAKE_MULTIARCH_TARBALL)
    path = www / f"therock-dist-linux-multiarch-{MULTIARCH_VERSION}.tar.gz"
    sandbox("run", "--", "sh", str(script), str(path), " ".join(PACKED))
    return path


def repo_env(tarball: Path) -> list[str]:
    sha256 = subprocess.run(["sha256sum", str(tarball)], capture_output=True, text=True, check=True).stdout.split()[0]
    return ["--config=rocm", f"--repo_env=THEROCK_URL=file://{tarball}", f"--repo_env=THEROCK_SHA256={sha256}"]


def build_info(wheel: Path) -> dict:
    with zipfile.ZipFile(wheel) as z:
        return json.loads(z.read(next(n for n in z.namelist() if n.endswith("/build_info.json"))))


def test_the_main_jobs_wheels_build_from_a_multi_arch_rocm10_tarball(tarball, tmp_path):
    result = subprocess.run(
        [sys.executable, "build/ci_build", f"--therock-path={tarball}", f"--python-versions={PYTHON}", "--sources=examples",
         *([f"--jax-source-dir={JAX_TREE}"] if JAX_TREE else []), f"--output-dir={tmp_path / 'dist'}", "dist_wheels"],
        cwd=CHECKOUT, capture_output=True, text=True)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-6000:]
    assert f"is ROCm {MULTIARCH_VERSION} (nightly-bkc), by its name: wheels jax_rocm10_pjrt and jax_rocm10_plugin" in log
    wheels = sorted((tmp_path / "dist").glob("*.whl"))
    assert [w.name.split("-")[0] for w in wheels] == ["jax_rocm10_pjrt", "jax_rocm10_plugin"], wheels
    for wheel in wheels:
        info = build_info(wheel)
        # The targets by default: JAX's wheel list within what the packs hold (not the name's).
        assert info["amdgpu_targets"] == PACKED, info
        assert (info["rocm_package_version"], info["rocm_layout"], info["rocm_major"]) == (MULTIARCH_VERSION, "therock", 10)


STARLARK_RUNFILES = "' '.join([f.short_path for f in target.default_runfiles.files.to_list()])"


def runfiles(tarball: Path, label: str, *flags: str) -> list[str]:
    result = sandbox("run", "--", "bazel", "cquery", *repo_env(tarball), *flags, label, "--output=starlark",
                     f"--starlark:expr={STARLARK_RUNFILES}", cwd=CHECKOUT, check=False)
    assert result.returncode == 0 and "Starlark evaluation error" not in result.stderr, result.stderr[-3000:]
    return result.stdout.split()


def test_local_config_rocm_carries_the_packs_of_the_builds_targets_only(tarball):
    names = {label: [Path(f).name for f in runfiles(tarball, f"@local_config_rocm//rocm:{label}", "--//rocm:amdgpu_targets=gfx942")]
             for label in ("hipblas", "hipsolver", "rocsolver", "hipfft", "hiprand", "rccl", "hip_runtime")}
    for label, artifact in (("hipblas", "blas"), ("hipsolver", "blas"), ("rocsolver", "blas"), ("hipfft", "fft"),
                            ("hiprand", "rand"), ("rccl", "rccl")):
        packs = [n for n in names[label] if n.endswith((".kpack", ".kpm"))]
        assert sorted(packs) == [f"{artifact}_lib.kpm", f"{artifact}_lib_gfx942.kpack"], (label, names[label])
    assert "librocm_kpack.so.1" in names["hip_runtime"] and "libamdhip64.so.7" in names["hip_runtime"]
    # Two targets: both their packs.
    two = [Path(f).name for f in runfiles(tarball, "@local_config_rocm//rocm:hipblas", "--//rocm:amdgpu_targets=gfx950,gfx1100")]
    assert sorted(n for n in two if n.endswith(".kpack")) == ["blas_lib_gfx1100.kpack", "blas_lib_gfx950.kpack"]


def test_amd_smi_names_and_a_target_the_packs_lack_is_refused_at_analysis(tarball):
    listed = sandbox("run", "--", "bazel", "query", *repo_env(tarball), "@local_config_rocm//rocm:all",
                     "--output=label_kind", cwd=CHECKOUT, check=False)
    assert listed.returncode == 0, listed.stderr[-3000:]
    kinds = dict(reversed(line.split(" rule ")) for line in listed.stdout.splitlines() if " rule " in line)
    assert kinds["@local_config_rocm//rocm:smi"] == "alias" and "@local_config_rocm//rocm:amdsmi" in kinds
    refused = sandbox("run", "--", "bazel", "build", "--nobuild", *repo_env(tarball), "--//rocm:amdgpu_targets=gfx942,gfx1201",
                      "//rocm:amdgpu_targets", cwd=CHECKOUT, check=False)
    assert refused.returncode != 0
    assert "'gfx1201' is not covered by the multi-arch TheRock toolkit (per its kernel packs (" in refused.stderr, refused.stderr[-3000:]
    assert "which has device code for gfx942 gfx950 gfx1100 only" in refused.stderr
    assert ("or for gfx1201, use a multi-arch TheRock tarball with its kernel packs: the full "
            f"therock-dist-linux-multiarch-{MULTIARCH_VERSION}.tar.gz") in refused.stderr
