"""Every input error of build/ci_build exits 2 with one line, before the checkout lock, the
sandbox and Bazel wherever the input can be checked (issue 33, item 2).

The source scan finds any exit of ci_build's own that bypasses inputs.InputError; the
behaviour tests give each wrong input to cli.main and read what it says. Nothing here runs
the sandbox, Bazel or the network: sandbox.run is recorded, the lock and the probes fail the
test if they are reached.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from ci_build_cli import cli, full, jax_patches, pythons, sandbox, sources, toolkit
from ci_build_cli.paths import CHECKOUT
from tests.conftest import unreachable_by_nobody
from tests.infra.archives import entries_of, tar_of

pytestmark = pytest.mark.unit

extractor = toolkit.extract_archive  # the repository rule's extractor, as ci_build imports it

CLI_PACKAGE = CHECKOUT / "build" / "ci_build_cli"
PROGRAMS_OF_THEIR_OWN = {"wheel_audit.py", "full_closure.py", "jax_patches.py"}

TARBALL_NAME = "therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"
ROCM_ENTRIES = {"therock/share/therock/therock_manifest.json": b"{}", "therock/lib/libamdhip64.so.7": b"elf"}


# --- the source: no exit of its own ---------------------------------------------------------


def exits_with_a_message(tree: ast.AST) -> list[int]:
    """Lines of `raise SystemExit(...)`, `sys.exit(...)` and `exit(...)` that carry an argument
    other than 0: an exit status or message that bypasses cli.main's InputError (exit 2)."""
    lines = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or not call.args:
            continue
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        first = call.args[0]
        if name not in ("SystemExit", "exit") or (isinstance(first, ast.Constant) and first.value == 0):
            continue
        if isinstance(first, ast.Call) and getattr(first.func, "id", None) == "main":
            continue  # sys.exit(main()): the status main returned, not a message of its own
        lines.append(call.lineno)
    return lines


