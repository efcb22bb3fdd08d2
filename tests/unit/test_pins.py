"""Source pins: tools/update_pins.py, tools/prefetch.py and the override translation of tools/bazel
(tools/bazel_overrides.py, the module the launcher hook runs)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT
from tools import bazel_overrides as bazel_hook, prefetch, update_pins

pytestmark = pytest.mark.unit

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def tarball(path: Path, top: str) -> Path:
    with tarfile.open(path, "w:gz") as t:
        data = b"workspace(name = 'xla')\n"
        info = tarfile.TarInfo(f"{top}/WORKSPACE")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A copy of the pins, so that update_pins.py rewrites files of the test's own."""
    for pin in CHECKOUT.glob("third_party/*/pin.json"):
        (tmp_path / pin.parent.relative_to(CHECKOUT)).mkdir(parents=True)
        shutil.copy(pin, tmp_path / pin.relative_to(CHECKOUT))
    monkeypatch.setattr(update_pins, "CHECKOUT", tmp_path)
    return tmp_path


def test_every_pin_is_complete_and_names_a_real_hash():
    pins = sorted(CHECKOUT.glob("third_party/*/pin.json"))
    assert pins, "no third_party/*/pin.json"
    for path in pins:
        pin = json.loads(path.read_text())
        assert re.fullmatch(r"[0-9a-f]{64}", pin["sha256"]), path
        assert pin["urls"] and all(u.startswith("https://") for u in pin["urls"]), path
        assert pin.get("commit") or pin.get("version"), path


