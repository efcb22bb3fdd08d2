"""build/ci_build's pure pieces: wheel flags, interpreter and toolkit choice, source checks,
wheel collection, and the dist_wheels command line it prints (--dry-run, nothing runs).

Nothing here touches the network, the sandbox or Bazel: urlopen, find_interpreters and
run are replaced; files live under tmp_path.
"""

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
import time
import urllib.error
import zipfile
from pathlib import Path

import pytest

from ci_build_cli import cli, dist_wheels, full, inputs, options, pythons, sandbox, sources, toolkit, wheels
from ci_build_cli.paths import CHECKOUT  # the checkout of the ci_build imported here (pytest.ini's pythonpath)
from tests.conftest import DRY_RUN, bazel_build, require_jax_tree

pytestmark = pytest.mark.unit


JAX_PIN = json.loads((CHECKOUT / "third_party" / "jax" / "pin.json").read_text())
XLA_PIN = json.loads((CHECKOUT / "third_party" / "xla" / "pin.json").read_text())
README = CHECKOUT / "README.md"


def args(*argv: str):
    """Namespace of `ci_build [flags] dist_wheels [flags]`, from the real parser, with the kind
    of wheel chosen as ci_build chooses it."""
    argv = list(argv)
    split = argv.index("dist_wheels") if "dist_wheels" in argv else len(argv)
    parsed = cli.parse_args(argv[:split] + ["dist_wheels"] + argv[split + 1:])
    dist_wheels.choose_wheel_kind(parsed)
    return parsed


def jax_tree(root: Path, version_py: str | None = '_version = "0.11.0"\n') -> Path:
    """A JAX source tree with (optionally) jax/version.py."""
    (root / "jax").mkdir(parents=True)
    if version_py is not None:
        (root / "jax" / "version.py").write_text(f"# JAX version\n{version_py}_dev_suffix = ''\n")
    return root


@pytest.fixture
def fixed_clock(monkeypatch):
    """UTC is 2026-01-02 23:30 while local time is already 2026-01-03: the UTC date must win."""
    utc = time.struct_time((2026, 1, 2, 23, 30, 0, 4, 2, 0))
    local = time.struct_time((2026, 1, 3, 1, 30, 0, 5, 3, 0))
    monkeypatch.setattr(wheels.time, "gmtime", lambda *a: utc)
    monkeypatch.setattr(wheels.time, "localtime", lambda *a: local)
    return "20260102"


