"""build/ci_build_cli/inputs.py: every flag value and input path ci_build can check before a build, and its one-line error."""

from __future__ import annotations

import gzip
import io
import os
import sys
import tarfile

import pytest

from ci_build_cli import cli, inputs as ci, sandbox, toolkit, wheels
from third_party.gpus import find_rocm_config as finder

pytestmark = pytest.mark.unit



@pytest.mark.parametrize("value", ["7.2.4", "7.2", "10.0.0", "7.10.0a20251120", "7.13.0rc1"])
def test_rocm_versions_toolkits_use(value):
    assert ci.rocm_version(value) == value


@pytest.mark.parametrize("value", ["banana", "7", "7.2.4.", "v7.2.4", "7.2.4 "])
def test_not_a_rocm_version(value):
    with pytest.raises(ci.InputError, match=r"--rocm-version=.* is not a ROCm release: give it as X\.Y\.Z"):
        ci.rocm_version(value)


@pytest.mark.parametrize("written", ["gfx942,gfx950", "gfx942;gfx950", "gfx942 gfx950", " gfx942 ,gfx950;gfx942 "])
def test_a_target_list_reads_as_the_finder_and_starlark_read_it(written):
    """One grammar: the finder's split_targets (TF_ROCM_AMDGPU_TARGETS), which
    rocm/private/amdgpu_targets.bzl's split_amdgpu_targets mirrors (its Starlark tests)."""
    assert ci.amdgpu_targets(written) == ("gfx942", "gfx950") == tuple(finder.split_targets(written))


def test_targets_empty_or_misspelt():
    assert ci.amdgpu_targets("gfx942, gfx90a:xnack+,gfx9-4-generic") == ("gfx942", "gfx90a:xnack+", "gfx9-4-generic")
    with pytest.raises(ci.InputError, match="--amdgpu-targets= is empty"):
        ci.amdgpu_targets(" ,;")
    with pytest.raises(ci.InputError, match="GFX942 is no amdgpu processor clang knows; did you mean gfx942"):
        ci.amdgpu_targets("GFX942")
    with pytest.raises(ci.InputError, match="gfx9999 is no amdgpu processor clang knows; did you mean gfx909"):
        ci.amdgpu_targets("gfx942,gfx9999")
    with pytest.raises(ci.InputError, match=r"mi300 is no amdgpu processor clang knows \(they look like gfx942"):
        ci.amdgpu_targets("mi300")
    with pytest.raises(ci.InputError, match="gfx90a:xnack: xnack is no target feature"):
        ci.amdgpu_targets("gfx90a:xnack")


def test_python_versions_are_checked_for_their_form_and_the_tree_for_the_rest():
    """As the flag is parsed, only its form: which Pythons can be built is the JAX tree's to say
    (pythons_of_the_tree, once the tree is known)."""
    assert ci.python_versions("3.14, 3.15,3.10") == "3.14,3.15,3.10"


def test_a_python_the_jax_tree_does_not_build_for_is_one_line_naming_the_flag_the_release_and_its_pythons():
    with pytest.raises(ci.InputError) as e:
        ci.pythons_of_the_tree("3.11", ("3.12", "3.13", "3.14"), "JAX 0.11.0 (--jax-source-dir=/src/jax)")
    assert str(e.value) == ("--python-versions=3.11: JAX 0.11.0 (--jax-source-dir=/src/jax) builds jaxlib for Python "
                            "3.12, 3.13 and 3.14, not 3.11: name some of those, or give a JAX tree that supports 3.11 "
                            "(--jax-source-dir=PATH)")
    with pytest.raises(ci.InputError, match=r"^--python-versions=3.14,3.15,3.99: JAX 0.10.2 \(the pin\) builds jaxlib for "
                                            r"Python 3.11, 3.12, 3.13 and 3.14, not 3.15 or 3.99: .* supports 3.15 and 3.99 "):
        ci.pythons_of_the_tree("3.14,3.15,3.99", ("3.11", "3.12", "3.13", "3.14"), "JAX 0.10.2 (the pin)")
    with pytest.raises(ci.InputError, match="builds jaxlib for Python 3.12, not 3.11: name that, or"):
        ci.pythons_of_the_tree("3.11", ("3.12",), "JAX 0.9.0 (x)")
    ci.pythons_of_the_tree("3.15,3.12", ("3.12", "3.13", "3.14", "3.15"), "JAX 0.12.0 (x)")  # where the tree supports it