def returns_two(tree: ast.AST) -> list[int]:
    """Lines of `return 2`: an input error printed by hand instead of raised."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Return)
            and isinstance(node.value, ast.Constant) and node.value.value == 2]


def test_the_scan_finds_what_it_looks_for():
    source = ("import sys\ndef f():\n    raise SystemExit('ci_build: no')\ndef g():\n    sys.exit(1)\n"
              "def h():\n    return 2\nsys.exit(main())\nraise SystemExit(0)\n")
    tree = ast.parse(source)
    assert exits_with_a_message(tree) == [3, 5]
    assert returns_two(tree) == [7]


def test_ci_build_exits_only_through_cli_main():
    assert {p.name for p in CLI_PACKAGE.glob("*.py") if 'if __name__ == "__main__":' in p.read_text()} == PROGRAMS_OF_THEIR_OWN
    found = {}
    for path in sorted([*CLI_PACKAGE.glob("*.py"), CHECKOUT / "build" / "ci_build"]):
        tree = ast.parse(path.read_text(), str(path))
        exits = exits_with_a_message(tree)
        if exits:
            found[path.name] = len(exits)
        # cli.main turns InputError into its 2; the package's programs of their own (run as
        # `python3 -m ci_build_cli.X`, not by ci_build's main) have their own usage errors.
        if path.name != "cli.py" and path.name not in PROGRAMS_OF_THEIR_OWN:
            assert returns_two(tree) == [], f"{path.name}: raise inputs.InputError instead of printing and returning 2"
    assert found == {}


# --- the behaviour: exit 2, one line, nothing started -----------------------------------------


@pytest.fixture
def guarded(monkeypatch, tmp_path):
    """Commands ci_build would run (recorded); the lock, the sandbox's Pythons and the network
    fail the test; no ROCM_PATH or JAX_ROCM_HOST from the environment."""
    ran = []
    monkeypatch.setattr(sandbox, "run", lambda cmd, dry_run: ran.append(list(cmd)) or 0)
    monkeypatch.setattr(sandbox, "run_bazel", lambda cmd, dry_run: (ran.append(list(cmd)) or 0, ""))
    monkeypatch.setattr(sandbox, "checkout_lock", lambda command: pytest.fail("the checkout lock was taken"))
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: pytest.fail("the sandbox was asked for its Pythons"))
    monkeypatch.setattr(sources.urllib.request, "urlopen", lambda *a, **k: pytest.fail("urlopen called"))
    monkeypatch.setattr(sandbox, "CACHE", tmp_path)
    for name in ("ROCM_PATH", *toolkit.XLA_NAMES, sandbox.HOST_ENV, "JAXCI_XLA_GIT_DIR", "JAXCI_CLONE_MAIN_XLA"):
        monkeypatch.delenv(name, raising=False)
    return ran


def tarball(path: Path, entries: dict[str, bytes | str | None] | None = None) -> Path:
    """A tar.gz of name -> file bytes, symlink target (str) or folder (None)."""
    return tar_of(path, entries_of(ROCM_ENTRIES if entries is None else entries))


def bad_tarball(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / TARBALL_NAME
    if kind == "random bytes":
        path.write_bytes(os.urandom(4096))
    elif kind == "empty file":
        path.write_bytes(b"")
    elif kind == "truncated":
        whole = tarball(path, {**ROCM_ENTRIES, "therock/lib/big": os.urandom(200_000)}).read_bytes()
        path.write_bytes(whole[:len(whole) // 2])
    elif kind == "no entries":
        tarball(path, {})
    elif kind == "not ROCm":
        tarball(path, {"photos/cat.jpg": b"\xff\xd8"})
    elif kind == "dotdot":
        tarball(path, {**ROCM_ENTRIES, "therock/../../escaped": b"!"})
    elif kind == "absolute":
        tarball(path, {**ROCM_ENTRIES, "/tmp/escaped": b"!"})
    elif kind == "symlink escape":
        tarball(path, {**ROCM_ENTRIES, "therock/lib/escape": "../../../../etc/passwd"})
    return path


def error_line(capsys) -> str:
    """What ci_build said: exactly one line starting `ci_build:`, and it is the last (notes of a
    command, `ci_build dist_wheels: ...`, and a dry run's commands may come before it)."""
    err = capsys.readouterr().err.splitlines()
    said = [line for line in err if line.startswith("ci_build:")]
    assert len(said) == 1 and err[-1] == said[0], err
    return said[0]


# Each: (argv of cli.main, the start of its one line). {tmp} is the test's folder, {tmp}/xla_tree
# a checkout of XLA as far as ci_build looks (a real XLA: full mode); all dry runs except where
# the error is about the run itself.
INPUT_ERRORS = {
    "two toolkits": (["--rocm-path=/usr", "--therock-path={tmp}", "dist_wheels"],
                     "ci_build: --rocm-path=/usr and --therock-path={tmp} name two toolkits; give one"),
    "rocm path not there": (["--rocm-path={tmp}/rocm", "native"], "ci_build: --rocm-path={tmp}/rocm: {tmp}/rocm is not a directory"),
    "a download without its sha256": (["--therock-path=https://example.com/" + TARBALL_NAME, "dist_wheels"],
                                      "ci_build: --therock-path=https://example.com/" + TARBALL_NAME + " is a download"),
    "therock path not there": (["--therock-path={tmp}/nope", "dist_wheels"],
                               "ci_build: --therock-path={tmp}/nope is neither a URL, a tarball nor a directory"),
    "file url not there": (["--therock-path=file://{tmp}/" + TARBALL_NAME, "dist_wheels"],
                           "ci_build: --therock-path=file://{tmp}/" + TARBALL_NAME + ": {tmp}/" + TARBALL_NAME +
                           " is not a file on this machine"),
    "a sha256 with nothing to check": (["--therock-sha256=" + "ab" * 32, "dist_wheels"],
                                       "ci_build: --therock-sha256=" + "ab" * 32 + " checks a TheRock tarball, but no"),
    "targets outside the family": (["--therock-path=https://example.com/" + TARBALL_NAME, "--therock-sha256=" + "ab" * 32,
                                    "--amdgpu-targets=gfx950", "dist_wheels"],
                                   "ci_build: --amdgpu-targets=gfx950 asks for gfx950, but the TheRock tarball"),
    "a release the name contradicts": (["--therock-path=https://example.com/" + TARBALL_NAME, "--therock-sha256=" + "ab" * 32,
                                        "--rocm-version=7.2.4", "dist_wheels"],
                                       "ci_build: --rocm-version=7.2.4, but the TheRock tarball " + TARBALL_NAME),
    "a rocm version that is none": (["--rocm-version=banana", "dist_wheels"], "ci_build: --rocm-version=banana is not a ROCm"),
    "python versions misspelt": (["--python-versions=3.x", "dist_wheels"], "ci_build: --python-versions: 3.x is not a Python"),
    "a manylinux policy misspelt": (["--manylinux=manylinux2014", "dist_wheels"],
                                    "ci_build: --manylinux=manylinux2014: 'manylinux2014' is not a manylinux policy"),
    "full mode of the stand-in xla": (["--mode=full", "--python-versions=3.11,3.14", "dist_wheels"],
                                      "ci_build: --mode=full builds XLA's real PJRT plugin in upstream's graph, not the "
                                      "examples/xla stand-in"),
    "kernels mode with a real xla": (["--mode=kernels", "--xla-source-dir={tmp}/xla_tree", "native"],
                                     "ci_build: --mode=kernels cannot build XLA's PJRT plugin from a real XLA"),
    "full mode in host mode": (["--xla-source-dir={tmp}/xla_tree", "--host", "dist_wheels"],
                               "ci_build: full mode (XLA's real PJRT plugin, from the pin or --xla-source-dir, builds "
                               "only in upstream's graph) runs with the sandbox's Debian Bazel"),
    "a bazelrc in kernels mode": (["--bazelrc={tmp}/file", "dist_wheels"],
                                  "ci_build: --bazelrc={tmp}/file is read by full mode's Bazel only"),
    "a bazelrc that is no file": (["--xla-source-dir={tmp}/xla_tree", "--bazelrc={tmp}/nope", "dist_wheels"],
                                  "ci_build: --bazelrc={tmp}/nope does not exist"),
    "a registry that is none": (["--xla-source-dir={tmp}/xla_tree", "--registry={tmp}", "native"],
                                "ci_build: --registry={tmp} is not a Bazel registry (it has no modules/ folder)"),
    "output dir a file": (["--output-dir={tmp}/file", "dist_wheels"], "ci_build: --output-dir={tmp}/file is a file, not a folder"),
    "jax source not there": (["--jax-source-dir={tmp}/nope", "dist_wheels"], "ci_build: --jax-source-dir={tmp}/nope does not exist"),
    "jax source a plain file": (["--jax-source-dir={tmp}/file", "native"],
                                "ci_build: --jax-source-dir={tmp}/file is neither a JAX checkout"),
    "jax archive truncated": (["--jax-source-dir={tmp}/jax.tar.gz", "dist_wheels"],
                              "ci_build: --jax-source-dir={tmp}/jax.tar.gz is refused: jax.tar.gz is not a complete"),
    "xla source a file": (["--xla-source-dir={tmp}/file", "native"],
                          "ci_build: --xla-source-dir={tmp}/file is a file, not an XLA checkout"),
    "preflight without an xla": (["preflight"], "ci_build: preflight: which XLA?"),
    "xla source not a checkout": (["--xla-source-dir={tmp}", "preflight", "--names-only"],
                                  "ci_build: --xla-source-dir={tmp} is not an XLA checkout: it has no xla/ folder"),
    "a release of stand-ins": (["dist_wheels", "--wheel-kind=release"],
                               "ci_build: --wheel-kind=release: these wheels would hold stand-ins (the PJRT plugin"),
    "a wheel date that is none": (["dist_wheels", "--wheel-kind=nightly", "--wheel-date=20261345"],
                                  "ci_build: --wheel-date=20261345 is not a date written YYYYMMDD"),
    "a wheel version that is none": (["dist_wheels", "--wheel-version=notaversion"],
                                     "ci_build: --wheel-version=notaversion is not a JAX release"),
    "a negative post release": (["dist_wheels", "--wheel-post-release=-1"], "ci_build: --wheel-post-release=-1: give N >= 1"),
    "a commit for a nightly": (["dist_wheels", "--wheel-kind=nightly", "--wheel-commit=abcdef0"],
                               "ci_build: --wheel-commit=abcdef0 names the commit of a dev version"),
    "an option of another command": (["native", "--wheel-kind=dev"], "ci_build: --wheel-kind=dev is an option of dist_wheels"),
}


@pytest.mark.parametrize("case", INPUT_ERRORS, ids=str)
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "for-real"])
def test_each_input_error_is_exit_2_and_one_line_before_the_lock(guarded, tmp_path, capsys, case, dry_run):
    (tmp_path / "file").write_text("not a folder")
    (tmp_path / "xla_tree" / "xla").mkdir(parents=True)
    (tmp_path / "jax.tar.gz").write_bytes(gzip.compress(b"x" * 100_000)[:500])
    argv, said = INPUT_ERRORS[case]
    argv = [a.format(tmp=tmp_path) for a in argv]
    argv = ["--sources=examples", *(["--dry-run"] if dry_run else []), *argv]
    assert cli.main(argv) == 2
    assert error_line(capsys).startswith(said.format(tmp=tmp_path))
    assert guarded == []