def test_update_from_a_local_archive_rewrites_hash_and_commit(checkout, tmp_path, capsys):
    archive = tarball(tmp_path / "xla.tar.gz", f"xla-{COMMIT}")
    assert update_pins.main(["xla", "--commit", COMMIT, "--archive", str(archive)]) == 0
    pin = json.loads((checkout / "third_party/xla/pin.json").read_text())
    assert pin["commit"] == COMMIT and pin["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert pin["strip_prefix"] == "xla-{commit}" and pin["urls"] == ["https://github.com/openxla/xla/archive/{commit}.tar.gz"]
    assert f"commit: 5a9e73cbd92530cac2ac36f4736a774b2412afe2 -> {COMMIT}" in capsys.readouterr().out


def test_an_archive_of_another_commit_is_refused_and_the_pin_kept(checkout, tmp_path, capsys):
    before = (checkout / "third_party/xla/pin.json").read_text()
    archive = tarball(tmp_path / "xla.tar.gz", "xla-ffffffffffffffffffffffffffffffffffffffff")
    assert update_pins.main(["xla", "--commit", COMMIT, "--archive", str(archive)]) == 1
    assert f"the archive has no xla-{COMMIT}/" in capsys.readouterr().err
    assert (checkout / "third_party/xla/pin.json").read_text() == before
    assert update_pins.main(["nonesuch", "--commit", COMMIT, "--archive", str(archive)]) == 1
    known = ", ".join(sorted(p.parent.name for p in checkout.glob("third_party/*/pin.json")))
    assert f"no pin named 'nonesuch'; pins: {known}" in capsys.readouterr().err


def jax_archive(path: Path, files: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as t:
        for name, text in files.items():
            info = tarfile.TarInfo(f"jax-jax-v0.10.2/{name}")
            info.size = len(text.encode())
            t.addfile(info, io.BytesIO(text.encode()))
    return path


def test_jaxs_pin_records_the_release_and_the_pythons_of_its_archive(checkout, tmp_path, capsys):
    """What ci_build checks --python-versions against before anything is downloaded
    (sources.pinned_pythons): read from the archive pinned, never typed."""
    archive = jax_archive(tmp_path / "jax.tar.gz", {
        "jax/version.py": '_version = "0.11.0"\n', "build/requirements_lock_3_12.txt": "#",
        "build/requirements_lock_3_14.txt": "#", "build/requirements_lock_3_13.txt": "#", "build/requirements_lock_3_14_ft.txt": "#"})
    assert update_pins.main(["jax", "--commit", COMMIT, "--archive", str(archive)]) == 0
    pin = json.loads((checkout / "third_party/jax/pin.json").read_text())
    assert (pin["release"], pin["pythons"]) == ("0.11.0", ["3.12", "3.13", "3.14"])
    out = capsys.readouterr().out
    assert "release: 0.10.2 -> 0.11.0" in out and "pythons: ['3.11', '3.12', '3.13', '3.14'] -> ['3.12', '3.13', '3.14']" in out
    before = (checkout / "third_party/jax/pin.json").read_text()
    bare = jax_archive(tmp_path / "bare.tar.gz", {"jax/version.py": '_version = "0.11.0"\n'})
    assert update_pins.main(["jax", "--commit", COMMIT, "--archive", str(bare)]) == 1
    assert "has no build/requirements_lock_3_NN.txt: is it an archive of JAX's tree?" in capsys.readouterr().err
    assert (checkout / "third_party/jax/pin.json").read_text() == before


REDIST_TABLE = """rocm_redist = {
    "rocm_7.10.0_gfx94X": struct(packages = [{"url": "https://example.com/a.tar.gz", "sha256": "%s"}], rocm_root = ""),
    "rocm_7.13.0_gfx950": struct(packages = [{"url": "https://example.com/b.tar.gz", "sha256": "%s"}], rocm_root = ""),
}
""" % ("ab" * 32, "cd" * 32)


def xla_archive(path: Path, files: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as t:
        for name, text in {"WORKSPACE": "", **files}.items():
            info = tarfile.TarInfo(f"xla-{COMMIT}/{name}")
            info.size = len(text.encode())
            t.addfile(info, io.BytesIO(text.encode()))
    return path


def test_xlas_pin_records_the_names_of_its_rocm_redistributions(checkout, tmp_path, capsys):
    """What ci_build checks ROCM_DISTRO_VERSION against before the pinned XLA is downloaded
    (sources.pinned_xla_distros): read from the archive pinned; none where it has no table."""
    archive = xla_archive(tmp_path / "xla.tar.gz", {"third_party/gpus/rocm/rocm_redist.bzl": REDIST_TABLE})
    assert update_pins.main(["xla", "--commit", COMMIT, "--archive", str(archive)]) == 0
    pin = json.loads((checkout / "third_party/xla/pin.json").read_text())
    assert pin["rocm_distros"] == ["rocm_7.10.0_gfx94X", "rocm_7.13.0_gfx950"]
    assert "rocm_distros: " in capsys.readouterr().out
    assert update_pins.main(["xla", "--commit", COMMIT, "--archive", str(xla_archive(tmp_path / "old.tar.gz", {}))]) == 0
    assert json.loads((checkout / "third_party/xla/pin.json").read_text())["rocm_distros"] == []


PINNED_XLA_ENV = "JAX_ROCM_TEST_XLA_PIN_ARCHIVE"


@pytest.mark.skipif(not os.environ.get(PINNED_XLA_ENV), reason=f"{PINNED_XLA_ENV} (an archive of XLA at the pinned commit, "
                    "e.g. `git archive --prefix=xla-<commit>/ <commit>` of a clone) is not set")
def test_the_pinned_xlas_recorded_redistributions_are_its_tables():
    recorded = json.loads((CHECKOUT / "third_party/xla/pin.json").read_text())["rocm_distros"]
    assert update_pins.xla_tree_facts(Path(os.environ[PINNED_XLA_ENV]))["rocm_distros"] == recorded


def test_the_other_pins_record_no_pythons():
    assert [p.parent.name for p in sorted(CHECKOUT.glob("third_party/*/pin.json"))
            if "pythons" in json.loads(p.read_text())] == ["jax"]


def test_prefetch_selects_exactly_the_pinned_wheel_files():
    wheels, others = prefetch.pinned_wheels()
    by_name = {w.filename: w for w in wheels}
    jaxlib = by_name["jaxlib-0.10.2-cp311-cp311-manylinux_2_27_x86_64.whl"]
    assert jaxlib.pip_args() == ["--no-deps", "--only-binary=:all:", "jaxlib==0.10.2", "--platform", "manylinux_2_27_x86_64",
                                 "--abi", "cp311", "--python-version", "311"]
    assert by_name["nanobind-3.1.0-py3-none-any.whl"].pip_args() == ["--no-deps", "--only-binary=:all:", "nanobind==3.1.0"]
    assert {p.parent.name for p in others} == {"xla", "jax", "abseil", "rules_ml_toolchain"}
    sources, rest = prefetch.debian_sources(others)
    assert {p.parent.name for p in rest} == {"xla", "jax", "rules_ml_toolchain"}
    (abseil,) = sources
    assert (abseil.package, abseil.orig, abseil.filename) == ("abseil", "abseil_20260526.0.orig.tar.gz", "20260526.0.tar.gz")
    assert "source --download-only abseil=20260526.0-2" in abseil.apt_script()


@pytest.mark.parametrize("spelling", ["--override_repository=xla={d}", "--override_repository=@xla={d}",
                                      "--override_repository=@@xla={d}"])
def test_every_spelling_of_an_override_becomes_the_canonical_name(tmp_path, spelling):
    args = ["build", "--config=rocm", spelling.format(d=tmp_path), "//:xla_rocm_plugin"]
    assert bazel_hook.translate(args, 7, Path("/")) == ["build", "--config=rocm", f"--override_repository=_main~sources~xla={tmp_path}",
                                                        f"--override_repository=+sources+xla={tmp_path}",
                                                        f"--repo_env=XLA_SOURCE_DIR={tmp_path}", "//:xla_rocm_plugin",
                                                        f"{bazel_hook.RECORD}=xla"]
    assert bazel_hook.translate(args, 8, Path("/"))[2] == f"--override_repository=+sources+xla={tmp_path}"


def test_overrides_resolve_relative_paths_and_leave_the_rest_alone(tmp_path):
    (tmp_path / "src" / "xla").mkdir(parents=True)
    args = ["build", "--override_repository", "xla=src/xla", "--override_repository=zlib=/x", "--", "--override_repository=xla=y"]
    assert bazel_hook.translate(args, 7, tmp_path) == [
        "build", f"--override_repository=_main~sources~xla={tmp_path / 'src' / 'xla'}",
        f"--override_repository=+sources+xla={tmp_path / 'src' / 'xla'}",
        f"--repo_env=XLA_SOURCE_DIR={tmp_path / 'src' / 'xla'}", "--override_repository=zlib=/x",
        f"{bazel_hook.RECORD}=xla", "--", "--override_repository=xla=y"]


def test_a_jax_override_names_the_tree_to_lay_out_not_a_repository_to_replace(tmp_path):
    """JAX's own BUILD files would load XLA's graph: @jax stays this project's, fed by JAX_SOURCE_DIR."""
    (tmp_path / "jax").mkdir()
    archive = tmp_path / "jax-src.tar.gz"
    archive.write_bytes(b"")
    for spelling in ("jax=jax", "@jax=jax", "@@jax=jax"):
        assert bazel_hook.translate(["build", f"--override_repository={spelling}"], 7, tmp_path) == [
            "build", f"--repo_env=JAX_SOURCE_DIR={tmp_path / 'jax'}", f"{bazel_hook.RECORD}=jax"]
    assert bazel_hook.translate(["query", "--override_repository", "jax=jax-src.tar.gz"], 8, tmp_path) == [
        "query", f"--repo_env=JAX_SOURCE_DIR={archive}"]
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(bazel_hook.OverrideError, match="neither a directory nor an archive"):
        bazel_hook.translate(["build", "--override_repository=jax=notes.txt"], 7, tmp_path)


def test_a_build_with_overrides_records_them_as_ci_build_does(tmp_path):
    """build_info.json's source_overrides, which ci_build sets, follows from the overrides typed
    to Bazel too (JAX's spelling of a build gives ci_build's wheels); query takes no build setting,
    and a record the user sets is theirs."""
    (tmp_path / "xla").mkdir()
    (tmp_path / "jax").mkdir()
    both = ["--override_repository=xla=xla", "--override_repository=@jax=jax", "--override_repository=zlib=/z"]
    assert bazel_hook.translate(["--batch", "build", *both, "//:jax_rocm_wheels"], 7, tmp_path)[-1] == f"{bazel_hook.RECORD}=jax,xla"
    assert not [a for a in bazel_hook.translate(["query", *both], 7, tmp_path) if a.startswith(bazel_hook.RECORD)]
    own = ["build", *both, "--//wheel:source_overrides=xla"]
    assert [a for a in bazel_hook.translate(own, 7, tmp_path) if "source_overrides" in a] == ["--//wheel:source_overrides=xla"]
    assert bazel_hook.translate(["build", "--override_repository=zlib=/z"], 7, tmp_path) == ["build", "--override_repository=zlib=/z"]


def test_a_missing_override_directory_fails_before_bazel_runs(tmp_path):
    env = {"BAZEL_REAL": "/bin/echo", "PATH": "/usr/bin:/bin"}
    fake_version = tmp_path / "bazel"
    fake_version.write_text("#!/bin/sh\necho bazel 7.7.1\n")
    fake_version.chmod(0o755)
    env["BAZEL_REAL"] = str(fake_version)
    result = subprocess.run([sys.executable, str(CHECKOUT / "tools" / "bazel"), "build", "--override_repository=xla=/nonexistent"],
                            env=env, capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert "tools/bazel: --override_repository=xla=/nonexistent: /nonexistent is not a directory" in result.stderr
    echoed = subprocess.run([sys.executable, str(CHECKOUT / "tools" / "bazel"), "build", f"--override_repository=xla={tmp_path}"],
                            env=env, capture_output=True, text=True)
    assert echoed.stdout.strip() == "bazel 7.7.1", "the real Bazel ran (here a stand-in that prints its version)"