def therock_tarball(path: Path, entries: dict[str, bytes] | None = None) -> Path:
    """A small tarball laid out as TheRock's (one top folder, its manifest), or of `entries`."""
    if entries is None:
        entries = {"therock/share/therock/therock_manifest.json": b"{}", "therock/lib/libamdhip64.so.7": b"elf"}
    with tarfile.open(path, "w:gz") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def one_error_line(capsys) -> str:
    """The one line ci_build wrote to stderr (the test fails if it wrote more or fewer)."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    return err.rstrip("\n")


# --- the parser: every option before or after the subcommand --------------------------

# ROCm's own documentation (rocm-jax's README) spells the release build this way.
ROCM_DOCS_COMMAND = ["--compiler=clang", "--python-versions=3.12", "--rocm-version=7.10.0a20251120",
                     "--therock-path=https://rocm.nightlies.amd.com/tarball/therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz",
                     "dist_wheels"]


# Values of the options whose values are checked as they are parsed (build/ci_build_cli/inputs.py).
CHECKED_SAMPLES = {"amdgpu_targets": "gfx942,gfx950", "therock_sha256": "ab" * 32, "rocm_version": "7.2.4",
                   "python_versions": "3.11,3.14", "wheel_version": "0.10.2", "wheel_date": "20261126",
                   "wheel_commit": "0123abc"}


def sample(option) -> tuple[list[str], object]:
    """(argv words giving `option` a value other than its default, the value parsed)."""
    kwargs = option.kwargs
    if option.dest in CHECKED_SAMPLES:
        return [option.flags[0], CHECKED_SAMPLES[option.dest]], CHECKED_SAMPLES[option.dest]
    if kwargs.get("action") == "store_true":
        return [option.flags[0]], True
    if kwargs.get("type") is int:
        return [f"{option.flags[0]}=3"], 3
    if "choices" in kwargs:
        value = next(c for c in kwargs["choices"] if c != option.default)
        return [f"{option.flags[0]}={value}"], value
    return [option.flags[0], f"value of {option.dest}"], f"value of {option.dest}"


def command_of(option) -> str:
    return option.commands[0] if option.commands else "dist_wheels"


def test_the_options_table_covers_every_option_of_the_parser():
    parser = cli.parser()
    declared = {s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"}
    assert declared == {f for o in options.OPTIONS for f in o.flags}
    assert len(options.OPTIONS) >= 20


@pytest.mark.parametrize("option", options.OPTIONS, ids=lambda o: o.flags[0])
def test_every_option_is_accepted_before_and_after_the_subcommand(option):
    words, value = sample(option)
    command = command_of(option)
    before = cli.parse_args(words + [command])
    after = cli.parse_args([command] + words)
    assert getattr(before, option.dest) == getattr(after, option.dest) == value
    assert before.command == after.command == command
    # Nothing else differs from the defaults, in either order (the subparser clobbers nothing).
    defaults = vars(cli.parse_args([command]))
    for parsed in (before, after):
        assert {k: v for k, v in vars(parsed).items() if k != option.dest} == {k: v for k, v in defaults.items() if k != option.dest}


def test_defaults_are_the_options_own():
    parsed = cli.parse_args(["dist_wheels"])
    assert {o.dest: getattr(parsed, o.dest) for o in options.OPTIONS} == {o.dest: o.default for o in options.OPTIONS}
    assert (parsed.sources, parsed.compiler, parsed.wheel_kind, parsed.rocm, parsed.dry_run) == ("pinned", "gcc", None, "full", False)


def test_options_split_around_the_subcommand_are_all_kept():
    parsed = cli.parse_args(["--sources=examples", "--compiler=clang", "--amdgpu-targets=gfx950", "dist_wheels",
                                  "--rocm-path=/opt/rocm", "--wheel-kind=nightly", "--dry-run"])
    assert (parsed.sources, parsed.compiler, parsed.amdgpu_targets, parsed.rocm_path, parsed.wheel_kind, parsed.dry_run) == (
        "examples", "clang", "gfx950", "/opt/rocm", "nightly", True)
    # Given twice, the later one wins.
    assert cli.parse_args(["--compiler=clang", "dist_wheels", "--compiler=gcc"]).compiler == "gcc"


def test_the_command_rocms_docs_give_parses_verbatim():
    parsed = cli.parse_args(ROCM_DOCS_COMMAND)
    assert parsed.command == "dist_wheels" and parsed.fn is dist_wheels.cmd_dist_wheels
    assert (parsed.compiler, parsed.python_versions, parsed.rocm_version) == ("clang", "3.12", "7.10.0a20251120")
    assert parsed.therock_path.endswith("/therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz")
    with_sha = cli.parse_args(ROCM_DOCS_COMMAND[:-1] + ["--therock-sha256=" + "ab" * 32, "dist_wheels", "--sources=examples"])
    assert (with_sha.therock_sha256, with_sha.sources) == ("ab" * 32, "examples")


@pytest.mark.parametrize("argv", [["--wheel-kind=dev", "native"], ["native", "--wheel-kind=dev"]])
def test_an_option_of_another_subcommand_is_an_error_in_either_place(argv, capsys):
    assert cli.main(argv) == 2
    assert one_error_line(capsys) == ("ci_build: --wheel-kind=dev is an option of dist_wheels, which `native` does not "
                                      "use: drop it, or run dist_wheels")


def test_the_doctor_option_is_refused_for_dist_wheels(capsys):
    with pytest.raises(inputs.InputError, match="--rocm=minimal is an option of doctor"):
        cli.parse_args(["dist_wheels", "--rocm=minimal"])
    assert cli.parse_args(["--rocm=minimal", "doctor"]).rocm == "minimal"


def test_every_subcommand_help_lists_every_option(capsys):
    for name, *_ in cli.COMMANDS:
        with pytest.raises(SystemExit):
            cli.parse_args([name, "--help"])
        out = capsys.readouterr().out
        missing = [f for o in options.OPTIONS for f in o.flags if not re.search(re.escape(f) + r"(?![a-z0-9-])", out)]
        assert not missing, (name, missing)
        assert "==SUPPRESS==" not in out and "(default: gcc)" in out


# --- wheel_flags / jax_tree_identity ---------------------------------------------------


def test_release_is_only_the_kind():
    assert wheels.wheel_flags(args("--allow-stand-ins")) == ["--//wheel:kind=release"]


def test_wheels_of_stand_ins_are_dev_wheels_unless_told(capsys):
    # Kernels mode always builds _triton and rocm_plugin_extension from examples/jax.
    parsed = args()
    assert parsed.wheel_kind == "dev"
    assert "making dev wheels, as they will hold stand-ins (_triton and rocm_plugin_extension" in capsys.readouterr().err
    demo = args("--sources=examples")
    assert demo.wheel_kind == "dev"
    assert "the PJRT plugin (examples/xla); JAX's ROCm modules (examples/jax)" in capsys.readouterr().err
    assert args("--sources=examples", "--allow-stand-ins").wheel_kind == "release"
    assert args("--sources=examples", "--wheel-kind=nightly").wheel_kind == "nightly"
    assert capsys.readouterr().err == "", "a kind the flags chose is not announced"


def test_dev_wheels_of_the_stand_ins_name_this_projects_commit():
    flags = wheels.wheel_flags(args("--sources=examples", "dist_wheels", "--wheel-date=20261126"))
    head = subprocess.run(["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert f"--//wheel:commit={head or JAX_PIN['commit']}" in flags
    assert "--//wheel:kind=dev" in flags and "--//wheel:date=20261126" in flags


@pytest.mark.parametrize(("kind", "stand_ins", "allow", "date", "commit", "chosen"), [
    (None, [], False, None, None, "release"),
    (None, ["x"], False, None, None, "dev"),
    (None, ["x"], True, None, None, "release"),
    ("nightly", ["x"], False, "20261126", None, "nightly"),
    ("dev", [], False, "20261126", "abcdef0", "dev"),
    ("release", ["x"], True, None, None, "release"),
])
def test_the_kind_of_wheel(kind, stand_ins, allow, date, commit, chosen):
    assert inputs.wheel_kind(kind, stand_ins, allow, date, commit) == chosen


@pytest.mark.parametrize(("kind", "stand_ins", "date", "commit", "says"), [
    ("release", ["the PJRT plugin (examples/xla)"], None, None,
     "--wheel-kind=release: these wheels would hold stand-ins (the PJRT plugin (examples/xla))"),
    ("release", [], "20261126", None, "--wheel-date=20261126 dates nightly and dev versions"),
    (None, [], "20261126", None, "--wheel-date=20261126 dates nightly and dev versions"),
    ("nightly", [], "20261126", "abcdef0", "--wheel-commit=abcdef0 names the commit of a dev version"),
])
def test_a_kind_that_cannot_be_made_is_refused_before_the_build(kind, stand_ins, date, commit, says):
    with pytest.raises(inputs.InputError, match=re.escape(says)):
        inputs.wheel_kind(kind, stand_ins, False, date, commit)


@pytest.mark.parametrize(("check", "value", "says"), [
    (inputs.wheel_version, "notaversion", "is not a JAX release: give X.Y.Z"),
    (inputs.wheel_version, "0.10", "is not a JAX release"),
    (inputs.wheel_version, "0.010.2", "is not a JAX release"),
    (inputs.wheel_date, "20261345", "is not a date written YYYYMMDD"),
    (inputs.wheel_date, "2026-11-26", "is not a date written YYYYMMDD"),
    (inputs.wheel_date, "2026112", "is not a date written YYYYMMDD"),
    (inputs.wheel_commit, "HEAD", "is not a git commit"),
    (inputs.wheel_post_release, -1, "give N >= 1"),
])
def test_wheel_version_flags_are_checked_as_they_are_parsed(check, value, says):
    with pytest.raises(inputs.InputError, match=re.escape(says)):
        check(value)


def test_release_from_examples_names_the_overridden_sources(tmp_path):
    # --sources=examples replaces XLA and JAX with examples/; examples/jax's version.py
    # gives the pins' release, and --jax-source-dir takes precedence over examples/jax.
    assert sources.source_dirs(args("--sources=examples")) == {
        "xla": CHECKOUT / "examples" / "xla", "jax": CHECKOUT / "examples" / "jax"}
    assert wheels.wheel_flags(args("--sources=examples", "--allow-stand-ins")) == [
        "--//wheel:kind=release", "--//wheel:version=0.10.2", "--//wheel:source_overrides=jax,xla"]
    assert wheels.wheel_flags(args("--sources=examples", f"--jax-source-dir={jax_tree(tmp_path)}", "--allow-stand-ins")) == [
        "--//wheel:kind=release", "--//wheel:version=0.11.0", "--//wheel:source_overrides=jax,xla"]


def test_a_real_jax_tree_gives_its_release_and_is_passed_on():
    """Gated (JAX_ROCM_TEST_JAX_TREE): the real tree's jax/version.py and commit (git checkout or
    `git archive`, else none), and the override ci_build hands to tools/bazel."""
    tree = require_jax_tree()
    version, commit = sources.jax_tree_identity(tree)
    assert re.fullmatch(r"\d+\.\d+\.\d+", version or ""), version
    if (tree / ".git").exists():  # git gives a checkout's commit: it must be found
        assert commit and len(commit) == 40, commit
    if version == "0.10.2" and commit:
        assert commit == "990e6a0b84138346e6a38785412f36356e0e5dc3"
    flags = sandbox.bazel_flags(args(f"--jax-source-dir={tree}"))
    assert f"--override_repository=jax={tree.resolve()}" in flags
    assert sources.source_dirs(args("--sources=examples", f"--jax-source-dir={tree}"))["jax"] == tree.resolve()


def test_nightly_with_a_date():
    flags = wheels.wheel_flags(args("dist_wheels", "--wheel-kind=nightly", "--wheel-date=20261123"))
    assert flags == ["--//wheel:kind=nightly", "--//wheel:date=20261123"]


def test_nightly_without_a_date_is_today_in_utc(fixed_clock):
    flags = wheels.wheel_flags(args("dist_wheels", "--wheel-kind=nightly"))
    assert flags == ["--//wheel:kind=nightly", f"--//wheel:date={fixed_clock}"]


def test_dev_with_a_commit():
    flags = wheels.wheel_flags(args("dist_wheels", "--wheel-kind=dev", "--wheel-date=20250102",
                                      "--wheel-commit=abcdef0123"))
    assert flags == ["--//wheel:kind=dev", "--//wheel:date=20250102", "--//wheel:commit=abcdef0123"]


def test_dev_without_a_commit_or_tree_is_the_pins_commit():
    flags = wheels.wheel_flags(args("dist_wheels", "--wheel-kind=dev", "--wheel-date=20250102"))
    assert f"--//wheel:commit={JAX_PIN['commit']}" in flags


def test_dev_from_a_jax_tree_that_is_no_git_checkout_is_the_pins_commit(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # git must not find a repository above
    tree = jax_tree(tmp_path / "jax")
    flags = wheels.wheel_flags(args(f"--jax-source-dir={tree}", "dist_wheels", "--wheel-kind=dev",
                                      "--wheel-date=20250102"))
    assert f"--//wheel:commit={JAX_PIN['commit']}" in flags


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_dev_from_a_jax_git_checkout_is_its_head(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    tree = jax_tree(tmp_path / "jax")
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "x"], check=True)
    head = subprocess.run(git + ["rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    assert head != JAX_PIN["commit"]
    flags = wheels.wheel_flags(args(f"--jax-source-dir={tree}", "dist_wheels", "--wheel-kind=dev",
                                      "--wheel-date=20250102"))
    assert f"--//wheel:commit={head}" in flags
    assert "--//wheel:version=0.11.0" in flags and "--//wheel:source_overrides=jax" in flags


def test_a_dev_wheel_reads_the_jax_tree_once(tmp_path, monkeypatch):
    tree = jax_tree(tmp_path / "jax")
    seen = []
    real = sources.source_tree.identify
    monkeypatch.setattr(sources.source_tree, "identify", lambda source: seen.append(source) or real(source))
    sources.jax_tree_identity.cache_clear()
    flags = wheels.wheel_flags(args(f"--jax-source-dir={tree}", "dist_wheels", "--wheel-kind=dev",
                                      "--wheel-date=20250102"))
    assert "--//wheel:version=0.11.0" in flags and any(f.startswith("--//wheel:commit=") for f in flags)
    assert seen == [tree], "version and commit come from one read of the tree"


def test_post_release_and_no_rocm_version_extra():
    flags = wheels.wheel_flags(args("dist_wheels", "--wheel-post-release=2", "--no-rocm-version-extra", "--allow-stand-ins"))
    assert flags == ["--//wheel:kind=release", "--//wheel:post_release=2", "--no//wheel:rocm_version_extra"]


def test_given_wheel_version_wins_over_the_jax_tree(tmp_path):
    tree = jax_tree(tmp_path / "jax")
    assert "--//wheel:version=0.11.0" in wheels.wheel_flags(args(f"--jax-source-dir={tree}"))
    flags = wheels.wheel_flags(args(f"--jax-source-dir={tree}", "dist_wheels", "--wheel-version=0.12.1"))
    assert "--//wheel:version=0.12.1" in flags and "--//wheel:version=0.11.0" not in flags


@pytest.mark.parametrize("line", ['_version = "0.11.0"\n', '_version: str = "0.11.0"\n'])
def test_jax_tree_version_reads_version_py(tmp_path, line):
    assert sources.jax_tree_identity(jax_tree(tmp_path, line))[0] == "0.11.0"


def test_jax_tree_version_is_none_without_a_version(tmp_path):
    assert sources.jax_tree_identity(None)[0] is None
    assert sources.jax_tree_identity(jax_tree(tmp_path / "no_file", None))[0] is None
    assert sources.jax_tree_identity(jax_tree(tmp_path / "no_line", "version = 3\n"))[0] is None


def test_the_examples_jax_tree_is_a_stand_in_of_the_pinned_release():
    # examples/jax/jax/version.py names the release the pins belong to; it is no git checkout.
    assert sources.jax_tree_identity(CHECKOUT / "examples" / "jax") == ("0.10.2", None)
    assert JAX_PIN["urls"][0].endswith("jax-v0.10.2.tar.gz")


# --- least_compatible -----------------------------------------------------------------


def test_least_compatible_is_the_newest_glibc():
    assert wheels.least_compatible(["manylinux_2_35_x86_64", "manylinux_2_38_x86_64"]) == "manylinux_2_38_x86_64"
    assert wheels.least_compatible(["manylinux_2_38_x86_64", "manylinux_2_35_x86_64"]) == "manylinux_2_38_x86_64"


def test_least_compatible_compares_numbers_not_strings():
    assert wheels.least_compatible(["manylinux_2_9_x86_64", "manylinux_2_17_x86_64"]) == "manylinux_2_17_x86_64"
    assert wheels.least_compatible(["manylinux_2_17_x86_64", "manylinux_2_9_x86_64"]) == "manylinux_2_17_x86_64"


def test_least_compatible_prefers_a_non_manylinux_tag():
    assert wheels.least_compatible(["manylinux_2_38_x86_64", "linux_x86_64"]) == "linux_x86_64"


# --- pick_interpreters ----------------------------------------------------------------

FOUND = [pythons.Interpreter("3.11", "/usr/bin/python3.11", None),
         pythons.Interpreter("3.12", "/opt/py312/bin/python3.12", "/opt/py312"),
         pythons.Interpreter("3.14", "/usr/bin/python3.14", None)]


def test_pick_interpreters_defaults_to_those_found_that_jax_publishes_for():
    found = [pythons.Interpreter("3.10", "/usr/bin/python3.10", None), *FOUND]
    assert pythons.pick_interpreters(None, found) == FOUND
    assert pythons.pick_interpreters("", found) == FOUND


def test_each_published_python_left_out_gets_one_line_saying_how_to_add_it():
    lines = pythons.left_out(FOUND)
    assert len(lines) == 1 and lines[0].startswith("Python 3.13 left out: no interpreter with headers (found: 3.11, 3.12, 3.14)")
    assert "install python3.13 with its headers under a prefix of its own" in lines[0]
    assert pythons.left_out([]) and all("(found: none)" in line for line in pythons.left_out([]))


def test_in_host_mode_a_python_left_out_is_added_on_path():
    (line,) = pythons.left_out(FOUND, host=True)
    assert line.endswith("install python3.13 and its headers (python3.13-dev, or pyenv, python.org) so that python3.13 "
                         "is on PATH")
    assert "--host" in pythons.left_out(FOUND)[0] and "--host" not in line


def test_host_mode_finds_each_python_on_path_with_headers_under_usr_too(tmp_path, monkeypatch):
    """/usr's Pythons count in host mode (the sandboxed mode cannot mount them); one without
    headers does not; each at the path PATH gives it."""
    probes = {"/usr/bin/python3.13": "3.13 /usr /usr/include/python3.13", "/usr/bin/python3.12": "3.12 /usr /nowhere",
              "/opt/py/bin/python3.14": "3.14 /opt/py /usr/include/python3.13", "/venv/bin/python": "3.13 /usr x"}
    monkeypatch.setattr(pythons.shutil, "which", lambda name: {"python3.12": "/usr/bin/python3.12", "python3.13":
                        "/usr/bin/python3.13", "python3.14": "/opt/py/bin/python3.14"}.get(name))
    monkeypatch.setattr(pythons.sys, "executable", "/venv/bin/python")
    monkeypatch.setattr(pythons, "_probe", lambda cmd: probes[cmd[0]].split())
    monkeypatch.setattr(pythons.Path, "exists", lambda p: str(p) == "/usr/include/python3.13/Python.h")
    assert pythons.find_host_interpreters() == [pythons.Interpreter("3.13", "/usr/bin/python3.13", None),
                                               pythons.Interpreter("3.14", "/opt/py/bin/python3.14", None)]


def test_pick_interpreters_keeps_the_requested_order():
    picked = pythons.pick_interpreters("3.14, 3.11,", FOUND)
    assert [i.version for i in picked] == ["3.14", "3.11"]
    assert picked[0] is FOUND[2]


def test_pick_interpreters_missing_version_lists_those_found():
    with pytest.raises(inputs.InputError) as error:  # exit 2, one line
        pythons.pick_interpreters("3.11,3.13", FOUND)
    message = str(error.value)
    assert message.split("found:")[0].endswith("for Python 3.13; ")  # only the missing one
    assert "3.11 (/usr/bin/python3.11)" in message and "3.12 (/opt/py312/bin/python3.12)" in message
    # Sandboxed: a prefix of its own, or host mode with the user's own -dev package; host mode: PATH.
    assert "or build in host mode (--host) with your own python3.13-dev; or ask only" in message
    with pytest.raises(inputs.InputError) as error:
        pythons.pick_interpreters("3.13", FOUND, host=True)
    assert "install python3.13 and its headers (python3.13-dev) so that python3.13 is on PATH" in str(error.value)


def test_pick_interpreters_none_found():
    with pytest.raises(inputs.InputError) as error:
        pythons.pick_interpreters("3.11", [])
    assert "found: none" in str(error.value)


# --- therock_flags --------------------------------------------------------------------


def test_therock_url_needs_a_sha256():
    with pytest.raises(inputs.InputError) as error:
        toolkit.therock_flags("https://example.com/therock.tar.gz", None)
    assert "--therock-sha256" in str(error.value)


def test_therock_url_with_sha256():
    url = "https://example.com/therock-7.2.tar.gz"
    assert toolkit.therock_flags(url, "ab" * 32) == (
        [f"--repo_env=THEROCK_URL={url}", f"--repo_env=THEROCK_SHA256={'ab' * 32}"], [])


def test_therock_directory_is_rocm_path_and_bound(tmp_path):
    rocm = tmp_path / "rocm"
    rocm.mkdir()
    assert toolkit.therock_flags(str(rocm), None) == ([f"--repo_env=ROCM_PATH={rocm.resolve()}"], [str(rocm.resolve())])


def test_therock_tarball_is_a_file_url_with_its_sha256(tmp_path):
    tarball = tmp_path / "dl" / "therock.tar.gz"
    tarball.parent.mkdir()
    data = b"not really a tarball\n" * 100000  # > 1 MiB: more than one read block
    tarball.write_bytes(data)
    flags, binds = toolkit.therock_flags(str(tarball), None)
    assert flags == [f"--repo_env=THEROCK_URL=file://{tarball.resolve()}",
                     f"--repo_env=THEROCK_SHA256={hashlib.sha256(data).hexdigest()}"]
    assert binds == [str(tarball.parent.resolve())]
    # A given sha256 is passed on as is (Bazel verifies it).
    assert toolkit.therock_flags(str(tarball), "cd" * 32)[0][1] == f"--repo_env=THEROCK_SHA256={'cd' * 32}"


def test_therock_nonsense_path(tmp_path):
    with pytest.raises(inputs.InputError) as error:
        toolkit.therock_flags(str(tmp_path / "nope"), None)
    assert "neither a URL, a tarball nor a directory" in str(error.value)
    assert str(tmp_path / "nope") in str(error.value)


def test_therock_http_url_needs_a_sha256_too():
    with pytest.raises(inputs.InputError) as error:
        toolkit.therock_flags("http://127.0.0.1:8000/therock-dist-linux-gfx94X-dcgpu-7.10.0a1.tar.gz", "")
    assert "is a download: add --therock-sha256=HEX" in str(error.value)


def test_therock_file_url_is_a_local_tarball(tmp_path):
    tarball = tmp_path / "my dl" / "therock-dist-linux-gfx950-dcgpu-7.10.0a20251120.tar.gz"
    tarball.parent.mkdir()
    tarball.write_bytes(b"tarball")
    flags, binds = toolkit.therock_flags(tarball.as_uri(), None)  # "my%20dl": quoted
    assert flags == [f"--repo_env=THEROCK_URL=file://{tarball}",
                     f"--repo_env=THEROCK_SHA256={hashlib.sha256(b'tarball').hexdigest()}"]
    assert binds == [str(tarball.parent)]
    assert toolkit.therock_flags(tarball.as_uri(), "cd" * 32)[0][1] == f"--repo_env=THEROCK_SHA256={'cd' * 32}"


def test_therock_file_url_of_a_missing_file(tmp_path):
    missing = tmp_path / "therock-dist-linux-gfx950-dcgpu-7.10.0a20251120.tar.gz"
    with pytest.raises(inputs.InputError) as error:
        toolkit.therock_flags(missing.as_uri(), None)
    assert f"{missing} is not a file on this machine" in str(error.value)
    with pytest.raises(inputs.InputError, match="is not a file on this machine"):
        toolkit.therock_flags("file://otherhost/x.tar.gz", "ab" * 32)


def test_a_symlinked_tarball_keeps_its_name_and_mounts_its_target(tmp_path):
    real = tmp_path / "store" / "blob"
    real.parent.mkdir()
    real.write_bytes(b"x")
    link = tmp_path / "links" / "therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"
    link.parent.mkdir()
    link.symlink_to(real)
    flags, binds = toolkit.therock_flags(str(link), None)
    assert flags[0] == f"--repo_env=THEROCK_URL=file://{link}"  # the family stays readable in the name
    assert binds == [str(link.parent), str(real.parent)]


# --- TheRock family -> amdgpu targets --------------------------------------------------

TARBALL = "https://rocm.nightlies.amd.com/tarball/therock-dist-linux-{}-7.10.0a20251120.tar.gz"


def test_the_wheel_list_and_the_families_are_the_finders():
    """ci_build keeps no list or parser of its own: the finder the repository rule runs answers."""
    assert toolkit.finder.__file__ == str(CHECKOUT / "third_party" / "gpus" / "find_rocm_config.py")
    assert toolkit.finder.DEFAULT_AMDGPU_TARGETS == ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101",
                                                     "gfx1200", "gfx1201")
    source = "".join(p.read_text() for p in (CHECKOUT / "build" / "ci_build_cli").glob("*.py"))
    assert "gfx1030" not in source and "therock-dist-linux" not in source and "rocm_configure.bzl" not in source


@pytest.mark.parametrize("family, targets", [("gfx94X-dcgpu", "gfx942"), ("gfx950-dcgpu", "gfx950"),
                                             ("gfx110X-dgpu", "gfx1100,gfx1101"), ("gfx115X-igpu", "gfx1150,gfx1151,gfx1152,gfx1153")])
def test_a_therock_family_says_its_default_targets(family, targets):
    note = toolkit.therock_targets_note(TARBALL.format(family), None)
    assert note.startswith(f"TheRock family {family}: amdgpu targets {targets} (default: ")
    assert note.endswith("choose others of the family with --amdgpu-targets=LIST")


def test_explicit_targets_are_checked_against_the_family_only():
    note = toolkit.therock_targets_note(TARBALL.format("gfx950-dcgpu"), "gfx950")
    assert note == "TheRock family gfx950-dcgpu (device code for gfx950): amdgpu targets gfx950 (--amdgpu-targets)"
    assert "gfx9-4-generic" in toolkit.therock_targets_note(TARBALL.format("gfx94X-dcgpu"), "gfx942,gfx9-4-generic")
    with pytest.raises(inputs.InputError) as error:
        toolkit.therock_targets_note(TARBALL.format("gfx950-dcgpu"), "gfx942,gfx950")
    message = str(error.value)
    assert message.startswith("--amdgpu-targets=gfx942,gfx950 asks for gfx942, but the TheRock tarball "
                              "therock-dist-linux-gfx950-dcgpu-7.10.0a20251120.tar.gz is of family gfx950-dcgpu, "
                              "with device code for gfx950 only")
    assert "use --amdgpu-targets=gfx950" in message and "e.g. gfx94X-dcgpu" in message


def test_no_family_in_the_name_says_nothing(tmp_path):
    assert toolkit.therock_targets_note(str(tmp_path), "gfx942") is None
    assert toolkit.therock_targets_note("https://example.com/rocm.tar.gz", None) is None


# --- check_sources --------------------------------------------------------------------


def test_unreachable_pins_are_named_with_the_way_out(monkeypatch, capsys):
    requested = []

    def offline(request, timeout=None):
        requested.append((request.get_method(), request.full_url))
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(sources.urllib.request, "urlopen", offline)
    with pytest.raises(inputs.InputError) as error:
        sources.check_pins_reachable(args())
    err = str(error.value)
    xla_url = XLA_PIN["urls"][0].replace("{commit}", XLA_PIN["commit"])
    assert requested == [("HEAD", xla_url), ("HEAD", JAX_PIN["urls"][0])]
    assert f"xla ({xla_url})" in err and f"jax ({JAX_PIN['urls'][0]})" in err
    assert "cannot be downloaded" in err
    assert "--xla-source-dir=DIR" in err and "--jax-source-dir=PATH" in err and "--sources=examples" in err


def test_only_the_pins_not_overridden_are_checked(tmp_path, monkeypatch, capsys):
    urls = []

    def offline(request, timeout=None):
        urls.append(request.full_url)
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(sources.urllib.request, "urlopen", offline)
    with pytest.raises(inputs.InputError) as error:
        sources.check_pins_reachable(args(f"--xla-source-dir={tmp_path}"))
    assert urls == [JAX_PIN["urls"][0]]
    err = str(error.value)
    assert "jax (" in err and "xla (" not in err


def test_reachable_pins_pass(monkeypatch):
    class Response:
        closed = False

        def close(self):
            Response.closed = True

    monkeypatch.setattr(sources.urllib.request, "urlopen", lambda request, timeout=None: Response())
    sources.check_pins_reachable(args())
    assert Response.closed


def test_examples_and_a_local_jax_never_touch_the_network(monkeypatch, tmp_path):
    def no_network(*a, **k):
        pytest.fail("urlopen called with --sources=examples and --jax-source-dir")

    monkeypatch.setattr(sources.urllib.request, "urlopen", no_network)
    checked = args("--sources=examples", f"--jax-source-dir={jax_tree(tmp_path)}")
    sources.check_local_sources(checked)
    sources.check_pins_reachable(checked)


def test_examples_alone_never_touches_the_network(monkeypatch):
    """--sources=examples: XLA and JAX both come from examples/, so no pin is checked."""
    monkeypatch.setattr(sources.urllib.request, "urlopen", lambda *a, **k: pytest.fail("urlopen called"))
    sources.check_local_sources(args("--sources=examples"))
    sources.check_pins_reachable(args("--sources=examples"))


def test_a_source_dir_that_is_missing_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sources.urllib.request, "urlopen", lambda *a, **k: pytest.fail("urlopen called"))
    with pytest.raises(inputs.InputError, match=re.escape(f"--jax-source-dir={tmp_path / 'nope'} does not exist "
                                                          "(relative paths are taken from")):
        sources.check_local_sources(args(f"--jax-source-dir={tmp_path / 'nope'}"))
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(inputs.InputError, match=re.escape(f"--jax-source-dir={tmp_path / 'notes.txt'} is neither a JAX "
                                                          "checkout (a directory) nor an archive")):
        sources.check_local_sources(args(f"--jax-source-dir={tmp_path / 'notes.txt'}"))
    with pytest.raises(inputs.InputError, match=re.escape(f"the xla source tree {tmp_path / 'notes.txt'} is not a directory")):
        sources.check_local_sources(args(f"--xla-source-dir={tmp_path / 'notes.txt'}"))


# --- built_wheels / collect_wheels / summary_table ------------------------------------


@pytest.fixture
def bazel_bin(tmp_path, monkeypatch) -> Path:
    checkout = tmp_path / "checkout"
    for rel in ("jax_rocm_pjrt_wheel/a.whl", "jax_rocm_plugin_wheel_cp311/b.whl",
                "jax_rocm_plugin_wheel_cp314/c.whl", "jax_rocm_plugin_wheel_cp311/notes.txt"):
        path = checkout / "bazel-bin" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rel.encode() * 100)
    monkeypatch.setattr(wheels, "CHECKOUT", checkout)
    return checkout / "bazel-bin"


def test_built_wheels_are_those_of_the_requested_pythons(bazel_bin):
    py311 = pythons.Interpreter("3.11", "/usr/bin/python3.11", None)
    py314 = pythons.Interpreter("3.14", "/usr/bin/python3.14", None)
    assert wheels.built_wheels([py311]) == [bazel_bin / "jax_rocm_pjrt_wheel/a.whl",
                                              bazel_bin / "jax_rocm_plugin_wheel_cp311/b.whl"]
    assert wheels.built_wheels([py311, py314])[-1] == bazel_bin / "jax_rocm_plugin_wheel_cp314/c.whl"
    assert wheels.built_wheels([]) == [bazel_bin / "jax_rocm_pjrt_wheel/a.whl"]


def test_collect_wheels_copies_and_replaces(bazel_bin, tmp_path):
    built = wheels.built_wheels([pythons.Interpreter("3.11", "/usr/bin/python3.11", None)])
    out = tmp_path / "out" / "dist"
    out.mkdir(parents=True)
    (out / "a.whl").write_bytes(b"stale")
    copied = wheels.collect_wheels(built, out)
    assert [c.path for c in copied] == [out / "a.whl", out / "b.whl"]
    assert sorted(p.name for p in out.iterdir()) == ["a.whl", "b.whl"]
    for source, target in zip(built, copied):
        assert target.path.read_bytes() == source.read_bytes()
        assert (target.size, target.sha256) == (source.stat().st_size, hashlib.sha256(source.read_bytes()).hexdigest())
    assert wheels.collect_wheels(built, tmp_path / "new" / "dir")[0].path.is_file()


def test_a_full_disk_leaves_no_partial_wheel_and_no_folder_of_its_own(bazel_bin, tmp_path, monkeypatch):
    built = wheels.built_wheels([pythons.Interpreter("3.11", "/usr/bin/python3.11", None)])
    real_copy = shutil.copyfile

    def copy_until_full(source, target):
        if Path(source).name == "b.whl":
            Path(target).write_bytes(b"half")
            raise OSError(28, "No space left on device", str(target))
        return real_copy(source, target)

    monkeypatch.setattr(wheels.shutil, "copyfile", copy_until_full)
    new = tmp_path / "made" / "dist"
    with pytest.raises(OSError, match="No space left"):
        wheels.collect_wheels(built, new)
    assert not (tmp_path / "made").exists(), "the folders made for the wheels are removed again"
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "a.whl").write_bytes(b"the previous run's")
    with pytest.raises(OSError):
        wheels.collect_wheels(built, kept)
    assert [(p.name, p.read_bytes()) for p in kept.iterdir()] == [("a.whl", b"the previous run's")]


def test_summary_table_has_name_size_and_sha256(tmp_path):
    built = []
    for name, size in (("jax_rocm7_pjrt-0.11.0-py3-none-manylinux_2_38_x86_64.whl", 2_500_000),
                       ("jax_rocm7_plugin-0.11.0-cp311-cp311-manylinux_2_38_x86_64.whl", 10)):
        path = tmp_path / name
        path.write_bytes(name.encode()[:1] * size)
        built.append(path)
    table = wheels.summary_table(wheels.collect_wheels(built, tmp_path / "dist")).splitlines()
    assert table[0].split() == ["wheel", "size", "sha256"]
    assert set(table[1].replace(" ", "")) == {"-"}
    assert len(table) == 2 + len(built)
    for wheel, row in zip(built, table[2:]):
        assert row.split()[0] == wheel.name
        assert row.split()[-1] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert "2.5 MB" in table[2]


# --- main: dist_wheels --dry-run ------------------------------------------------------


def test_dist_wheels_dry_run_prints_the_bazel_build(recorded, capsys):
    assert cli.main(DRY_RUN) == 0
    assert all(dry_run for _, dry_run in recorded)
    cmd = bazel_build(recorded)
    assert cmd[-1] == "//:jax_rocm_wheels"
    for flag in ("--config=rocm", f"--override_repository=xla={CHECKOUT / 'examples' / 'xla'}",
                 f"--override_repository=jax={CHECKOUT}",
                 "--//wheel:kind=nightly", "--//wheel:date=20261123",
                 "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.14"):
        assert flag in cmd
    assert "--config=rocm_rbe" not in cmd and "--bind" not in cmd
    assert cmd[:len(sandbox.SANDBOX) + 2] == sandbox.SANDBOX + ["run", "--"]
    # The sandbox is provisioned first, the build comes last.
    assert recorded[0][0] == sandbox.SANDBOX + ["ensure", "--rocm=full"]
    assert recorded[-1][0] == cmd
    assert "--//wheel:platform_tag" in capsys.readouterr().err


@pytest.mark.parametrize(("words", "config"), [
    (["--rbe"], "rocm_rbe"),
    (["--rbe=remote"], "rocm_rbe"),
    (["--rbe=dynamic"], "rocm_rbe_dynamic"),
    (["--rbe", "dynamic"], "rocm_rbe_dynamic"),
])
def test_dist_wheels_rbe(recorded, words, config):
    assert cli.main(DRY_RUN + words) == 0
    cmd = bazel_build(recorded)
    assert f"--config={config}" in cmd and "--config=rocm" in cmd
    assert cmd.index(f"--config={config}") < cmd.index("//:jax_rocm_wheels")
    assert [w for w in cmd if w.startswith("--config=rocm_rbe")] == [f"--config={config}"]


@pytest.mark.parametrize(("argv", "mode"), [
    (["--rbe", "dist_wheels"], "remote"),  # a bare --rbe does not swallow the subcommand
    (["dist_wheels", "--rbe"], "remote"),
    (["--rbe=dynamic", "dist_wheels"], "dynamic"),
    (["--rbe", "dynamic", "dist_wheels"], "dynamic"),
    (["dist_wheels", "--rbe", "--dry-run"], "remote"),
    (["dist_wheels"], "off"),
])
def test_rbe_modes_parse_anywhere(argv, mode):
    assert cli.parse_args(argv).rbe == mode


def test_rbe_modes_name_existing_configs():
    bazelrc = (CHECKOUT / "rocm" / "rocm.bazelrc").read_text()
    for config in filter(None, options.RBE_CONFIGS.values()):
        assert re.search(rf"^build:{config} ", bazelrc, re.MULTILINE), config


def test_an_unknown_rbe_mode_names_the_valid_ones(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.parse_args(["dist_wheels", "--rbe=cloud"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err  # argparse's wording; quoting of the choices varies between Pythons
    assert "argument --rbe: invalid choice: 'cloud' (choose from " in err and "remote" in err and "dynamic" in err


def test_dist_wheels_binds_host_pythons_and_therock(recorded, monkeypatch, tmp_path):
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: [
        pythons.Interpreter("3.11", "/opt/py/bin/python3.11", "/opt/py"),
        pythons.Interpreter("3.14", "/usr/bin/python3.14", None)])
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    rocm = tmp_path / "therock"
    rocm.mkdir()
    assert cli.main(DRY_RUN + ["--python-versions=3.14,3.11", f"--therock-path={rocm}", "--compiler=clang"]) == 0
    cmd = bazel_build(recorded)
    head = cmd[:cmd.index("--")]
    assert head[len(sandbox.SANDBOX):] == ["run", "--bind", "/opt/py", "--bind", str(rocm.resolve())]
    assert "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.14,/opt/py/bin/python3.11" in cmd
    assert f"--repo_env=ROCM_PATH={rocm.resolve()}" in cmd
    assert "--repo_env=CC=/usr/lib/llvm-22/bin/clang" in cmd
    assert "--action_env=SOURCE_DATE_EPOCH=1700000000" in cmd


def test_dist_wheels_rocms_docs_command_with_a_local_tarball(recorded, tmp_path, capsys):
    tarball = therock_tarball(tmp_path / "therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz")
    argv = [w.replace(w.split("=", 1)[-1], str(tarball)) if w.startswith("--therock-path=") else w for w in ROCM_DOCS_COMMAND]
    argv = [w.replace("3.12", "3.14") for w in argv]
    assert cli.main(argv[:-1] + ["--sources=examples", "--dry-run", "dist_wheels"]) == 0
    cmd = bazel_build(recorded)
    assert f"--repo_env=THEROCK_URL=file://{tarball}" in cmd
    assert f"--repo_env=THEROCK_SHA256={hashlib.sha256(tarball.read_bytes()).hexdigest()}" in cmd
    assert "--repo_env=CC=/usr/lib/llvm-22/bin/clang" in cmd and "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.14" in cmd
    assert cmd[cmd.index("--bind") + 1] == str(tmp_path)
    assert "TheRock family gfx94X-dcgpu: amdgpu targets gfx942 (default:" in capsys.readouterr().err


def test_dist_wheels_targets_outside_the_family_fail_before_the_sandbox(recorded, capsys):
    assert cli.main(["--amdgpu-targets=gfx942", "--therock-path=" + TARBALL.format("gfx950-dcgpu"),
                     "--therock-sha256=" + "ab" * 32, "--sources=examples", "--dry-run", "dist_wheels"]) == 2
    assert one_error_line(capsys).startswith("ci_build: --amdgpu-targets=gfx942 asks for gfx942, but the TheRock tarball ")
    assert recorded == []


def test_dist_wheels_missing_python_fails_before_bazel(recorded, capsys):
    assert cli.main(DRY_RUN + ["--python-versions=3.11"]) == 2
    assert "3.14 (/usr/bin/python3.14)" in capsys.readouterr().err
    assert not [cmd for cmd, _ in recorded if "bazel" in cmd]


def test_dist_wheels_by_default_names_each_published_python_it_leaves_out(recorded, capsys):
    assert cli.main(DRY_RUN) == 0
    err = capsys.readouterr().err
    assert [v for v in pythons.PUBLISHED if f"Python {v} left out" in err] == ["3.11", "3.12", "3.13"]
    assert "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.14" in bazel_build(recorded)


# --- host mode (--host): the user's Bazel, ROCm and Pythons, no sandbox -------------------


def fake_executable(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("#!/bin/sh\n")
    (folder / name).chmod(0o755)
    return folder / name


def test_the_users_bazel_is_BAZEL_then_bazelisk_then_bazel(tmp_path):
    bazel = fake_executable(tmp_path / "a", "bazel")
    path = f"{tmp_path / 'a'}:{tmp_path / 'b'}"
    assert sandbox.find_host_bazel({"PATH": path}) == str(bazel)
    bazelisk = fake_executable(tmp_path / "b", "bazelisk")
    assert sandbox.find_host_bazel({"PATH": path}) == str(bazelisk)  # bazelisk first, wherever it is on PATH
    mine = fake_executable(tmp_path / "c", "my-bazel")
    assert sandbox.find_host_bazel({"PATH": path, "BAZEL": str(mine)}) == str(mine)
    assert sandbox.find_host_bazel({"PATH": f"{tmp_path / 'c'}", "BAZEL": "my-bazel"}) == str(mine)


@pytest.mark.parametrize("env, says", [
    ({"PATH": "/nonexistent"}, "host mode (--host) runs your own Bazel, and none is on PATH: install bazelisk"),
    ({"PATH": "/nonexistent", "BAZEL": "/opt/no-bazel"}, "BAZEL=/opt/no-bazel (from the environment) is not an executable"),
])
def test_no_bazel_for_host_mode_is_one_line_naming_what_to_install_or_set(env, says):
    with pytest.raises(inputs.InputError, match=re.escape(says)):
        sandbox.find_host_bazel(env)


def test_this_checkouts_tools_bazel_on_path_is_not_the_users_bazel(tmp_path):
    assert (CHECKOUT / "tools" / "bazel").exists()
    with pytest.raises(inputs.InputError, match="none is on PATH"):
        sandbox.find_host_bazel({"PATH": str(CHECKOUT / "tools")})


@pytest.mark.parametrize("how", [["--host"], "JAX_ROCM_HOST=1"])  # --host anywhere: test_every_option_is_accepted...
def test_host_mode_runs_the_users_bazel_with_the_same_flags_and_no_sandbox(recorded, monkeypatch, tmp_path, how):
    assert cli.main(DRY_RUN + ["--python-versions=3.14"]) == 0  # sandboxed, for comparison
    assert recorded[0][0] == sandbox.SANDBOX + ["ensure", "--rocm=full"]
    sandboxed = bazel_build(recorded)
    recorded.clear()
    bazelisk = fake_executable(tmp_path / "bin", "bazelisk")
    monkeypatch.setenv("PATH", f"{bazelisk.parent}:{os.environ['PATH']}")
    monkeypatch.delenv("BAZEL", raising=False)
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: pytest.fail("the sandbox was asked for its Pythons"))
    monkeypatch.setattr(pythons, "find_host_interpreters", lambda: [pythons.Interpreter("3.12", "/usr/bin/python3.12", None)])
    if isinstance(how, str):
        monkeypatch.setenv(*how.split("="))
        how = []
    assert cli.main(DRY_RUN + ["--python-versions=3.12", *how]) == 0
    assert not [cmd for cmd, _ in recorded if str(sandbox.SANDBOX[1]) in cmd]  # no tools/sandbox.py at all
    assert recorded[0][0] == sandbox.PREFETCH + ["--pypi-only", f"--distdir={sandbox.HOST_DISTDIR}"]
    cmd = bazel_build(recorded)
    launcher = ["env", f"BAZEL_REAL={bazelisk}", sys.executable, str(CHECKOUT / "tools" / "bazel")]
    assert cmd[:len(launcher)] == launcher
    # The sandboxed build's flags, but for the Python and the distdir the prefetch filled.
    assert f"--distdir={sandbox.HOST_DISTDIR}" in cmd
    assert [w for w in cmd[len(launcher):] if w != f"--distdir={sandbox.HOST_DISTDIR}"] == [
        w.replace("python3.14", "python3.12") for w in sandboxed[sandboxed.index("bazel") + 1:]]


@pytest.fixture
def host_recorded(recorded, monkeypatch, tmp_path):
    """recorded, in host mode: a fake bazelisk on PATH, this machine's Pythons."""
    bazelisk = fake_executable(tmp_path / "bin", "bazelisk")
    monkeypatch.setenv("PATH", f"{bazelisk.parent}:{os.environ['PATH']}")
    monkeypatch.delenv("BAZEL", raising=False)
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: pytest.fail("the sandbox was asked for its Pythons"))
    monkeypatch.setattr(pythons, "find_host_interpreters",
                        lambda: [pythons.Interpreter("3.12", "/usr/bin/python3.12", None)])
    return recorded


