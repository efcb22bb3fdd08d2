"""build/ci_build and XLA's names of a toolkit in its environment (TF_ROCM_MULTIPLE_PATHS,
LLVM_PATH, ROCM_DISTRO_URL/HASH/LINKS, ROCM_DISTRO_VERSION): passed on to Bazel as --repo_env,
their host folders mounted and checked before the sandbox, cleared when a ci_build flag or
ROCM_PATH decides (XLA's order), ROCM_DISTRO_VERSION checked against the XLA tree's table.

Nothing runs: the toolkit functions are pure but for the folders under tmp_path they look at,
and ci_build's own runs are dry or recorded.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ci_build_cli import cli, sandbox, toolkit
from ci_build_cli.inputs import InputError
from tests.conftest import DRY_RUN, bazel_build

pytestmark = pytest.mark.unit

GFX908 = "https://repo.amd.com/rocm/tarball/therock-dist-linux-gfx908-7.13.0.tar.gz"
TABLE = '''rocm_redist = {
    "rocm_7.13.0_gfx908": struct(
        packages = [{"url": "%s", "sha256": "%s"}],
        required_softlinks = [],
        rocm_root = "",
    ),
    "rocm_7.10.0_gfx94X_whl": struct(
        packages = [{"url": "https://example.invalid/rocm_sdk_devel-7.10.0-py3-none-linux_x86_64.whl", "sha256": "00",
                     "sub_package": "rocm_sdk_devel/_devel.tar"}],
        required_softlinks = [],
        rocm_root = "_rocm_sdk_devel",
    ),
}
''' % (GFX908, "5d" * 32)


@pytest.fixture
def env(monkeypatch):
    """None of the toolkit's names from this process's environment; `env(NAME=VALUE, ...)` sets some."""
    for name in (*toolkit.XLA_NAMES, "ROCM_PATH", sandbox.HOST_ENV, "JAXCI_XLA_GIT_DIR", "JAXCI_CLONE_MAIN_XLA"):
        monkeypatch.delenv(name, raising=False)
    return lambda **values: [monkeypatch.setenv(k, str(v)) for k, v in values.items()]


def folders(tmp_path: Path, *names: str) -> list[Path]:
    made = [tmp_path / n for n in names]
    for path in made:
        path.mkdir(parents=True)
    return made


def xla_tree(root: Path, table: str | None = TABLE) -> Path:
    (root / "xla").mkdir(parents=True)
    if table is not None:
        (root / "third_party/gpus/rocm").mkdir(parents=True)
        (root / "third_party/gpus/rocm/rocm_redist.bzl").write_text(table)
    return root


def source(**environ: str) -> toolkit.RocmSource:
    return toolkit.rocm_source(None, None, None, None, environ=environ)


# ---- passed on, mounted, checked -----------------------------------------------------------


def test_multiple_paths_and_llvm_path_are_passed_on_and_mounted(tmp_path):
    hip, blas, llvm = folders(tmp_path, "hip", "blas", "llvm")
    got = source(TF_ROCM_MULTIPLE_PATHS=f"{hip}:{blas}", LLVM_PATH=str(llvm), ROCM_DISTRO_VERSION="rocm_7.13.0_gfx908")
    assert got.flags == (f"--repo_env=TF_ROCM_MULTIPLE_PATHS={hip}:{blas}", f"--repo_env=LLVM_PATH={llvm}",
                         "--repo_env=ROCM_DISTRO_VERSION=rocm_7.13.0_gfx908")
    assert got.binds == (str(hip), str(blas), str(llvm))
    assert got.xla_name == "TF_ROCM_MULTIPLE_PATHS"
    assert got.note.startswith(f"ci_build: using ROCm from TF_ROCM_MULTIPLE_PATHS={hip}:{blas} (the environment, XLA's "
                               "name; passed to Bazel with --repo_env; mounted into the sandbox at the same paths)")
    assert got.note.endswith("not used, by XLA's order (ROCM_PATH, TF_ROCM_MULTIPLE_PATHS, ROCM_DISTRO_URL, "
                             "ROCM_DISTRO_VERSION): ROCM_DISTRO_VERSION=rocm_7.13.0_gfx908")


def test_relative_and_linked_folders_are_passed_on_absolute_and_mounted_with_their_targets(tmp_path, monkeypatch):
    (real,) = folders(tmp_path, "rocm-7.2.4")
    (tmp_path / "rocm").symlink_to(real.name)
    monkeypatch.chdir(tmp_path)
    got = source(TF_ROCM_MULTIPLE_PATHS="rocm")
    assert got.flags == (f"--repo_env=TF_ROCM_MULTIPLE_PATHS={tmp_path / 'rocm'}",)
    assert got.binds == (str(tmp_path / "rocm"), str(real))


@pytest.mark.parametrize("which", ["entry", "llvm"])
def test_a_folder_that_is_not_there_is_an_input_error_naming_the_variable(tmp_path, which):
    (hip,) = folders(tmp_path, "hip")
    gone = tmp_path / "gone"
    environ = ({"TF_ROCM_MULTIPLE_PATHS": f"{hip}:{gone}"} if which == "entry"
               else {"TF_ROCM_MULTIPLE_PATHS": str(hip), "LLVM_PATH": str(gone)})
    name = "TF_ROCM_MULTIPLE_PATHS" if which == "entry" else "LLVM_PATH"
    with pytest.raises(InputError) as e:
        source(**environ)
    assert str(e.value).startswith(f"{name}={environ[name]} (from the environment): {gone} is not a directory")
    assert f"env -u {name}" in str(e.value)


def test_an_empty_entry_of_multiple_paths_is_refused(tmp_path):
    (hip,) = folders(tmp_path, "hip")
    with pytest.raises(InputError, match="has an empty entry: separate the installations' folders with single colons"):
        source(TF_ROCM_MULTIPLE_PATHS=f"{hip}::{hip}")


def test_the_sandboxs_own_folders_are_not_mounted_but_must_exist_in_host_mode():
    assert source(TF_ROCM_MULTIPLE_PATHS="/usr/lib/nowhere").binds == ()
    with pytest.raises(InputError, match="TF_ROCM_MULTIPLE_PATHS=/usr/lib/nowhere"):
        toolkit.rocm_source(None, None, None, None, host=True, environ={"TF_ROCM_MULTIPLE_PATHS": "/usr/lib/nowhere"})


def test_a_local_distro_url_mounts_its_folder(tmp_path):
    tarball = tmp_path / "dl" / "therock-dist-linux-gfx908-7.13.0.tar.gz"
    tarball.parent.mkdir()
    tarball.write_bytes(b"not opened here")
    for url in (f"file://{tarball}", str(tarball)):
        got = source(ROCM_DISTRO_URL=url, ROCM_DISTRO_HASH="ab" * 32, ROCM_DISTRO_LINKS="llvm/amdgcn:amdgcn")
        assert got.flags == (f"--repo_env=ROCM_DISTRO_URL=file://{tarball}", f"--repo_env=ROCM_DISTRO_HASH={'ab' * 32}",
                             "--repo_env=ROCM_DISTRO_LINKS=llvm/amdgcn:amdgcn")
        assert got.binds == (str(tarball.parent),) and got.xla_name == "ROCM_DISTRO_URL"
    remote = source(ROCM_DISTRO_URL=GFX908, ROCM_DISTRO_HASH="ab" * 32)
    assert remote.binds == () and f"--repo_env=ROCM_DISTRO_URL={GFX908}" in remote.flags


@pytest.mark.parametrize(("environ", "says"), [
    ({"ROCM_DISTRO_URL": GFX908}, "ROCM_DISTRO_URL=" + GFX908 + " (from the environment) needs ROCM_DISTRO_HASH"),
    ({"ROCM_DISTRO_URL": GFX908, "ROCM_DISTRO_HASH": "xyz"}, "ROCM_DISTRO_HASH=xyz (from the environment) is not a sha256"),
    ({"ROCM_DISTRO_URL": GFX908, "ROCM_DISTRO_HASH": "ab" * 32, "ROCM_DISTRO_LINKS": "/etc:etc"},
     "ROCM_DISTRO_LINKS: /etc:etc: '/etc' is not a path inside"),
    ({"ROCM_DISTRO_URL": "file:///nowhere/t.tar.gz", "ROCM_DISTRO_HASH": "ab" * 32},
     "ROCM_DISTRO_URL=file:///nowhere/t.tar.gz (from the environment): /nowhere/t.tar.gz is not a file"),
])
def test_a_distro_url_that_cannot_work_is_an_input_error(environ, says):
    with pytest.raises(InputError) as e:
        source(**environ)
    assert str(e.value).startswith(says) and "\n" not in str(e.value)


def test_only_the_deciding_names_folders_are_checked(tmp_path):
    """ROCM_DISTRO_URL below TF_ROCM_MULTIPLE_PATHS is not used: its file is neither checked nor mounted."""
    (hip,) = folders(tmp_path, "hip")
    got = source(TF_ROCM_MULTIPLE_PATHS=str(hip), ROCM_DISTRO_URL="file:///nowhere/t.tar.gz")
    assert got.binds == (str(hip),) and "--repo_env=ROCM_DISTRO_URL=file:///nowhere/t.tar.gz" in got.flags
    assert got.note.endswith("ROCM_DISTRO_URL=file:///nowhere/t.tar.gz")


def test_a_lone_qualifier_is_passed_on_with_a_note():
    got = source(LLVM_PATH="/opt/llvm")
    assert got.flags == ("--repo_env=LLVM_PATH=/opt/llvm",) and got.binds == () and got.xla_name is None
    assert got.note == ("ci_build: not used: LLVM_PATH=/opt/llvm (it qualifies TF_ROCM_MULTIPLE_PATHS, which is not set) "
                        "(from the environment)")


# ---- ci_build's flags and ROCM_PATH win ---------------------------------------------------


def test_rocm_path_flag_wins_and_clears_xlas_names_for_bazel(tmp_path):
    (rocm,) = folders(tmp_path, "rocm")
    got = toolkit.rocm_source(str(rocm), None, None, None, environ={"ROCM_DISTRO_VERSION": "rocm_7.13.0_gfx908",
                                                                     "TF_ROCM_MULTIPLE_PATHS": "/not/there"})
    assert got.flags == (f"--repo_env=ROCM_PATH={rocm}", "--repo_env=TF_ROCM_MULTIPLE_PATHS=",
                         "--repo_env=ROCM_DISTRO_VERSION=")
    assert got.binds == (str(rocm),) and got.xla_name is None
    assert got.note == (f"ci_build: using ROCm from --rocm-path={rocm}; not used: TF_ROCM_MULTIPLE_PATHS=/not/there, "
                        "ROCM_DISTRO_VERSION=rocm_7.13.0_gfx908 (XLA's order puts ROCM_PATH first, and ci_build's flags "
                        "win over the environment: cleared for Bazel)")


def test_ambient_rocm_path_wins_and_its_note_is_extended(tmp_path):
    (rocm,) = folders(tmp_path, "rocm")
    got = toolkit.rocm_source(None, None, None, str(rocm), environ={"ROCM_DISTRO_URL": GFX908})
    assert got.flags == (f"--repo_env=ROCM_PATH={rocm}", "--repo_env=ROCM_DISTRO_URL=")
    assert got.note.startswith(f"ci_build: using ROCm from ROCM_PATH={rocm} (the environment; mounted")
    assert got.note.endswith(f"; not used: ROCM_DISTRO_URL={GFX908} (XLA's order puts ROCM_PATH first, and ci_build's "
                             "flags win over the environment: cleared for Bazel)")
    assert "\n" not in got.note


def test_therock_path_wins_over_xlas_names_and_rocm_path():
    url = "https://rocm.nightlies.amd.com/tarball/therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"
    got = toolkit.rocm_source(None, url, "ab" * 32, "/opt/rocm", environ={"LLVM_PATH": "/opt/llvm"})
    assert got.flags == (f"--repo_env=THEROCK_URL={url}", f"--repo_env=THEROCK_SHA256={'ab' * 32}",
                         "--repo_env=ROCM_PATH=", "--repo_env=LLVM_PATH=")
    assert got.note.startswith(f"ci_build: using ROCm from --therock-path={url} (over ROCM_PATH=/opt/rocm from the "
                               "environment); not used: LLVM_PATH=/opt/llvm")


def test_without_xlas_names_nothing_changes(tmp_path):
    (rocm,) = folders(tmp_path, "rocm")
    assert toolkit.rocm_source(str(rocm), None, None, None, environ={"HOME": "/root", "ROCM_DISTRO_VERSION": " "}) == \
        toolkit.RocmSource((("ROCM_PATH", str(rocm)),), (str(rocm),), None)
    assert toolkit.rocm_source(None, None, None, None, environ={}) == toolkit.RocmSource()


# ---- ROCM_DISTRO_VERSION against the XLA tree in use ---------------------------------------


def test_distro_version_is_checked_against_an_xla_source_dirs_table(env, tmp_path):
    tree = xla_tree(tmp_path / "xla")
    env(ROCM_DISTRO_VERSION="rocm_7.13.0_gfx908")
    args = cli.parse_args(["dist_wheels", f"--xla-source-dir={tree}"])
    toolkit.check_inputs(args)  # known: passes
    assert toolkit.distro_of(args, "rocm_7.13.0_gfx908").url == GFX908
    assert toolkit.tarball_release(args) == ("the tarball therock-dist-linux-gfx908-7.13.0.tar.gz "
                                             "(ROCM_DISTRO_VERSION=rocm_7.13.0_gfx908)", "7.13.0")
    # The environment is read once, into the request.
    env(ROCM_DISTRO_VERSION="rocm_9.9.9_gfx000")
    with pytest.raises(InputError) as e:
        toolkit.check_inputs(cli.parse_args(["dist_wheels", f"--xla-source-dir={tree}"]))
    table = tree / "third_party/gpus/rocm/rocm_redist.bzl"
    assert str(e.value).startswith(f"ROCM_DISTRO_VERSION=rocm_9.9.9_gfx000 is not in XLA's redistribution table ({table}); "
                                   "known: rocm_7.13.0_gfx908, rocm_7.10.0_gfx94X_whl")
    env(ROCM_DISTRO_VERSION="rocm_7.10.0_gfx94X_whl")
    with pytest.raises(InputError, match=r"pip wheels .*--repo_env=ROCM_PATH=\$\(rocm-sdk path --root\)"):
        toolkit.check_inputs(cli.parse_args(["dist_wheels", f"--xla-source-dir={tree}"]))


def test_distro_version_against_a_tree_without_a_table(env, tmp_path):
    tree = xla_tree(tmp_path / "old-xla", table=None)
    env(ROCM_DISTRO_VERSION="rocm_7.13.0_gfx908")
    with pytest.raises(InputError) as e:
        toolkit.check_inputs(cli.parse_args(["dist_wheels", f"--xla-source-dir={tree}"]))
    assert f"the XLA tree in use ({tree}) has no redistribution table" in str(e.value)


def test_distro_version_with_the_stand_in_fails_before_anything_runs(env, recorded, capsys):
    env(ROCM_DISTRO_VERSION="rocm_7.13.0_gfx908")
    assert cli.main(DRY_RUN) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and recorded == []
    assert err.startswith("ci_build: ROCM_DISTRO_VERSION=rocm_7.13.0_gfx908 (from the environment) names an entry of "
                          "XLA's third_party/gpus/rocm/rocm_redist.bzl, but the XLA tree in use (examples/xla, the "
                          "stand-in) has no redistribution table; ROCM_DISTRO_VERSION needs a real XLA")
    assert "--xla-source-dir" in err


def test_distro_version_with_the_pinned_xla_is_checked_by_name_and_its_entry_left_to_the_repository_rule(env):
    """The pin is not on disk before the sandbox fetches it: its entries' names (pin.json) are checked."""
    env(ROCM_DISTRO_VERSION="rocm_7.10.0_gfx94X")
    args = cli.parse_args(["dist_wheels"])
    toolkit.check_inputs(args)
    assert toolkit.distro_of(args, "rocm_7.10.0_gfx94X") is None
    assert "--repo_env=ROCM_DISTRO_VERSION=rocm_7.10.0_gfx94X" in toolkit.rocm_flags(args)
    assert toolkit.tarball_release(args) == ("the tarball of ROCM_DISTRO_VERSION=rocm_7.10.0_gfx94X", None)
    env(ROCM_DISTRO_VERSION="rocm_7.2.4_gfx94X")
    with pytest.raises(InputError, match=re.escape(
            "ROCM_DISTRO_VERSION=rocm_7.2.4_gfx94X (from the environment) is not an entry of the pinned XLA's "
            "third_party/gpus/rocm/rocm_redist.bzl (third_party/xla/pin.json records them: rocm_7.10.0_gfx90X, ")):
        toolkit.check_inputs(cli.parse_args(["dist_wheels"]))