def test_an_ambient_rocm_path_that_is_not_there_is_exit_2(guarded, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "opt/rocm"))
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels"]) == 2
    assert error_line(capsys).startswith(f"ci_build: ROCM_PATH={tmp_path / 'opt/rocm'} (from the environment) does not exist")
    assert guarded == []


def test_a_python_no_interpreter_serves_is_exit_2_before_bazel(guarded, capsys, monkeypatch):
    """--python-versions=3.11 is one JAX publishes: only the interpreters that would serve it (the
    sandbox's and the host's, known before anything runs) refuse it, and guarded shows nothing ran."""
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: [pythons.Interpreter("3.14", "/usr/bin/python3.14", None)])
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels", "--python-versions=3.11"]) == 2
    assert error_line(capsys).startswith("ci_build: --python-versions=3.11: no interpreter with headers for Python 3.11; "
                                         "found: 3.14")
    assert guarded == []


@pytest.mark.parametrize("command", ["native", "dist_wheels", "preflight"])
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "for-real"])
def test_kernels_mode_of_the_pinned_xla_is_exit_2_before_anything_runs(guarded, capsys, command, dry_run):
    """The pins' XLA is a real one, which only full mode builds: --mode=kernels contradicts it."""
    argv = ["--mode=kernels", *(["--dry-run"] if dry_run else []), command]
    if command == "preflight":
        argv.append(f"--xla-source-dir={CHECKOUT / 'full'}")  # any folder but examples/xla is a real XLA
    assert cli.main(argv) == 2
    assert error_line(capsys) == (
        "ci_build: --mode=kernels cannot build XLA's PJRT plugin from a real XLA (the pin or --xla-source-dir): only "
        "upstream's graph declares what it needs. Drop --mode (a real XLA builds in full mode), or add "
        "--sources=examples for the examples/xla stand-in (e.g. to work on JAX's FFI modules with --jax-source-dir)")
    assert guarded == []