@pytest.mark.parametrize("sandbox_clang, on_path, expected", [
    (True, "/usr/bin/clang", dist_wheels.SANDBOX_CLANG),  # the sandboxed build's flag where it can be
    (False, "/usr/bin/clang", "/usr/bin/clang"),
    (False, None, None),
])
def test_host_modes_clang_is_the_sandboxes_path_if_there_else_path(monkeypatch, sandbox_clang, on_path, expected):
    monkeypatch.setattr(dist_wheels.Path, "exists", lambda p: sandbox_clang if str(p) == dist_wheels.SANDBOX_CLANG else False)
    monkeypatch.setattr(dist_wheels.shutil, "which", lambda name: on_path if name == "clang" else None)
    host = args("--host", "--compiler=clang")
    assert dist_wheels.clang(args("--compiler=clang")) == dist_wheels.SANDBOX_CLANG
    if expected:
        assert dist_wheels.clang(host) == expected
    else:
        with pytest.raises(inputs.InputError, match="--compiler=clang in host mode: no clang on PATH"):
            dist_wheels.clang(host)


def test_host_mode_says_how_to_add_a_python_on_path(host_recorded, capsys):
    assert cli.main(DRY_RUN + ["--host"]) == 0
    err = capsys.readouterr().err
    assert "Python 3.11 left out: no interpreter with headers (found: 3.12); install python3.11 and its headers " \
           "(python3.11-dev, or pyenv, python.org) so that python3.11 is on PATH" in err
    assert "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.12" in bazel_build(host_recorded)