# ---- through ci_build ---------------------------------------------------------------------


def test_dist_wheels_passes_multiple_paths_on_and_mounts_them(env, recorded, tmp_path, capsys):
    hip, blas = folders(tmp_path, "hip", "blas")
    env(TF_ROCM_MULTIPLE_PATHS=f"{hip}:{blas}")
    assert cli.main(DRY_RUN) == 0
    cmd = bazel_build(recorded)
    head = cmd[:cmd.index("--")]
    assert head[-4:] == ["--bind", str(hip), "--bind", str(blas)]
    assert f"--repo_env=TF_ROCM_MULTIPLE_PATHS={hip}:{blas}" in cmd
    assert capsys.readouterr().err.count(f"using ROCm from TF_ROCM_MULTIPLE_PATHS={hip}:{blas}") == 1


def test_dist_wheels_with_a_missing_llvm_path_fails_in_one_line(env, recorded, tmp_path, capsys):
    (hip,) = folders(tmp_path, "hip")
    env(TF_ROCM_MULTIPLE_PATHS=str(hip), LLVM_PATH=tmp_path / "llvm")
    assert cli.main(DRY_RUN) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and recorded == []
    assert err.startswith(f"ci_build: LLVM_PATH={tmp_path / 'llvm'} (from the environment): ")