def test_python_versions_and_sha256():
    assert ci.python_versions("3.11,3.14") == "3.11,3.14"
    with pytest.raises(ci.InputError, match="names 3.11 more than once"):
        ci.python_versions("3.11,3.11")
    with pytest.raises(ci.InputError, match="python3.11 is not a Python version"):
        ci.python_versions("python3.11")
    assert ci.sha256("AB" * 32) == "ab" * 32
    with pytest.raises(ci.InputError, match="banana is not a sha256"):
        ci.sha256("banana")


def test_output_dir_a_file_a_missing_folder_and_an_unwritable_one(tmp_path):
    assert ci.output_dir(tmp_path / "new" / "dist") == tmp_path / "new" / "dist"
    (tmp_path / "file").write_text("")
    with pytest.raises(ci.InputError, match="is a file, not a folder"):
        ci.output_dir(tmp_path / "file")
    with pytest.raises(ci.InputError, match="file, so the folder cannot be made there"):
        ci.output_dir(tmp_path / "file" / "dist")


def test_output_dir_not_writable(tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    # root may write anywhere: ask os.access as a user whom the mode denies would.
    monkeypatch.setattr(ci.os, "access", lambda path, mode: os.stat(path).st_mode & 0o200 != 0)
    with pytest.raises(ci.InputError, match="not writable by this user"):
        ci.output_dir(locked / "dist")


def test_a_truncated_archive_is_refused_before_the_build(tmp_path):
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        blob = os.urandom(200_000)
        info = tarfile.TarInfo("jax/jaxlib/big.bin")
        info.size = len(blob)
        tar.addfile(info, io.BytesIO(blob))
    whole = gzip.compress(data.getvalue())
    good, cut = tmp_path / "jax.tar.gz", tmp_path / "cut.tar.gz"
    good.write_bytes(whole)
    cut.write_bytes(whole[: len(whole) // 2])
    ci.complete_archive("--jax-source-dir", good)
    with pytest.raises(ci.InputError, match=r"--jax-source-dir=.*cut.tar.gz is refused: cut.tar.gz is not a complete, "
                                            r"readable tar archive"):
        ci.complete_archive("--jax-source-dir", cut)


def test_version_agreement():
    assert ci.version_agrees("7.2.4", ["7.2.4"])
    assert ci.version_agrees("7.2", [None, "7.2.4"])
    assert ci.version_agrees("7.10.0", ["7.10.0a20251120"])
    assert not ci.version_agrees("7.2", ["7.20.1"])
    assert not ci.version_agrees("7.2.4", ["7.2.40"])
    assert not ci.version_agrees("7.9.9", ["7.2.4", None])


def test_ci_build_says_one_line_and_exits_2_for_a_bad_value(capsys):
    assert cli.main(["dist_wheels", "--rocm-version=banana"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("ci_build: --rocm-version=banana is not a ROCm release")


def test_output_dir_is_checked_before_the_sandbox_starts(tmp_path, capsys, monkeypatch):
    (tmp_path / "dist").write_text("")
    ran = []
    monkeypatch.setattr(sandbox, "run", lambda cmd, dry_run: ran.append(cmd) or 0)
    assert cli.main(["--sources=examples", "dist_wheels", f"--output-dir={tmp_path / 'dist'}"]) == 2
    assert ran == [] and "is a file, not a folder" in capsys.readouterr().err


def test_wheels_reach_the_output_dir_whole_and_nothing_else_is_left(tmp_path):
    bazel_bin = tmp_path / "bazel-bin"
    bazel_bin.mkdir()
    built = []
    for name in ("a-1-py3-none-any.whl", "b-1-py3-none-any.whl"):
        (bazel_bin / name).write_bytes(name.encode() * 1000)
        built.append(bazel_bin / name)
    out = tmp_path / "dist"
    assert [c.path for c in wheels.collect_wheels(built, out)] == [out / w.name for w in built]
    assert sorted(p.name for p in out.iterdir()) == ["a-1-py3-none-any.whl", "b-1-py3-none-any.whl"]


def test_interrupt_is_one_line_and_130(capsys, monkeypatch, tmp_path):
    def interrupted(request):
        raise KeyboardInterrupt
    monkeypatch.setattr(sys, "argv", ["ci_build"])
    monkeypatch.setattr(sandbox, "CACHE", tmp_path)  # its lock file goes there
    monkeypatch.setattr(cli, "COMMANDS", (("dist_wheels", "", interrupted, lambda request: request),))
    assert cli.main(["--sources=examples", "dist_wheels"]) == 130
    assert capsys.readouterr().err == "ci_build: interrupted; no partial wheel was written (run it again to go on)\n"


def test_a_truncated_jax_archive_stops_ci_build_before_the_sandbox(tmp_path, capsys, monkeypatch):
    cut = tmp_path / "jax.tar.gz"
    cut.write_bytes(gzip.compress(b"x" * 100_000)[:500])
    ran = []
    monkeypatch.setattr(sandbox, "run", lambda cmd, dry_run: ran.append(cmd) or 0)
    monkeypatch.setattr(sandbox, "CACHE", tmp_path)
    assert cli.main(["--sources=examples", f"--jax-source-dir={cut}", "dist_wheels", f"--output-dir={tmp_path / 'dist'}"]) == 2
    err = capsys.readouterr().err
    assert ran == [] and err.count("\n") == 1
    assert err.startswith(f"ci_build: --jax-source-dir={cut} is refused: {cut.name} is not a complete")


def test_a_therock_tarballs_release_is_read_from_its_name_before_any_build(tmp_path, monkeypatch):
    tarball = tmp_path / "therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"
    tarball.write_bytes(b"not opened: the name says the release")
    monkeypatch.delenv("ROCM_PATH", raising=False)
    args = cli.parse_args(["dist_wheels", f"--therock-path={tarball}", "--rocm-version=7.10.0"])
    toolkit_, version = toolkit.tarball_release(args)
    assert version == "7.10.0a20251120" and tarball.name in toolkit_
    assert ci.version_agrees(args.rocm_version, [version]) and not ci.version_agrees("7.9.9", [version])


@pytest.mark.parametrize(("variable", "value", "flag"), [
    ("ML_WHEEL_TYPE", "nightly-ish", "--wheel-kind=release|nightly|dev"),
    ("ML_WHEEL_BUILD_DATE", "20261399", "--wheel-date=YYYYMMDD"),
    ("ML_WHEEL_VERSION_SUFFIX", "rc 1", "no ci_build flag"),
])
def test_jaxs_ml_wheel_variables_are_refused_naming_the_flag(monkeypatch, capsys, variable, value, flag):
    monkeypatch.setenv(variable, value)
    rc = cli.main(["--sources=examples", "--dry-run", "dist_wheels"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert err[0].startswith(f"ci_build: {variable}={value} (from the environment) is JAX's build variable") and flag in err[0]


def test_ml_wheel_variables_do_not_concern_commands_that_make_no_wheel(monkeypatch):
    monkeypatch.setenv("ML_WHEEL_TYPE", "nightly")
    assert cli.parse_args(["--sources=examples", "--dry-run", "doctor"]).command == "doctor"


def test_a_manylinux_policy_no_glibc_is_is_refused_naming_the_one_meant(capsys):
    rc = cli.main(["--sources=examples", "--dry-run", "dist_wheels", "--manylinux=manylinux_2_82"])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 2 and last.startswith("ci_build: --manylinux=manylinux_2_82:") and "did you mean manylinux_2_28?" in last