@pytest.mark.parametrize("argv, says", [
    (["--host", "--mode=full", "dist_wheels"], "--mode=full runs upstream's graph with the sandbox's Debian Bazel"),
    (["dist_wheels"], "JAX_ROCM_HOST=yes (from the environment) is neither 1 (host mode"),
])
def test_host_mode_input_errors_are_one_line_exit_2(recorded, monkeypatch, capsys, argv, says):
    if "--host" not in argv:
        monkeypatch.setenv(sandbox.HOST_ENV, "yes")
    assert cli.main(["--sources=examples", "--dry-run", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err and recorded == []


def test_host_mode_without_a_bazel_fails_in_one_line_before_bazel(host_recorded, monkeypatch, capsys):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert cli.main(DRY_RUN + ["--host"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("ci_build: host mode (--host) runs your own Bazel, and none is on PATH")
    assert not [cmd for cmd, _ in host_recorded if "build" in cmd]


def test_host_mode_documents_itself():
    doc = (CHECKOUT / "docs" / "host-mode.md").read_text()
    for word in ("--host", "JAX_ROCM_HOST=1", "BAZEL", "bazelisk", "offline.bazelrc", "--distdir"):
        assert word in doc, word


# --- inputs that contradict each other fail before anything runs ----------------------


@pytest.fixture
def nothing_runs(recorded, monkeypatch):
    """recorded, and neither the interpreters' probe nor the pins' network check may run."""
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: pytest.fail("the sandbox was asked for its Pythons"))
    return recorded


def test_two_toolkits_fail_before_the_sources_are_checked(nothing_runs, monkeypatch, tmp_path, capsys):
    """Not dry, pinned sources: the conflict is said before the pins' network check (urlopen fails the test)."""
    monkeypatch.setattr(sandbox, "CACHE", tmp_path)
    assert cli.main(["--rocm-path=/usr", "dist_wheels", f"--therock-path={tmp_path}"]) == 2
    assert one_error_line(capsys) == f"ci_build: --rocm-path=/usr and --therock-path={tmp_path} name two toolkits; give one"
    assert nothing_runs == []


@pytest.mark.parametrize("command", [["native"], ["preflight", "--xla-source-dir=examples/xla"], ["dist_wheels"]])
def test_a_toolkit_that_is_not_there_fails_before_anything_runs(nothing_runs, monkeypatch, tmp_path, command, capsys):
    monkeypatch.setattr(sandbox, "CACHE", tmp_path)
    assert cli.main(["--rocm-path=/nonexistent-rocm", *command]) == 2
    assert one_error_line(capsys).startswith(
        "ci_build: --rocm-path=/nonexistent-rocm: /nonexistent-rocm is not a directory on this machine")
    assert nothing_runs == []


@pytest.mark.parametrize("therock", [None, "DIR"])
def test_a_therock_sha256_with_no_tarball_to_check_fails(nothing_runs, therock, tmp_path, capsys):
    argv = ["--sources=examples", "--dry-run", "dist_wheels", "--therock-sha256=" + "ab" * 32]
    if therock:
        argv.append(f"--therock-path={tmp_path}")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"ci_build: --therock-sha256={'ab' * 32} checks a TheRock tarball, but ")
    assert (f"--therock-path={tmp_path} is an extracted toolkit" if therock else "no --therock-path names one") in err
    assert "drop --therock-sha256" in err and nothing_runs == []


@pytest.mark.parametrize("words", [[], ["--dry-run"]])
def test_a_rocm_version_the_tarballs_name_contradicts_fails_before_the_sandbox(nothing_runs, words, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(sandbox, "CACHE", tmp_path)  # the lock of a run that is not dry
    url = TARBALL.format("gfx94X-dcgpu")
    assert cli.main(["--sources=examples", *words, "dist_wheels", f"--therock-path={url}", "--therock-sha256=" + "ab" * 32,
                     "--rocm-version=7.2.4"]) == 2
    assert capsys.readouterr().err == (
        "ci_build: --rocm-version=7.2.4, but the TheRock tarball therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz, "
        "by its name, is ROCm 7.10.0a20251120; point the build at that release with --rocm-path or --therock-path, or drop "
        "--rocm-version\n")
    assert nothing_runs == []


def test_full_mode_with_two_pythons_fails_before_the_sandbox(nothing_runs, capsys):
    assert cli.main(["--mode=full", "--sources=examples", "--dry-run", "dist_wheels", "--python-versions=3.11,3.14"]) == 2
    assert capsys.readouterr().err == ("ci_build: --mode=full and --python-versions=3.11,3.14: full mode builds for one "
                                       "Python per run (XLA's hermetic Python), not 3.11, 3.14; pass --python-versions=3.X\n")
    assert nothing_runs == []


def test_a_tarball_whose_name_says_no_release_is_checked_by_its_manifest_first(recorded, capsys, tmp_path):
    tarball = therock_tarball(tmp_path / "rocm-nightly.tar.gz")
    assert cli.main(DRY_RUN + [f"--therock-path={tarball}", "--rocm-version=7.10.0"]) == 0
    assert "# first: the same build with --nobuild (the repository rule fetches the tarball), then --rocm-version=7.10.0 " \
           "against its manifest (rocm_config.json)" in capsys.readouterr().err


@pytest.fixture
def fetched(recorded, monkeypatch, tmp_path):
    """A run that is not dry, up to the compile: the repository rule "ran" and wrote rocm_config.json
    (release 7.10.0a20251120) into a fake output base; Bazel wrote no wheel."""
    monkeypatch.setattr(sandbox, "CACHE", tmp_path)
    output_base = tmp_path / "output_base"
    config = output_base / "external" / dist_wheels.ROCM_REPOSITORY["kernels"] / "rocm_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"rocm_version": "7.10.0a20251120", "therock": {"rocm_package_version": "7.10.0a20251120"}}))
    infos = []
    monkeypatch.setattr(sandbox, "spawn",
                        lambda cmd, **kw: infos.append(cmd) or subprocess.CompletedProcess(cmd, 0, f"{output_base}\n", ""))
    monkeypatch.setattr(wheels, "built_wheels", lambda interpreters, workspace=None: [])
    tarball = therock_tarball(tmp_path / "rocm-nightly.tar.gz")  # its name says no release
    argv = [a for a in DRY_RUN if a != "--dry-run"] + [f"--therock-path={tarball}", f"--output-dir={tmp_path / 'dist'}"]
    return argv, infos


def test_a_rocm_version_the_manifest_contradicts_fails_before_the_compile(fetched, recorded, capsys):
    argv, infos = fetched
    assert cli.main(argv + ["--rocm-version=7.2.4"]) == 2
    builds = [cmd for cmd, _ in recorded if "//:jax_rocm_wheels" in cmd]
    assert len(builds) == 1 and "--nobuild" in builds[0]  # the compile never started
    assert infos and infos[0][-1] == "output_base" and "info" in infos[0] and "--config=rocm" in infos[0]
    err = capsys.readouterr().err
    assert ("\nci_build: --rocm-version=7.2.4, but the TheRock tarball rocm-nightly.tar.gz, by its manifest, is "
            "ROCm 7.10.0a20251120, 7.10.0a20251120; point the build at that release") in err
    assert "building the wheels with Bazel" not in err


def test_a_rocm_version_the_manifest_agrees_with_goes_on_to_the_compile(fetched, recorded, capsys):
    argv, infos = fetched
    assert cli.main(argv + ["--rocm-version=7.10.0"]) == 1  # no wheel: fetched's Bazel wrote none
    builds = [cmd for cmd, _ in recorded if "//:jax_rocm_wheels" in cmd]
    assert len(builds) == 2 and "--nobuild" in builds[0] and "--nobuild" not in builds[1]
    assert [w for w in builds[0] if w != "--nobuild"] == builds[1]  # the same flags: the build reuses the analysis
    err = capsys.readouterr().err
    assert "fetching the TheRock tarball rocm-nightly.tar.gz to check --rocm-version=7.10.0 against its manifest" in err
    assert "Bazel succeeded but wrote no wheel" in err


def test_each_built_wheel_is_read_once(recorded, monkeypatch, tmp_path, capsys):
    """build_info.json of the built wheels (stand-ins, the toolkit line), then the tagged wheels
    once each, by their copy into --output-dir (whose sha256 the summary prints)."""
    bazel_bin = tmp_path / "bazel-bin"
    bazel_bin.mkdir()
    built = []
    for name in ("jax_rocm7_pjrt-0.10.2-py3-none-linux_x86_64.whl", "jax_rocm7_plugin-0.10.2-cp314-cp314-linux_x86_64.whl"):
        with zipfile.ZipFile(bazel_bin / name, "w") as z:
            z.writestr("x/build_info.json", json.dumps({"rocm_version": "7.2.4", "artifacts": {"a.so": {"origin": "examples"}}}))
        built.append(bazel_bin / name)
    opened = []
    real_zipfile, real_copyfile = zipfile.ZipFile, shutil.copyfile
    monkeypatch.setattr(zipfile, "ZipFile", lambda path, *a, **k: opened.append(Path(path)) or real_zipfile(path, *a, **k))
    monkeypatch.setattr(shutil, "copyfile", lambda src, dst: opened.append(Path(src)) or real_copyfile(src, dst))
    monkeypatch.setattr(sandbox, "CACHE", tmp_path)
    monkeypatch.setattr(wheels, "built_wheels", lambda interpreters, workspace=None: built)
    monkeypatch.setattr(wheels, "audit_wheels", lambda ws, policy: {w.name: {"ok": True, "platform_tag": "x"} for w in ws})
    argv = [a for a in DRY_RUN if a != "--dry-run"] + ["--allow-stand-ins", f"--output-dir={tmp_path / 'dist'}"]
    assert cli.main(argv) == 0
    # Once by read_wheel after the build, once by the copy after the tagging build (the same
    # paths here: Bazel's tagged wheels replace the untagged ones in bazel-bin).
    assert sorted(opened) == sorted(built * 2)
    out = capsys.readouterr()
    assert "built against ROCm 7.2.4" in out.err and hashlib.sha256(built[0].read_bytes()).hexdigest() in out.out


# --- docs and CLI in sync -------------------------------------------------------------


def readme_wheel_flags() -> list[str]:
    """Each `--flag` in the first column of README's Wheels flags table."""
    section = README.read_text().split("## Wheels", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert rows and "flag" in rows[0], "README's Wheels section has no flags table"
    flags = []
    for row in rows[2:]:  # past the header and the |---| line
        first = re.split(r"(?<!\\)\|", row)[1]
        for code in re.findall(r"`([^`]*)`", first):
            flags += re.findall(r"--[a-z0-9][a-z0-9-]*", code)
    return flags


def test_readme_flags_table_is_parsed():
    flags = readme_wheel_flags()
    assert {"--sources", "--wheel-kind", "--therock-sha256", "--rbe", "--dry-run"} <= set(flags)
    assert len(flags) >= 15


def test_every_flag_of_the_readme_is_in_the_help(capsys):
    parser = cli.parser()
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["dist_wheels", "--help"])
    assert exit_.value.code == 0
    dist_wheels_help = capsys.readouterr().out
    assert "--wheel-kind" in dist_wheels_help
    # Global flags (--sources, --dry-run ...) come before the command: in the top-level help.
    helps = dist_wheels_help + parser.format_help()
    missing = [flag for flag in readme_wheel_flags() if not re.search(re.escape(flag) + r"(?![a-z0-9-])", helps)]
    assert not missing, f"README's Wheels table lists flags the CLI does not have: {missing}"


def test_source_trees_outside_the_checkout_are_mounted_into_the_sandbox(tmp_path):
    outside = Path("/var/tmp") / f"ci-build-test-{os.getpid()}"
    (outside / "xla").mkdir(parents=True, exist_ok=True)
    try:
        command = sandbox.sandbox_run(args(f"--xla-source-dir={outside / 'xla'}", f"--jax-source-dir={tmp_path}"),
                                       ["/opt/python"])
    finally:
        shutil.rmtree(outside)
    binds = [command[i + 1] for i, a in enumerate(command) if a == "--bind"]
    # Every tree outside the checkout, /tmp's too: sandbox.py leaves out what it mounts anyway.
    assert binds == [str(outside / "xla"), str(tmp_path), "/opt/python"]
    assert command[-1] == "--"
    assert sandbox.sandbox_run(args("--sources=examples")) == sandbox.SANDBOX + ["run", "--"]


def test_stand_in_artifacts_are_read_from_build_info(tmp_path):
    wheel = tmp_path / "w.whl"
    info = {"artifacts": {"_prng.so": {"origin": "jax"}, "_triton.so": {"origin": "examples"},
                          "rocm_plugin_extension.so": {"origin": "examples"}}}
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("jax_rocm7_plugin/build_info.json", json.dumps(info))
    assert wheels.read_wheel(wheel).stand_ins == ["_triton.so", "rocm_plugin_extension.so"]
    assert wheels.read_wheel(wheel).build_info == info
    with zipfile.ZipFile(tmp_path / "bare.whl", "w") as z:
        z.writestr("jax_rocm7_plugin/__init__.py", "")
    assert wheels.read_wheel(tmp_path / "bare.whl").stand_ins == []


# ---- the user's ROCm: ROCM_PATH from the environment, --rocm-path, --therock-path ----------


@pytest.fixture
def toolkit_dir(tmp_path) -> Path:
    """A toolkit folder outside the checkout, /tmp and ../shared, and a link to it, as
    /opt/rocm -> /opt/rocm-7.2.4 (the sandbox mounts neither by itself)."""
    real = Path("/var/tmp") / f"ci-build-rocm-{os.getpid()}" / "rocm-7.2.4"
    real.mkdir(parents=True, exist_ok=True)
    link = real.parent / "rocm"
    if not link.is_symlink():
        link.symlink_to(real.name)
    yield link
    shutil.rmtree(real.parent)


def test_ambient_rocm_path_that_exists_is_used_and_mounted_at_the_same_path(toolkit_dir):
    source = toolkit.rocm_source(None, None, None, str(toolkit_dir))
    assert source.flags == (f"--repo_env=ROCM_PATH={toolkit_dir}",)
    assert source.binds == (str(toolkit_dir), str(toolkit_dir.resolve()))  # the link's path inside, and where it leads
    assert source.note.startswith(f"ci_build: using ROCm from ROCM_PATH={toolkit_dir} (the environment; mounted")
    assert "\n" not in source.note


def test_ambient_rocm_path_that_does_not_exist_fails_naming_the_variable_and_how_to_unset_it(tmp_path):
    with pytest.raises(inputs.InputError) as e:
        toolkit.rocm_source(None, None, None, str(tmp_path / "opt/rocm"))
    message = str(e.value)
    assert message.startswith(f"ROCM_PATH={tmp_path / 'opt/rocm'} (from the environment) does not exist")
    assert "unset ROCM_PATH" in message and "env -u ROCM_PATH" in message and "\n" not in message


def test_explicit_rocm_path_wins_over_the_environment_with_a_note(toolkit_dir, tmp_path):
    source = toolkit.rocm_source(str(toolkit_dir.resolve()), None, None, str(tmp_path / "does-not-exist"))
    assert source.flags == (f"--repo_env=ROCM_PATH={toolkit_dir.resolve()}",)
    assert source.note == (f"ci_build: using ROCm from --rocm-path={toolkit_dir.resolve()} "
                           f"(over ROCM_PATH={tmp_path / 'does-not-exist'} from the environment)")


def test_therock_path_wins_over_the_environment_and_clears_it_for_bazel(tmp_path):
    url = "https://rocm.nightlies.amd.com/tarball/therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"
    source = toolkit.rocm_source(None, url, "ab" * 32, "/opt/rocm")
    assert source.flags == (f"--repo_env=THEROCK_URL={url}", f"--repo_env=THEROCK_SHA256={'ab' * 32}", "--repo_env=ROCM_PATH=")
    assert source.note == f"ci_build: using ROCm from --therock-path={url} (over ROCM_PATH=/opt/rocm from the environment)"
    assert toolkit.rocm_source(None, url, "ab" * 32, None) == toolkit.RocmSource(source.flags[:2], (), None)


def test_rocm_path_anywhere_is_mounted_but_never_the_sandboxs_own_folders(toolkit_dir):
    assert toolkit.rocm_source(str(toolkit_dir), None, None, None).binds == (str(toolkit_dir), str(toolkit_dir.resolve()))
    for own in ("/usr", "/usr/lib/x86_64-linux-gnu"):
        assert toolkit.rocm_source(own, None, None, None) == toolkit.RocmSource((f"--repo_env=ROCM_PATH={own}",), (), None)
    with pytest.raises(inputs.InputError, match="is not a directory on this machine"):
        toolkit.rocm_source(str(toolkit_dir) + "-missing", None, None, None)
    with pytest.raises(inputs.InputError, match="name two toolkits"):
        toolkit.rocm_source(str(toolkit_dir), str(toolkit_dir), None, None)


def test_dist_wheels_with_ambient_rocm_path_mounts_it_and_says_so(recorded, monkeypatch, toolkit_dir, capsys):
    monkeypatch.setenv("ROCM_PATH", str(toolkit_dir))
    assert cli.main(DRY_RUN) == 0
    cmd = bazel_build(recorded)
    head = cmd[:cmd.index("--")]
    assert ["--bind", str(toolkit_dir), "--bind", str(toolkit_dir.resolve())] == head[-4:]
    assert f"--repo_env=ROCM_PATH={toolkit_dir}" in cmd
    assert capsys.readouterr().err.count(f"using ROCm from ROCM_PATH={toolkit_dir}") == 1


def test_dist_wheels_with_a_missing_ambient_rocm_path_fails_before_anything_runs(recorded, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "opt/rocm"))
    assert cli.main(DRY_RUN) == 2
    assert one_error_line(capsys).startswith(f"ci_build: ROCM_PATH={tmp_path / 'opt/rocm'} (from the environment) does not exist")
    assert recorded == []


def test_full_mode_names_this_projects_settings_from_its_root_module():
    flags = ["--config=rocm", "--//rocm:amdgpu_targets=gfx942", "--no//wheel:rocm_version_extra", "--repo_env=X=//y"]
    assert full.in_this_module(flags) == ["--config=rocm", "--@jax_rocm_build//rocm:amdgpu_targets=gfx942",
                                              "--no@jax_rocm_build//wheel:rocm_version_extra", "--repo_env=X=//y"]


def test_full_mode_builds_for_one_python_and_says_so_otherwise():
    py312 = pythons.Interpreter("3.12", "/usr/bin/python3.12", None)
    py314 = pythons.Interpreter("3.14", "/usr/bin/python3.14", None)
    assert full.full_python([py312]) == ["--repo_env=HERMETIC_PYTHON_VERSION=3.12",
                                             "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.12"]
    with pytest.raises(inputs.InputError, match="one Python per run.*3.12, 3.14.*--python-versions=3.X"):
        full.full_python([py312, py314])


# --- a dry run makes nothing ----------------------------------------------------------------

def test_finding_the_pythons_in_a_dry_run_does_not_make_the_sandbox(monkeypatch):
    real_run = subprocess.run
    asked = []

    def run(cmd, **kwargs):
        if cmd[:len(pythons.SANDBOX)] == pythons.SANDBOX:
            asked.append(cmd)
            return subprocess.CompletedProcess(cmd, 125, "", "sandbox: error: run --no-ensure: no sandbox ...")
        return real_run(cmd, **kwargs)

    monkeypatch.setattr(pythons.subprocess, "run", run)
    assert pythons.find_interpreters(make_sandbox=False) is None
    assert asked and asked[0][len(pythons.SANDBOX):len(pythons.SANDBOX) + 2] == ["run", "--no-ensure"]
    asked.clear()
    pythons.find_interpreters()  # a real run may make it
    assert "--no-ensure" not in asked[0]


def test_a_dry_run_before_the_sandbox_exists_names_the_pythons_it_assumes(recorded, monkeypatch, capsys):
    monkeypatch.setattr(pythons, "find_interpreters", lambda make_sandbox: None if not make_sandbox else pytest.fail())
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels", "--python-versions=3.14"]) == 0
    assert "the sandbox is not made yet, so its Pythons are not known" in capsys.readouterr().err
    assert "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.14" in bazel_build(recorded)


def test_the_sandbox_run_no_ensure_fails_where_there_is_none_and_writes_nothing(tmp_path):
    result = subprocess.run([sys.executable, str(CHECKOUT / "tools" / "sandbox.py"), "run", "--no-ensure", "--", "true"],
                            env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)}, capture_output=True, text=True)
    assert result.returncode == 125 and "run --no-ensure: no sandbox under" in result.stderr
    assert not list(tmp_path.iterdir())


