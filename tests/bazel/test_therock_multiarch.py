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
        assert info["rocm_path_type"] == "link_only"
    # The names JAX's plugin discovery looks for by ROCm major (jax_plugins.xla_rocm10, jax_rocm10_plugin).
    pjrt, plugin = (zipfile.ZipFile(w) for w in wheels)
    names = pjrt.namelist()
    assert {"jax_plugins/xla_rocm10/xla_rocm_plugin.so", "jax_plugins/xla_rocm10/__init__.py",
            "jax_plugins/xla_rocm10/gpus.py"} <= set(names), names  # gpus.py: the loader imports it
    assert "xla_rocm10 = jax_plugins.xla_rocm10" in pjrt.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    names = plugin.namelist()
    assert any(n.startswith(f"jax_rocm10_plugin/_solver.cpython-{PYTHON.replace('.', '')}") for n in names), names
    assert "Requires-Dist: jax-rocm10-pjrt==" in plugin.read(next(n for n in names if n.endswith("METADATA"))).decode()


# One line per target: its label, then the file names of its runfiles.
STARLARK_RUNFILES = "' '.join([str(target.label)] + [f.basename for f in target.default_runfiles.files.to_list()])"

# The labels JAX's //jaxlib/tools:rocm_libs_data collects runtime files from (JAX after 0.10.2).
ROCM_LIBS_DATA = ("hip_runtime", "hipblas", "hipfft", "hiprand", "hipsolver", "rccl", "rocsolver", "miopen", "rocm_smi")


def runfiles(tarball: Path, labels, *flags: str) -> dict[str, list[str]]:
    """label name -> the file names of its runfiles, for @local_config_rocm//rocm:<label> (one cquery)."""
    query = " + ".join(f"@local_config_rocm//rocm:{label}" for label in labels)
    result = sandbox("run", "--", "bazel", "cquery", *repo_env(tarball), *flags, query, "--output=starlark",
                     f"--starlark:expr={STARLARK_RUNFILES}", cwd=CHECKOUT, check=False)
    assert result.returncode == 0 and "Starlark evaluation error" not in result.stderr, result.stderr[-3000:]
    found = {line.split()[0].rsplit(":", 1)[1]: line.split()[1:] for line in result.stdout.splitlines() if line.strip()}
    assert set(found) == {"hip" if label == "hip_runtime" else label for label in labels}, found.keys()
    return found


def test_local_config_rocm_carries_the_packs_of_the_builds_targets_only(tarball):
    names = runfiles(tarball, ROCM_LIBS_DATA, "--//rocm:amdgpu_targets=gfx942")
    for label, artifact in (("hipblas", "blas"), ("hipsolver", "blas"), ("rocsolver", "blas"), ("hipfft", "fft"),
                            ("hiprand", "rand"), ("rccl", "rccl")):
        packs = [n for n in names[label] if n.endswith((".kpack", ".kpm"))]
        assert sorted(packs) == [f"{artifact}_lib.kpm", f"{artifact}_lib_gfx942.kpack"], (label, names[label])
    assert {"librocm_kpack.so.1", "libamdhip64.so.7"} <= set(names["hip"])
    assert "libMIOpen.so.1" in names["miopen"] and not any(n.endswith(".kpack") for n in names["miopen"])
    # No librocm_smi64 in this ROCm 10 toolkit: rocm_smi is the empty library that lets rocm_libs_data build.
    assert not any("smi" in n for n in names["rocm_smi"]), names["rocm_smi"]
    # Two targets: both their packs.
    two = runfiles(tarball, ["hipblas"], "--//rocm:amdgpu_targets=gfx950,gfx1100")["hipblas"]
    assert sorted(n for n in two if n.endswith(".kpack")) == ["blas_lib_gfx1100.kpack", "blas_lib_gfx950.kpack"]