def test_full_mode_offline_without_a_registry_is_exit_2_before_anything_runs(guarded, capsys, monkeypatch, tmp_path):
    """Upstream's graph resolves from the Bazel Central Registry: unreachable and no --registry,
    nothing could build. A dry run asks no network."""
    (tmp_path / "xla").mkdir()  # an XLA checkout as far as ci_build looks
    asked = []
    monkeypatch.setattr(full, "registry_unreachable", lambda timeout=10: asked.append(timeout) or "Name or service not known")
    for command in ("native", "dist_wheels"):
        assert cli.main([command, f"--xla-source-dir={tmp_path}"]) == 2
        line = error_line(capsys)
        assert line.startswith(f"ci_build: a real XLA builds in full mode, upstream's module graph, which resolves from "
                               f"the Bazel Central Registry ({jax_patches.BCR}: Name or service not known). Offline, pass "
                               "--registry=DIR --distdir=DIR --bazelrc=FILE as tests/infra/real_trees.py lays them out")
        assert line.endswith("or build the offline demo with --sources=examples")
    assert len(asked) == 2 and guarded == []
    (tmp_path / "bcr" / "modules").mkdir(parents=True)
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: [pythons.Interpreter("3.14", "/usr/bin/python3.14", None)])
    assert cli.main(["--dry-run", "dist_wheels", f"--xla-source-dir={tmp_path}"]) == 0
    assert cli.main(["--dry-run", "native", f"--xla-source-dir={tmp_path}", f"--registry={tmp_path / 'bcr'}"]) == 0
    assert len(asked) == 2, "a dry run, or a run with --registry, asks no network"