def test_a_cache_folder_that_cannot_be_written_is_one_line(tmp_path, monkeypatch):
    inputs.cache_dir(tmp_path / "new" / "jax-rocm-build")  # makeable: fine, and not made by the check
    assert not (tmp_path / "new").exists()
    (tmp_path / "file").write_text("")
    with pytest.raises(inputs.InputError, match=r"cannot be written: .*/file is not a writable folder; set XDG_CACHE_HOME"):
        inputs.cache_dir(tmp_path / "file" / "jax-rocm-build")
    # A read-only folder, as an ordinary user sees it (root's os.access says yes to any folder).
    (tmp_path / "ro").mkdir(mode=0o555)
    monkeypatch.setattr(inputs.os, "access", lambda path, mode: os.stat(path).st_mode & 0o200 != 0)
    with pytest.raises(inputs.InputError, match=r"/ro is not a writable folder"):
        inputs.cache_dir(tmp_path / "ro" / "jax-rocm-build")


def test_the_sandbox_says_in_one_line_that_it_cannot_write_its_cache(tmp_path):
    (tmp_path / "file").write_text("")
    result = subprocess.run([sys.executable, str(CHECKOUT / "tools" / "sandbox.py"), "run", "--", "true"],
                            env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "file")}, capture_output=True, text=True)
    assert result.returncode == 125, result.stderr
    assert result.stderr.count("\n") == 1 and "sandbox: error: cannot write" in result.stderr, result.stderr
    assert "point XDG_CACHE_HOME at a writable folder" in result.stderr