def test_rocm_libs_data_finds_each_librarys_shared_object_in_its_data(tarball):
    """XLA's collect_data_files (what JAX's rocm_libs_data is) takes the .so files of each
    library's `data`, as XLA's rocm_lib_import globs them there: each of the nine labels but
    rocm_smi (not in this toolkit) has its lib<name>.so among its data."""
    query = " + ".join(f"@local_config_rocm//rocm:{label}" for label in ROCM_LIBS_DATA if label != "hip_runtime")
    result = sandbox("run", "--", "bazel", "cquery", *repo_env(tarball), f"labels(data, {query} + @local_config_rocm//rocm:hip)",
                     cwd=CHECKOUT, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    data = {line.split()[0].rsplit(":", 1)[1] for line in result.stdout.splitlines() if line.strip()}
    expected = {"libamdhip64.so", "libhipblas.so", "libhipfft.so", "libhiprand.so", "libhipsolver.so", "libMIOpen.so",
                "librccl.so", "librocsolver.so"}
    assert {f"lib/{name}" for name in expected} <= data, sorted(data)
    assert not any("smi" in label for label in data)


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


# ---- the other forms TheRock ships: the slow tier (python3 -m tests.run -m slow) -------
# Each builds the main job's wheels against a toolkit of its own (a new HIP compile of every
# source, about two minutes on two cores): the default run keeps the full tarball's build above.

# The multi-arch pip install `pip install "rocm[libraries,devel,device-gfx942]"` makes, from the
# full tarball ($2) in site-packages under $1: the expanded devel tree (`rocm-sdk path --root`),
# the runtime in _rocm_sdk_core, the math libraries in the architecture-neutral
# _rocm_sdk_libraries, the gfx942 device wheel's packs in its .kpack/ and its .dist-info.
MAKE_MULTIARCH_PIP = r"""
set -e
site=$1/site-packages; mkdir -p $site/_rocm_sdk_core/lib $site/_rocm_sdk_libraries/lib; cd $site
tar xzf "$2" && mv install _rocm_sdk_devel
mv _rocm_sdk_devel/lib/libamdhip64.so* _rocm_sdk_devel/lib/librocm_kpack.so* _rocm_sdk_core/lib/
for lib in hipblas hipsolver hipsparse MIOpen rocsolver hipfft hiprand rocrand rccl; do
  mv _rocm_sdk_devel/lib/lib$lib.so* _rocm_sdk_libraries/lib/
done
mv _rocm_sdk_devel/.kpack _rocm_sdk_libraries/.kpack
rm _rocm_sdk_libraries/.kpack/*_gfx950.kpack _rocm_sdk_libraries/.kpack/*_gfx1100.kpack
mkdir rocm_sdk_device_gfx942-10.1.0a20260811.dist-info
"""


def dist_wheels(therock_or_rocm: str, output: Path, *extra: str) -> tuple[list[Path], str]:
    result = subprocess.run(
        [sys.executable, "build/ci_build", therock_or_rocm, f"--python-versions={PYTHON}", "--sources=examples",
         *([f"--jax-source-dir={JAX_TREE}"] if JAX_TREE else []), f"--output-dir={output}", *extra, "dist_wheels"],
        cwd=CHECKOUT, capture_output=True, text=True)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-6000:]
    return sorted(output.glob("*.whl")), log


@pytest.mark.slow
def test_a_per_family_multi_arch_tarball_builds_for_its_packs(sandbox_root, tmp_path):
    script = tmp_path / "make.sh"
    script.write_text(MAKE_MULTIARCH_TARBALL)
    tarball = tmp_path / f"therock-dist-linux-gfx94X-dcgpu-{MULTIARCH_VERSION}.tar.gz"
    sandbox("run", "--", "sh", str(script), str(tarball), "gfx942")
    wheels, _ = dist_wheels(f"--therock-path={tarball}", tmp_path / "dist")
    assert [w.name.split("-")[0] for w in wheels] == ["jax_rocm10_pjrt", "jax_rocm10_plugin"]
    assert all(build_info(w)["amdgpu_targets"] == ["gfx942"] for w in wheels)


@pytest.mark.slow
def test_the_extracted_tarball_builds_as_a_rocm_path(tarball, tmp_path):
    sandbox("run", "--", "tar", "-C", str(tmp_path), "-xzf", str(tarball))
    wheels, log = dist_wheels(f"--rocm-path={tmp_path / 'install'}", tmp_path / "dist", "--amdgpu-targets=gfx950")
    assert [w.name.split("-")[0] for w in wheels] == ["jax_rocm10_pjrt", "jax_rocm10_plugin"]
    info = build_info(wheels[1])
    assert (info["amdgpu_targets"], info["rocm_layout"]) == (["gfx950"], "therock")


@pytest.mark.slow
def test_the_multi_arch_pip_packages_build_for_the_installed_device_wheels(tarball, tmp_path):
    script = tmp_path / "make.sh"
    script.write_text(MAKE_MULTIARCH_PIP)
    sandbox("run", "--", "sh", str(script), str(tmp_path), str(tarball))
    devel = tmp_path / "site-packages/_rocm_sdk_devel"
    wheels, log = dist_wheels(f"--rocm-path={devel}", tmp_path / "dist")
    assert [w.name.split("-")[0] for w in wheels] == ["jax_rocm10_pjrt", "jax_rocm10_plugin"]
    info = build_info(wheels[1])
    assert (info["amdgpu_targets"], info["rocm_layout"]) == (["gfx942"], "therock_pip"), info