# --- a local TheRock tarball, checked by the repository rule's own extractor -------------------

needs_data_filter = pytest.mark.skipif(not hasattr(tarfile, "data_filter"),
                                       reason=f"Python {sys.version.split()[0]} lacks tarfile's data filter")

TARBALL_ERRORS = {
    "random bytes": "is not a complete, readable tar archive",
    "empty file": "is not a complete, readable tar archive",
    "truncated": "is not a complete, readable tar archive",
    "no entries": "is an empty archive",
    "not ROCm": "holds no ROCm toolkit: found none of share/therock/therock_manifest.json (TheRock)",
    "dotdot": "therock/../../escaped",
    "absolute": "/tmp/escaped: absolute path in archive",
    "symlink escape": "therock/lib/escape",
}


@pytest.mark.parametrize("kind", [pytest.param(k, marks=needs_data_filter) if k in ("dotdot", "absolute", "symlink escape")
                                  else k for k in TARBALL_ERRORS])
def test_a_bad_local_tarball_is_refused_before_the_lock(guarded, tmp_path, capsys, kind):
    path = bad_tarball(tmp_path, kind)
    assert cli.main(["--sources=examples", "dist_wheels", f"--therock-path={path}"]) == 2
    line = error_line(capsys)
    assert line.startswith(f"ci_build: --therock-path={path} ") and TARBALL_ERRORS[kind] in line
    assert "strip_prefix" not in line  # the user gave none
    assert guarded == []


@needs_data_filter
@pytest.mark.parametrize("kind", ["truncated", "dotdot", "absolute", "symlink escape", "no entries"])
def test_the_pre_check_says_what_the_repository_rules_extraction_says(tmp_path, capsys, guarded, kind):
    """One policy: ci_build's refusal carries the extractor's own reason (extract_archive.extract),
    up to where the member would land, which depends on the folder it is extracted into."""
    path = bad_tarball(tmp_path, kind)
    with pytest.raises(extractor.UnsafeArchive) as refused:
        extractor.extract(path, tmp_path / "out")
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels", f"--therock-path={path}"]) == 2
    line = error_line(capsys)
    reason = str(refused.value).split(" to '")[0]
    assert reason in line and reason.endswith(("archive's folder", "archive", ")"))


def test_a_wrong_sha256_of_a_local_tarball_names_the_real_one(guarded, tmp_path, capsys):
    path = tarball(tmp_path / TARBALL_NAME)
    real = hashlib.sha256(path.read_bytes()).hexdigest()
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels", f"--therock-path={path}", "--therock-sha256=" + "ab" * 32]) == 2
    assert error_line(capsys) == (f"ci_build: --therock-sha256={'ab' * 32} is not the sha256 of {path} (it is {real}): give "
                                  "the tarball AMD published with that sha256, or correct --therock-sha256")
    assert guarded == []