def test_a_checkout_path_with_a_space_is_refused_before_anything_runs(tmp_path):
    inputs.checkout_path(tmp_path / "no-space")
    with pytest.raises(inputs.InputError, match=r"contains whitespace.*clone or move it to a path without spaces"):
        inputs.checkout_path(tmp_path / "with space" / "main")


# --- the toolkit's own answers, before Bazel ----------------------------------------------

@pytest.fixture
def probed(recorded, monkeypatch, tmp_path):
    """A run that is not dry, with the finder's answer for the default toolkit (clang knows three
    targets, release 7.2.4); the lock is this test's, the checkout's stays free."""
    monkeypatch.setattr(sandbox, "CACHE", tmp_path)
    answer = {"rocm_toolkit_path": "/usr", "rocm_version": "7.2.4", "clang_path": "/usr/lib/llvm-22/bin/clang",
              "amdgpu_targets_supported": ["gfx90a", "gfx942", "gfx950"]}
    probes = []
    monkeypatch.setattr(sandbox, "spawn", lambda cmd, **kw: probes.append(cmd) or
                        subprocess.CompletedProcess(cmd, 0, json.dumps(answer), ""))
    monkeypatch.setattr(wheels, "built_wheels", lambda interpreters, workspace=None: [])
    return probes


def test_a_target_the_toolkits_clang_does_not_know_fails_before_bazel(probed, recorded, capsys, tmp_path):
    argv = ["--sources=examples", "dist_wheels", f"--output-dir={tmp_path / 'dist'}"]
    assert cli.main(argv + ["--amdgpu-targets=gfx942,gfx9999"]) == 2
    assert probed and dist_wheels.finder.__file__ in probed[0]
    assert not [cmd for cmd, _ in recorded if "//:jax_rocm_wheels" in cmd], "Bazel never ran"
    said = capsys.readouterr().err.splitlines()[-1]
    assert said == ("ci_build: --amdgpu-targets=gfx942,gfx9999: gfx9999 is not a target the toolkit at /usr's clang "
                    "(/usr/lib/llvm-22/bin/clang) compiles for; it knows: gfx90a gfx942 gfx950")
    # A target it knows, with a feature: the build goes on to Bazel.
    assert cli.main(argv + ["--amdgpu-targets=gfx90a:xnack+,gfx942"]) == 1  # no wheel written by the fake Bazel
    assert [cmd for cmd, _ in recorded if "//:jax_rocm_wheels" in cmd]


def test_unknown_targets_ignore_features():
    finder = dist_wheels.finder
    assert finder.unknown_targets(["gfx90a:xnack+", "gfx942", "gfx9999"], ["gfx90a", "gfx942"]) == ["gfx9999"]
    assert finder.unknown_targets([], ["gfx942"]) == []


def test_a_failed_build_says_how_to_start_bazels_outputs_afresh():
    cmd = sandbox.SANDBOX + ["run", "--bind", "/opt/x", "--", "bazel", "build", "--config=rocm", "//:jax_rocm_wheels"]
    hint = sandbox.damaged_outputs_hint(1, cmd)
    assert hint and f"`{' '.join(sandbox.SANDBOX)} run --bind /opt/x -- bazel clean --expunge`" in hint
    assert sandbox.damaged_outputs_hint(2, cmd) is None  # a command-line error: nothing of the outputs
    assert sandbox.damaged_outputs_hint(1, ["git", "pull"]) is None