def test_rocm_version_is_checked_against_a_distro_urls_name(env):
    env(ROCM_DISTRO_URL=GFX908, ROCM_DISTRO_HASH="ab" * 32)
    args = cli.parse_args(["dist_wheels", "--rocm-version=7.2"])
    with pytest.raises(InputError, match=r"^--rocm-version=7\.2, but the tarball therock-dist-linux-gfx908-7\.13\.0\.tar\.gz "
                                         r"\(ROCM_DISTRO_URL\), by its name, is ROCm 7\.13\.0"):
        toolkit.check_inputs(args)
    toolkit.check_inputs(cli.parse_args(["dist_wheels", "--rocm-version=7.13"]))


def test_a_merge_is_checked_after_the_repository_rule_made_it(env, tmp_path):
    """--rocm-version with TF_ROCM_MULTIPLE_PATHS: the finder cannot probe the merge before Bazel
    makes it, so dist_wheels checks the rule's answer (check_fetched_toolkit), not the default search."""
    (hip,) = folders(tmp_path, "hip")
    env(TF_ROCM_MULTIPLE_PATHS=str(hip))
    assert toolkit.tarball_release(cli.parse_args(["dist_wheels"])) == (f"the merge of TF_ROCM_MULTIPLE_PATHS={hip}", None)


def test_host_doctor_names_the_deciding_name_instead_of_searching(env, monkeypatch, capsys):
    """The finder's search would describe a toolkit this build does not use: a tarball named by
    ROCM_DISTRO_URL exists only once the repository rule fetched it."""
    env(ROCM_DISTRO_URL="https://example.invalid/therock-dist-linux-gfx942-7.14.0.tar.gz", ROCM_DISTRO_HASH="ab" * 32)
    monkeypatch.setenv("BAZEL", "/bin/true")
    assert cli.main(["--host", "--dry-run", "doctor"]) == 0
    out, err = capsys.readouterr()
    assert "the toolkit comes from ROCM_DISTRO_URL=https://example.invalid/therock-dist-linux-gfx942-7.14.0.tar.gz" in err
    assert "find_rocm_config.py" not in out + err