@pytest.mark.parametrize("rooted", ["in one top folder", "at the root"])
def test_a_good_local_tarball_goes_on_to_the_build(tmp_path, capsys, monkeypatch, rooted):
    ran = []
    monkeypatch.setattr(sandbox, "run", lambda cmd, dry_run: ran.append(list(cmd)) or 0)
    monkeypatch.setattr(sandbox, "run_bazel", lambda cmd, dry_run: (ran.append(list(cmd)) or 0, ""))
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: [pythons.Interpreter("3.14", "/usr/bin/python3.14", None)])
    monkeypatch.delenv("ROCM_PATH", raising=False)
    monkeypatch.delenv(sandbox.HOST_ENV, raising=False)
    entries = ROCM_ENTRIES if rooted == "in one top folder" else {k.removeprefix("therock/"): v for k, v in ROCM_ENTRIES.items()}
    path = tarball(tmp_path / TARBALL_NAME, entries)
    sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels", f"--therock-path={path}", f"--therock-sha256={sha256}"]) == 0
    assert any(f"--repo_env=THEROCK_URL=file://{path}" in cmd for cmd in ran)


def test_without_the_data_filter_the_tarball_is_still_held_to_the_policy(tmp_path, capsys, monkeypatch, guarded):
    """Debian 12's python3 (3.11.2) lacks tarfile's data filter: the pre-check applies the one
    archive policy (extract_archive.entry_problem) all the same, and reads the tarball to its end."""
    monkeypatch.setattr(extractor, "has_data_filter", lambda: False)
    monkeypatch.delattr(tarfile.TarInfo, "replace", raising=False)  # it came with the filter (3.11.4, 3.12)
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: [pythons.Interpreter("3.14", "/usr/bin/python3.14", None)])
    good = tarball(tmp_path / TARBALL_NAME)
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels", f"--therock-path={good}"]) == 0
    capsys.readouterr()
    path = tarball(tmp_path / ("escaping-" + TARBALL_NAME), {**ROCM_ENTRIES, "therock/../../escaped": b"!"})
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels", f"--therock-path={path}"]) == 2
    assert error_line(capsys).endswith("therock/../../escaped: leads outside the archive's folder; download it again, or "
                                       "give another TheRock tarball")
    cut = bad_tarball(tmp_path, "truncated")
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels", f"--therock-path={cut}"]) == 2
    assert "is not a complete, readable tar archive" in error_line(capsys)


def test_the_entry_point_refuses_random_bytes_in_one_line_before_anything_starts(tmp_path):
    """build/ci_build itself, as a user runs it (not a dry run): exit 2, one line on stderr,
    nothing on stdout, and no lock, sandbox or Bazel reached (it would take far longer)."""
    path = tmp_path / TARBALL_NAME
    path.write_bytes(os.urandom(65536))
    env = {k: v for k, v in os.environ.items() if k not in ("ROCM_PATH", sandbox.HOST_ENV)}
    result = subprocess.run([sys.executable, str(CHECKOUT / "build" / "ci_build"), "--sources=examples", "dist_wheels",
                             f"--therock-path={path}", f"--output-dir={tmp_path / 'dist'}"],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(
        f"ci_build: --therock-path={path} is refused: {TARBALL_NAME} is not a complete, readable tar archive"), result.stderr
    assert not (tmp_path / "dist").exists()


@needs_data_filter
def test_a_jax_archive_is_held_to_the_same_policy_before_bazel(guarded, tmp_path, capsys):
    """--jax-source-dir=ARCHIVE goes through the same extractor check as a TheRock tarball: an
    entry that would land outside the tree is refused in one line; links inside it are fine."""
    tree = {"jax-0.10.2/jax/version.py": b'_version = "0.10.2"\n', "jax-0.10.2/jaxlib/gpu/x.cc": b"//",
            "jax-0.10.2/jaxlib/rocm/x.cc": "../gpu/x.cc"}
    good = tarball(tmp_path / "jax.tar.gz", tree)
    assert cli.main(["--sources=examples", f"--jax-source-dir={good}", "--dry-run", "native"]) == 0
    capsys.readouterr()
    evil = tarball(tmp_path / "evil.tar.gz", {**tree, "jax-0.10.2/jaxlib/escape": "../../../etc"})
    assert cli.main(["--sources=examples", f"--jax-source-dir={evil}", "--dry-run", "native"]) == 2
    line = error_line(capsys)
    assert line.startswith(f"ci_build: --jax-source-dir={evil} is refused: jax-0.10.2/jaxlib/escape: ")
    assert line.endswith("a symlink to ../../../etc, outside the archive's folder; download or make it again, or give "
                         "the checkout's folder")


@pytest.mark.parametrize("typo, says", [("--python-versions=3.99", "--python-versions=3.99: JAX 0.10.2 (the pin"),
                                        ("--python-versions=3.15", "--python-versions=3.15: JAX 0.10.2 (the pin"),
                                        ("--amdgpu-targets=gfx9999", "--amdgpu-targets: ")])
def test_a_newcomers_typo_is_answered_in_one_line_before_anything_is_made(typo, says, tmp_path):
    """On a fresh machine (an empty cache), as the README's command: exit 2, one line, at once,
    nothing written: no sandbox, no download."""
    cache = tmp_path / "cache"
    cache.mkdir()
    started = time.monotonic()
    result = subprocess.run([sys.executable, "build/ci_build", "dist_wheels", typo], cwd=CHECKOUT, capture_output=True, text=True,
                            env=dict(os.environ, XDG_CACHE_HOME=str(cache)))
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ci_build: " + says), result.stderr
    # 0.3-0.5 s on an idle machine; 2.6 s was seen beside three builds on two cores. Building the
    # sandbox or downloading takes minutes: 10 s tells them apart on a loaded CI machine too.
    assert elapsed < 10, elapsed
    assert not list(cache.iterdir())


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming an ordinary user (nobody) needs root")
@pytest.mark.skipif(bool(unreachable_by_nobody(CHECKOUT / "build/ci_build")),
                    reason=unreachable_by_nobody(CHECKOUT / "build/ci_build") or "-")
def test_a_machine_that_cannot_build_the_sandbox_is_named_before_any_download():
    """The README's command as an ordinary user the sandbox cannot be built for (nobody has no
    subordinate ids; without mmdebstrap the same path says so): exit 2 at once, the one line of
    `python3 -m sandbox ensure --check`, nothing downloaded or built (only ci_build's lock)."""
    import shutil
    import tempfile

    home = Path(tempfile.mkdtemp(dir="/tmp"))  # nobody reaches it (pytest's tmp_path lies in root's 0700 folder)
    try:
        home.chmod(0o777)
        started = time.monotonic()
        result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", f"HOME={home}",
                                 f"XDG_CACHE_HOME={home}/cache", "/usr/bin/python3", "build/ci_build", "--sources=examples",
                                 "dist_wheels", f"--output-dir={home}/dist"], cwd=CHECKOUT, capture_output=True, text=True)
        elapsed = time.monotonic() - started
        made = [p.relative_to(home) for p in home.rglob("*") if p.is_file()]
    finally:
        shutil.rmtree(home, ignore_errors=True)
    assert result.returncode == 2, result.stderr
    # The first prerequisite this machine lacks for nobody: newuidmap (package uidmap, not on a
    # fresh Debian 12), else nobody's subordinate ids.
    missing = "usermod --add-subuids" if shutil.which("newuidmap") else "package uidmap"
    errors = [line for line in result.stderr.splitlines() if line.startswith("ci_build: sandbox without root ")]
    assert len(errors) == 1 and missing in errors[0], result.stderr
    assert "+ " not in result.stderr and "prefetch" not in result.stderr
    assert elapsed < 10, elapsed
    assert all(p.parts[:3] == ("cache", "jax-rocm-build", "locks") for p in made), made
