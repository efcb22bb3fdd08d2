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
import shlex
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
from ci_build_cli.request import Request
from tests.conftest import DRY_RUN, SANDBOX, bazel_build, require_jax_tree, sandbox_environment

pytestmark = pytest.mark.unit


JAX_PIN = json.loads((CHECKOUT / "third_party" / "jax" / "pin.json").read_text())
XLA_PIN = json.loads((CHECKOUT / "third_party" / "xla" / "pin.json").read_text())
README = CHECKOUT / "README.md"


def args(*argv: str) -> Request:
    """The Request of `ci_build [flags] dist_wheels [flags]`, from the real parser, with the kind
    of wheel chosen as ci_build chooses it."""
    argv = list(argv)
    split = argv.index("dist_wheels") if "dist_wheels" in argv else len(argv)
    return dist_wheels.choose_wheel_kind(cli.parse_args(argv[:split] + ["dist_wheels"] + argv[split + 1:]))


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


# Values the Request holds in a type of their own.
PARSED_AS = {"amdgpu_targets": lambda v: tuple(v.split(","))}


# Toolkit folders, which must exist: parse_args decides the toolkit (toolkit.rocm_source).
TOOLKIT_SAMPLES = {"rocm_path": str(CHECKOUT / "examples"), "therock_path": str(CHECKOUT / "examples")}


def sample(option) -> tuple[list[str], object]:
    """(argv words giving `option` a value other than its default, the value parsed)."""
    kwargs = option.kwargs
    given = {**CHECKED_SAMPLES, **TOOLKIT_SAMPLES}
    if option.dest in given:
        return [option.flags[0], given[option.dest]], PARSED_AS.get(option.dest, lambda v: v)(given[option.dest])
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


# The mode follows the sources (sources.decide_mode): the pins' real XLA is full mode, which host
# mode and --mode=kernels contradict, so these are tried with the examples/ stand-ins (kernels).
KERNELS_ONLY = {"host", "mode"}
# What an option's value decides besides its own: --sources=examples makes kernels mode, and so
# does a --mode given as the sources would decide it; the source trees and the toolkit follow
# their options.
DECIDES_TOO = {"sources": {"mode", "source_dirs"}, "xla_source_dir": {"source_dirs", "given"},
               "jax_source_dir": {"source_dirs", "given"}, "rocm_path": {"rocm_source"}, "therock_path": {"rocm_source"},
               "host": {"given"}}


def test_the_options_table_covers_every_option_of_the_parser():
    parser = cli.parser()
    declared = {s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"}
    assert declared == {f for o in options.OPTIONS for f in o.flags}
    assert len(options.OPTIONS) >= 20


@pytest.mark.parametrize("option", options.OPTIONS, ids=lambda o: o.flags[0])
def test_every_option_is_accepted_before_and_after_the_subcommand(option):
    words, value = sample(option)
    command = command_of(option)
    base = ["--sources=examples"] if option.dest in KERNELS_ONLY else []
    before = cli.parse_args(base + words + [command])
    after = cli.parse_args(base + [command] + words)
    assert getattr(before, option.dest) == getattr(after, option.dest) == value
    assert before.command == after.command == command
    # Nothing else differs from the defaults, in either order (the subparser clobbers nothing).
    defaults = vars(cli.parse_args(base + [command]))
    differs = {option.dest, *DECIDES_TOO.get(option.dest, ())}
    for parsed in (before, after):
        assert {k: v for k, v in vars(parsed).items() if k not in differs} == {k: v for k, v in defaults.items() if k not in differs}


def test_sources_decide_the_mode_of_each_command_that_builds(monkeypatch):
    for name in ("JAXCI_XLA_GIT_DIR", "JAXCI_CLONE_MAIN_XLA"):
        monkeypatch.delenv(name, raising=False)
    for command in cli.MODE_COMMANDS:
        assert cli.parse_args(["--sources=examples", command]).mode == "kernels"
        assert cli.parse_args([command]).mode == "full"
        # examples/xla named as the XLA tree is the stand-in still.
        assert cli.parse_args([command, f"--xla-source-dir={CHECKOUT / 'examples' / 'xla'}"]).mode == "kernels"
    # preflight's XLA may come from upstream CI's variables: a real one.
    monkeypatch.setenv("JAXCI_CLONE_MAIN_XLA", "1")
    assert cli.parse_args(["--sources=examples", "preflight"]).mode == "full"
    assert cli.parse_args(["--sources=examples", "native"]).mode == "kernels"
    assert cli.parse_args(["doctor"]).mode is None  # doctor builds nothing: no mode


def test_defaults_are_the_options_own():
    parsed = cli.parse_args(["dist_wheels"])
    # --mode has no default: the sources decide it (the pins' real XLA: full mode).
    assert {o.dest: getattr(parsed, o.dest) for o in options.OPTIONS if o.dest != "mode"} == {
        o.dest: o.default for o in options.OPTIONS if o.dest != "mode"}
    assert next(o for o in options.OPTIONS if o.dest == "mode").default is None
    assert (parsed.sources, parsed.mode, parsed.compiler, parsed.wheel_kind, parsed.rocm, parsed.dry_run) == (
        "pinned", "full", "gcc", None, "full", False)


def test_options_split_around_the_subcommand_are_all_kept(tmp_path):
    parsed = cli.parse_args(["--sources=examples", "--compiler=clang", "--amdgpu-targets=gfx950", "dist_wheels",
                                  f"--rocm-path={tmp_path}", "--wheel-kind=nightly", "--dry-run"])
    assert (parsed.sources, parsed.compiler, parsed.amdgpu_targets, parsed.rocm_path, parsed.wheel_kind, parsed.dry_run) == (
        "examples", "clang", ("gfx950",), str(tmp_path), "nightly", True)
    # Given twice, the later one wins.
    assert cli.parse_args(["--compiler=clang", "dist_wheels", "--compiler=gcc"]).compiler == "gcc"


def test_the_command_rocms_docs_give_parses_verbatim():
    parsed = cli.parser().parse_args(ROCM_DOCS_COMMAND)
    assert parsed.command == "dist_wheels"
    assert (parsed.compiler, parsed.python_versions, parsed.rocm_version) == ("clang", "3.12", "7.10.0a20251120")
    assert parsed.therock_path.endswith("/therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz")
    # The download is refused without its sha256, before anything runs (the request's toolkit).
    with pytest.raises(inputs.InputError, match=r"is a download: add --therock-sha256=HEX"):
        cli.parse_args(ROCM_DOCS_COMMAND)
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
    # The pins, full mode: no stand-in, so a release by default, and no JAX tree to read a version from.
    assert wheels.wheel_flags(args()) == ["--@jax_rocm_build//wheel:kind=release"]


def test_wheels_of_stand_ins_are_dev_wheels_unless_told(tmp_path, capsys):
    # The pins' real XLA builds in full mode, JAX's own modules with it: no stand-in, a release.
    assert args().wheel_kind == "release"
    assert capsys.readouterr().err == ""
    # Kernels mode always builds _triton and rocm_plugin_extension from examples/jax, whatever JAX tree.
    kernels = args("--sources=examples", f"--jax-source-dir={jax_tree(tmp_path)}")
    assert kernels.wheel_kind == "dev"
    # A note, which cli.main prints once every check has passed (never before an input's error).
    assert capsys.readouterr().err == ""
    assert kernels.notes[0].startswith("making dev wheels, as they will hold stand-ins (the PJRT plugin (examples/xla); "
                                       "_triton and rocm_plugin_extension")
    demo = args("--sources=examples")
    assert demo.wheel_kind == "dev"
    assert "the PJRT plugin (examples/xla); JAX's ROCm modules (examples/jax)" in demo.notes[0]
    assert args("--sources=examples", "--allow-stand-ins").wheel_kind == "release"
    assert args("--sources=examples", "--wheel-kind=nightly").wheel_kind == "nightly"
    assert capsys.readouterr().err == "", "a kind the flags chose is not announced"


def test_dev_wheels_of_the_stand_ins_name_this_projects_commit():
    flags = wheels.wheel_flags(args("--sources=examples", "dist_wheels", "--wheel-date=20261126"))
    head = subprocess.run(["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert f"--@jax_rocm_build//wheel:commit={head or JAX_PIN['commit']}" in flags
    assert "--@jax_rocm_build//wheel:kind=dev" in flags and "--@jax_rocm_build//wheel:date=20261126" in flags


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
    assert args("--sources=examples").source_dirs == {
        "xla": CHECKOUT / "examples" / "xla", "jax": CHECKOUT / "examples" / "jax"}
    assert wheels.wheel_flags(args("--sources=examples", "--allow-stand-ins")) == [
        "--@jax_rocm_build//wheel:kind=release", "--@jax_rocm_build//wheel:version=0.10.2",
        "--@jax_rocm_build//wheel:source_overrides=jax,xla"]
    assert wheels.wheel_flags(args("--sources=examples", f"--jax-source-dir={jax_tree(tmp_path)}", "--allow-stand-ins")) == [
        "--@jax_rocm_build//wheel:kind=release", "--@jax_rocm_build//wheel:version=0.11.0",
        "--@jax_rocm_build//wheel:source_overrides=jax,xla"]


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
    flags = sandbox.bazel_flags(args("--sources=examples", f"--jax-source-dir={tree}"))  # kernels mode's flags
    assert f"--override_repository=jax={tree.resolve()}" in flags
    assert args("--sources=examples", f"--jax-source-dir={tree}").source_dirs["jax"] == tree.resolve()


def test_nightly_with_a_date():
    flags = wheels.wheel_flags(args("dist_wheels", "--wheel-kind=nightly", "--wheel-date=20261123"))
    assert flags == ["--@jax_rocm_build//wheel:kind=nightly", "--@jax_rocm_build//wheel:date=20261123"]


def test_nightly_without_a_date_is_today_in_utc(fixed_clock):
    flags = wheels.wheel_flags(args("dist_wheels", "--wheel-kind=nightly"))
    assert flags == ["--@jax_rocm_build//wheel:kind=nightly", f"--@jax_rocm_build//wheel:date={fixed_clock}"]


def test_dev_with_a_commit():
    flags = wheels.wheel_flags(args("dist_wheels", "--wheel-kind=dev", "--wheel-date=20250102",
                                      "--wheel-commit=abcdef0123"))
    assert flags == ["--@jax_rocm_build//wheel:kind=dev", "--@jax_rocm_build//wheel:date=20250102",
                     "--@jax_rocm_build//wheel:commit=abcdef0123"]


def test_dev_without_a_commit_or_tree_is_the_pins_commit():
    flags = wheels.wheel_flags(args("dist_wheels", "--wheel-kind=dev", "--wheel-date=20250102"))
    assert f"--@jax_rocm_build//wheel:commit={JAX_PIN['commit']}" in flags


def test_dev_from_a_jax_tree_that_is_no_git_checkout_is_the_pins_commit(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # git must not find a repository above
    tree = jax_tree(tmp_path / "jax")
    flags = wheels.wheel_flags(args(f"--jax-source-dir={tree}", "dist_wheels", "--wheel-kind=dev",
                                      "--wheel-date=20250102"))
    assert f"--@jax_rocm_build//wheel:commit={JAX_PIN['commit']}" in flags


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
    assert f"--@jax_rocm_build//wheel:commit={head}" in flags
    assert "--@jax_rocm_build//wheel:version=0.11.0" in flags and "--@jax_rocm_build//wheel:source_overrides=jax" in flags


def test_a_dev_wheel_reads_the_jax_tree_once(tmp_path, monkeypatch):
    tree = jax_tree(tmp_path / "jax")
    seen = []
    real = sources.source_tree.identify
    monkeypatch.setattr(sources.source_tree, "identify", lambda source: seen.append(source) or real(source))
    sources.jax_tree_identity.cache_clear()
    flags = wheels.wheel_flags(args(f"--jax-source-dir={tree}", "dist_wheels", "--wheel-kind=dev",
                                      "--wheel-date=20250102"))
    assert "--@jax_rocm_build//wheel:version=0.11.0" in flags and any(f.startswith("--@jax_rocm_build//wheel:commit=") for f in flags)
    assert seen == [tree], "version and commit come from one read of the tree"


def test_post_release_and_no_rocm_version_extra():
    flags = wheels.wheel_flags(args("dist_wheels", "--wheel-post-release=2", "--no-rocm-version-extra", "--allow-stand-ins"))
    assert flags == ["--@jax_rocm_build//wheel:kind=release", "--@jax_rocm_build//wheel:post_release=2",
                     "--@jax_rocm_build//wheel:rocm_version_extra=false"]


def test_given_wheel_version_wins_over_the_jax_tree(tmp_path):
    tree = jax_tree(tmp_path / "jax")
    assert "--@jax_rocm_build//wheel:version=0.11.0" in wheels.wheel_flags(args(f"--jax-source-dir={tree}"))
    flags = wheels.wheel_flags(args(f"--jax-source-dir={tree}", "dist_wheels", "--wheel-version=0.12.1"))
    assert "--@jax_rocm_build//wheel:version=0.12.1" in flags and "--@jax_rocm_build//wheel:version=0.11.0" not in flags


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


# The Pythons the pinned JAX 0.10.2 builds for (third_party/jax/pin.json), and JAX 0.11.0's.
PIN_PYTHONS = ("3.11", "3.12", "3.13", "3.14")
JAX_0_11_PYTHONS = ("3.12", "3.13", "3.14")


def test_pick_interpreters_defaults_to_those_found_that_the_jax_tree_builds_for():
    found = [pythons.Interpreter("3.10", "/usr/bin/python3.10", None), *FOUND]
    assert pythons.pick_interpreters(None, found, PIN_PYTHONS) == FOUND
    assert pythons.pick_interpreters("", found, PIN_PYTHONS) == FOUND
    assert pythons.pick_interpreters(None, found, JAX_0_11_PYTHONS) == FOUND[1:]


def test_each_python_of_the_tree_left_out_gets_one_line_saying_how_to_add_it():
    lines = pythons.left_out(FOUND, PIN_PYTHONS)
    assert len(lines) == 1 and lines[0].startswith("Python 3.13 left out: no interpreter with headers (found: 3.11, 3.12, 3.14)")
    assert "install python3.13 with its headers under a prefix of its own" in lines[0]
    assert "python3 -m sandbox" not in lines[0]  # Debian's 3.13 is in every full root already
    empty = pythons.left_out([], PIN_PYTHONS)
    assert len(empty) == 4 and all("(found: none)" in line for line in empty)
    assert pythons.left_out(FOUND, JAX_0_11_PYTHONS) == lines


def test_a_python_the_sandbox_can_add_says_how():
    (line,) = pythons.left_out(FOUND, (*JAX_0_11_PYTHONS[:1], "3.14", "3.15"))
    assert line.startswith("Python 3.15 left out: no interpreter with headers (found: 3.11, 3.12, 3.14); add Debian's "
                           "to the sandbox (python3 -m sandbox ensure --rocm=full --python=3.15), or install ")
    with pytest.raises(inputs.InputError, match=re.escape("To add one, add Debian's to the sandbox (python3 -m sandbox "
                                                          "ensure --rocm=full --python=3.15), install python3.15")):
        pythons.pick_interpreters("3.15", FOUND, PIN_PYTHONS)


def test_in_host_mode_a_python_left_out_is_added_on_path():
    (line,) = pythons.left_out(FOUND, PIN_PYTHONS, host=True)
    assert line.endswith("install python3.13 and its headers (python3.13-dev, or pyenv, python.org) so that python3.13 "
                         "is on PATH")
    assert "--host" in pythons.left_out(FOUND, PIN_PYTHONS)[0] and "--host" not in line


def test_host_mode_finds_each_python_on_path_with_headers_under_usr_too(tmp_path, monkeypatch):
    """/usr's Pythons count in host mode (the sandboxed mode cannot mount them); one without
    headers does not; each at the path PATH gives it."""
    probes = {"/usr/bin/python3.13": "3.13 /usr /usr/include/python3.13", "/usr/bin/python3.12": "3.12 /usr /nowhere",
              "/opt/py/bin/python3.14": "3.14 /opt/py /usr/include/python3.13", "/venv/bin/python": "3.13 /usr x"}
    monkeypatch.setattr(pythons.shutil, "which", lambda name: {"python3.12": "/usr/bin/python3.12", "python3.13":
                        "/usr/bin/python3.13", "python3.14": "/opt/py/bin/python3.14"}.get(name))
    monkeypatch.setattr(pythons.sys, "executable", "/venv/bin/python")
    monkeypatch.setattr(pythons, "_probe", lambda exe: tuple(probes[exe].split()))
    monkeypatch.setattr(pythons.Path, "exists", lambda p: str(p) == "/usr/include/python3.13/Python.h")
    assert pythons.find_host_interpreters() == [pythons.Interpreter("3.13", "/usr/bin/python3.13", None),
                                               pythons.Interpreter("3.14", "/opt/py/bin/python3.14", None)]


def test_pick_interpreters_keeps_the_requested_order():
    picked = pythons.pick_interpreters("3.14, 3.11,", FOUND, PIN_PYTHONS)
    assert [i.version for i in picked] == ["3.14", "3.11"]
    assert picked[0] is FOUND[2]


def test_pick_interpreters_missing_version_lists_those_found():
    with pytest.raises(inputs.InputError) as error:  # exit 2, one line
        pythons.pick_interpreters("3.11,3.13", FOUND, PIN_PYTHONS)
    message = str(error.value)
    assert message.split("found:")[0].endswith("for Python 3.13; ")  # only the missing one
    assert "3.11 (/usr/bin/python3.11)" in message and "3.12 (/opt/py312/bin/python3.12)" in message
    # Sandboxed: a prefix of its own, or host mode with the user's own -dev package; host mode: PATH.
    assert "or build in host mode (--host) with your own python3.13-dev; or ask only" in message
    with pytest.raises(inputs.InputError) as error:
        pythons.pick_interpreters("3.13", FOUND, PIN_PYTHONS, host=True)
    assert "install python3.13 and its headers (python3.13-dev) so that python3.13 is on PATH" in str(error.value)


def test_pick_interpreters_none_found():
    with pytest.raises(inputs.InputError) as error:
        pythons.pick_interpreters("3.11", [], PIN_PYTHONS)
    assert "found: none" in str(error.value)


# --- therock_variables --------------------------------------------------------------------


def test_therock_url_needs_a_sha256():
    with pytest.raises(inputs.InputError) as error:
        toolkit.therock_variables("https://example.com/therock.tar.gz", None)
    assert "--therock-sha256" in str(error.value)


def test_therock_url_with_sha256():
    url = "https://example.com/therock-7.2.tar.gz"
    assert toolkit.therock_variables(url, "ab" * 32) == ({"THEROCK_URL": url, "THEROCK_SHA256": "ab" * 32}, [])


def test_therock_directory_is_rocm_path_and_bound(tmp_path):
    rocm = tmp_path / "rocm"
    rocm.mkdir()
    assert toolkit.therock_variables(str(rocm), None) == ({"ROCM_PATH": str(rocm.resolve())}, [str(rocm.resolve())])


def test_therock_tarball_is_a_file_url_with_its_sha256(tmp_path):
    tarball = tmp_path / "dl" / "therock.tar.gz"
    tarball.parent.mkdir()
    data = b"not really a tarball\n" * 100000  # > 1 MiB: more than one read block
    tarball.write_bytes(data)
    variables, binds = toolkit.therock_variables(str(tarball), None)
    assert variables == {"THEROCK_URL": f"file://{tarball.resolve()}", "THEROCK_SHA256": hashlib.sha256(data).hexdigest()}
    assert binds == [str(tarball.parent.resolve())]
    # A given sha256 is passed on as is (Bazel verifies it).
    assert toolkit.therock_variables(str(tarball), "cd" * 32)[0]["THEROCK_SHA256"] == "cd" * 32


def test_therock_nonsense_path(tmp_path):
    with pytest.raises(inputs.InputError) as error:
        toolkit.therock_variables(str(tmp_path / "nope"), None)
    assert "neither a URL, a tarball nor a directory" in str(error.value)
    assert str(tmp_path / "nope") in str(error.value)


def test_therock_http_url_needs_a_sha256_too():
    with pytest.raises(inputs.InputError) as error:
        toolkit.therock_variables("http://127.0.0.1:8000/therock-dist-linux-gfx94X-dcgpu-7.10.0a1.tar.gz", "")
    assert "is a download: add --therock-sha256=HEX" in str(error.value)


def test_therock_file_url_is_a_local_tarball(tmp_path):
    tarball = tmp_path / "my dl" / "therock-dist-linux-gfx950-dcgpu-7.10.0a20251120.tar.gz"
    tarball.parent.mkdir()
    tarball.write_bytes(b"tarball")
    variables, binds = toolkit.therock_variables(tarball.as_uri(), None)  # "my%20dl": quoted
    assert variables == {"THEROCK_URL": f"file://{tarball}", "THEROCK_SHA256": hashlib.sha256(b"tarball").hexdigest()}
    assert binds == [str(tarball.parent)]
    assert toolkit.therock_variables(tarball.as_uri(), "cd" * 32)[0]["THEROCK_SHA256"] == "cd" * 32


def test_therock_file_url_of_a_missing_file(tmp_path):
    missing = tmp_path / "therock-dist-linux-gfx950-dcgpu-7.10.0a20251120.tar.gz"
    with pytest.raises(inputs.InputError) as error:
        toolkit.therock_variables(missing.as_uri(), None)
    assert f"{missing} is not a file on this machine" in str(error.value)
    with pytest.raises(inputs.InputError, match="is not a file on this machine"):
        toolkit.therock_variables("file://otherhost/x.tar.gz", "ab" * 32)


def test_a_symlinked_tarball_keeps_its_name_and_mounts_its_target(tmp_path):
    real = tmp_path / "store" / "blob"
    real.parent.mkdir()
    real.write_bytes(b"x")
    link = tmp_path / "links" / "therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"
    link.parent.mkdir()
    link.symlink_to(real)
    variables, binds = toolkit.therock_variables(str(link), None)
    assert variables["THEROCK_URL"] == f"file://{link}"  # the family stays readable in the name
    assert binds == [str(link.parent), str(real.parent)]


# --- TheRock family -> amdgpu targets --------------------------------------------------

TARBALL = "https://rocm.nightlies.amd.com/tarball/therock-dist-linux-{}-7.10.0a20251120.tar.gz"


def test_the_wheel_list_and_the_families_are_the_finders():
    """ci_build keeps no list or parser of its own: the finder the repository rule runs answers."""
    assert toolkit.finder.__file__ == str(CHECKOUT / "third_party" / "gpus" / "find_rocm_config.py")
    assert toolkit.finder.DEFAULT_AMDGPU_TARGETS == ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101",
                                                     "gfx1200", "gfx1201")
    files = sorted((CHECKOUT / "build" / "ci_build_cli").glob("*.py"))
    source = "".join(p.read_text() for p in files)
    assert "gfx1030" not in source and "therock-dist-linux" not in source
    # The pre-flight names XLA's rocm_configure.bzl (it reads upstream's) and asks Bazel about ours;
    # nothing else of ci_build reads the repository rule.
    assert not [p.name for p in files if not p.name.startswith("preflight") and "rocm_configure.bzl" in p.read_text()]


@pytest.mark.parametrize("family, targets", [("gfx94X-dcgpu", "gfx942"), ("gfx950-dcgpu", "gfx950"),
                                             ("gfx110X-dgpu", "gfx1100,gfx1101"), ("gfx115X-igpu", "gfx1150,gfx1151,gfx1152,gfx1153")])
def test_a_therock_family_says_its_default_targets(family, targets):
    note = toolkit.therock_targets_note(TARBALL.format(family), None)
    assert note.startswith(f"TheRock family {family}: amdgpu targets {targets} (default: ")
    assert note.endswith("choose others of the family with --amdgpu-targets=LIST")


def test_explicit_targets_are_checked_against_the_family_only():
    note = toolkit.therock_targets_note(TARBALL.format("gfx950-dcgpu"), ("gfx950",))
    assert note == "TheRock family gfx950-dcgpu (device code for gfx950): amdgpu targets gfx950 (--amdgpu-targets)"
    assert "gfx9-4-generic" in toolkit.therock_targets_note(TARBALL.format("gfx94X-dcgpu"), ("gfx942", "gfx9-4-generic"))
    with pytest.raises(inputs.InputError) as error:
        toolkit.therock_targets_note(TARBALL.format("gfx950-dcgpu"), ("gfx942", "gfx950"))
    message = str(error.value)
    assert message.startswith("--amdgpu-targets=gfx942,gfx950 asks for gfx942, but the TheRock tarball "
                              "therock-dist-linux-gfx950-dcgpu-7.10.0a20251120.tar.gz is of family gfx950-dcgpu, "
                              "with device code for gfx950 only")
    assert "use --amdgpu-targets=gfx950" in message and "e.g. gfx94X-dcgpu" in message


def test_no_family_in_the_name_says_nothing(tmp_path):
    assert toolkit.therock_targets_note(str(tmp_path), ("gfx942",)) is None
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
    with pytest.raises(inputs.InputError, match=re.escape(f"--xla-source-dir={tmp_path / 'notes.txt'} is a file, not an "
                                                          "XLA checkout")):
        sources.check_local_sources(args(f"--xla-source-dir={tmp_path / 'notes.txt'}"))


# --- built_wheels / collect_wheels / summary_table ------------------------------------


@pytest.fixture
def built(tmp_path) -> list[Path]:
    """Two wheels where a build left them (any folder: ci_build is told where)."""
    paths = []
    for rel in ("somewhere/a.whl", "else/b.whl"):
        path = tmp_path / "checkout" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rel.encode() * 100)
        paths.append(path)
    return paths


def test_collect_wheels_copies_and_replaces(built, tmp_path):
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


def test_a_full_disk_leaves_no_partial_wheel_and_no_folder_of_its_own(built, tmp_path, monkeypatch):
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
    # rocm_release includes rocm (once: Bazel warns of a config expanded twice), then the host toolchain.
    assert [w for w in cmd if w.startswith("--config=")] == ["--config=rocm_release", "--config=manylinux_2_28"]
    assert cmd[cmd.index("build") + 1:cmd.index("build") + 3] == ["--config=rocm_release", "--config=manylinux_2_28"]
    for flag in (f"--override_repository=xla={CHECKOUT / 'examples' / 'xla'}",
                 f"--override_repository=jax={CHECKOUT / 'examples' / 'jax'}",
                 "--@jax_rocm_build//wheel:kind=nightly", "--@jax_rocm_build//wheel:date=20261123",
                 "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.14"):
        assert flag in cmd
    assert "--config=rocm_rbe" not in cmd and "--bind" not in cmd
    assert cmd[:len(sandbox.SANDBOX) + 2] == sandbox.SANDBOX + ["run", "--"]
    # The sandbox is provisioned first, the build comes last.
    assert recorded[0][0] == sandbox.SANDBOX + ["ensure", "--rocm=full"]
    assert recorded[-1][0] == cmd
    assert "--@jax_rocm_build//wheel:platform_tag" in capsys.readouterr().err


@pytest.mark.parametrize(("words", "config"), [
    (["--rbe"], "rocm_rbe"),
    (["--rbe=remote"], "rocm_rbe"),
    (["--rbe=dynamic"], "rocm_rbe_dynamic"),
    (["--rbe", "dynamic"], "rocm_rbe_dynamic"),
])
def test_dist_wheels_rbe(recorded, words, config):
    assert cli.main(DRY_RUN + words) == 0
    cmd = bazel_build(recorded)
    # The remote config includes rocm; release_settings is rocm_release without it (rocm/rocm.bazelrc).
    assert [w for w in cmd if w.startswith("--config=")] == [f"--config={config}", "--config=release_settings",
                                                            "--config=manylinux_2_28"]
    assert cmd.index(f"--config={config}") < cmd.index("//:jax_rocm_wheels")


def test_the_release_configs_include_rocm_once():
    """Each config ci_build names first includes --config=rocm; the one after it does not."""
    rc = (CHECKOUT / "rocm" / "rocm.bazelrc").read_text()
    for config in ("rocm_release", "rocm_rbe", "rocm_rbe_dynamic"):
        assert re.search(rf"^common:{config} --config=(rocm|rocm_rbe)$", rc, re.M), config
    assert not re.search(r"^\w+:release_settings --config=", rc, re.M)
    assert dist_wheels.release_configs(args("--sources=examples")) == ("rocm_release", "manylinux_2_28")
    assert dist_wheels.release_configs(args("--sources=examples", "--rbe")) == ("rocm_rbe", "release_settings",
                                                                                   "manylinux_2_28")
    assert dist_wheels.release_configs(args("--host-toolchain=sandbox", "--rbe=dynamic")) == ("rocm_rbe_dynamic",
                                                                                             "release_settings")


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
    assert cli.main(["dist_wheels", "--rbe=cloud"]) == 2
    err = capsys.readouterr().err.strip().splitlines()  # argparse's wording; quoting of the choices varies between Pythons
    assert len(err) == 1, "one line, not argparse's usage first"
    assert "argument --rbe: invalid choice: 'cloud' (choose from " in err[0] and "remote" in err[0] and "dynamic" in err[0]
    assert err[0].startswith("ci_build: ") and err[0].endswith("(build/ci_build --help lists the commands and options)")


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


def test_dist_wheels_by_default_names_each_python_of_the_tree_it_leaves_out(recorded, capsys):
    assert cli.main(DRY_RUN) == 0
    err = capsys.readouterr().err
    assert [v for v in PIN_PYTHONS if f"Python {v} left out" in err] == ["3.11", "3.12", "3.13"]
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
    assert not [cmd for cmd, _ in recorded if "sandbox" in cmd]  # no sandbox at all (-m sandbox)
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
    host = args("--sources=examples", "--host", "--compiler=clang")  # host mode is kernels mode's
    assert dist_wheels.clang(args("--sources=examples", "--compiler=clang")) == dist_wheels.SANDBOX_CLANG
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


HOST_FULL = ("ci_build: full mode (XLA's real PJRT plugin, from the pin or --xla-source-dir, builds only in upstream's "
             "graph) runs with the sandbox's Debian Bazel (full/debian.bazelrc), not in host mode: drop --host (or unset "
             "JAX_ROCM_HOST), or build the examples/xla stand-in in host mode with --sources=examples")


@pytest.mark.parametrize("env, argv, says", [
    (None, ["--host", "dist_wheels"], HOST_FULL),  # the pins' XLA: full mode
    ("1", ["native", "--xla-source-dir={tmp}"], HOST_FULL),
    (None, ["--host", "--mode=full", "preflight", "--xla-source-dir={tmp}"], HOST_FULL),
    ("yes", ["--sources=examples", "dist_wheels"], "ci_build: JAX_ROCM_HOST=yes (from the environment) is neither 1 (host mode"),
])
def test_host_mode_input_errors_are_one_line_exit_2(recorded, monkeypatch, tmp_path, capsys, env, argv, says):
    if env:
        monkeypatch.setenv(sandbox.HOST_ENV, env)
    assert cli.main(["--dry-run", *(a.format(tmp=tmp_path) for a in argv)]) == 2
    assert one_error_line(capsys).startswith(says) and recorded == []


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


def test_full_mode_of_the_stand_in_xla_fails_before_the_sandbox(nothing_runs, capsys):
    assert cli.main(["--mode=full", "--sources=examples", "--dry-run", "dist_wheels", "--python-versions=3.11,3.14"]) == 2
    assert capsys.readouterr().err == (
        "ci_build: --mode=full builds XLA's real PJRT plugin in upstream's graph, not the examples/xla stand-in: drop "
        "--mode for the demo (kernels mode), or name a real XLA (the pin: drop --sources=examples; or "
        "--xla-source-dir=DIR)\n")
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
    monkeypatch.setattr(dist_wheels, "CACHE", tmp_path)  # where a run keeps each build's wheels aside
    output_base = tmp_path / "output_base"
    # Wherever Bazel keeps it (a canonical name of any spelling): ci_build reads what Bazel names.
    config = output_base / "external" / "any+name" / "rocm_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"rocm_version": "7.10.0a20251120", "therock": {"rocm_package_version": "7.10.0a20251120"}}))
    infos = []

    def spawn(cmd, **kw):
        infos.append(cmd)
        answer = ("external/any+name/rocm_config.json" if "cquery" in cmd else
                  f"execution_root: {tmp_path / 'execroot'}\noutput_base: {output_base}")
        return subprocess.CompletedProcess(cmd, 0, answer + "\n", "")

    monkeypatch.setattr(sandbox, "spawn", spawn)
    monkeypatch.setattr(wheels, "built_wheels", lambda events: [])
    tarball = therock_tarball(tmp_path / "rocm-nightly.tar.gz")  # its name says no release
    argv = [a for a in DRY_RUN if a != "--dry-run"] + [f"--therock-path={tarball}", f"--output-dir={tmp_path / 'dist'}"]
    return argv, infos


def test_a_rocm_version_the_manifest_contradicts_fails_before_the_compile(fetched, recorded, capsys):
    argv, infos = fetched
    assert cli.main(argv + ["--rocm-version=7.2.4"]) == 2
    builds = [cmd for cmd, _ in recorded if "//:jax_rocm_wheels" in cmd]
    assert len(builds) == 1 and "--nobuild" in builds[0]  # the compile never started
    infos = [cmd for cmd in infos if "--check" not in cmd]  # the sandbox's prerequisite check comes first
    # Bazel names the file: @local_config_rocm as the root module sees it, in the build's configuration.
    assert infos and infos[0][-1] == "@local_config_rocm//:rocm_config.json" and "cquery" in infos[0]
    assert "--output=files" in infos[0] and "--config=rocm_release" in infos[0]
    assert "info" in infos[1] and infos[1][-2:] == ["execution_root", "output_base"]
    err = capsys.readouterr().err
    assert ("\nci_build: --rocm-version=7.2.4, but the TheRock tarball rocm-nightly.tar.gz, by its manifest, is "
            "ROCm 7.10.0a20251120, 7.10.0a20251120; point the build at that release") in err
    assert "building the wheels with Bazel" not in err
    assert not wheels.events_file().parent.exists(), "a failed run leaves no events folder in /tmp"


def test_a_rocm_version_the_manifest_agrees_with_goes_on_to_the_compile(fetched, recorded, capsys):
    argv, infos = fetched
    assert cli.main(argv + ["--rocm-version=7.10.0"]) == 1  # no wheel: fetched's Bazel wrote none
    builds = [cmd for cmd, _ in recorded if "//:jax_rocm_wheels" in cmd]
    assert len(builds) == 2 and "--nobuild" in builds[0] and "--nobuild" not in builds[1]
    assert [w for w in builds[0] if w != "--nobuild"] == builds[1]  # the same flags: the build reuses the analysis
    err = capsys.readouterr().err
    assert "fetching the TheRock tarball rocm-nightly.tar.gz to check --rocm-version=7.10.0 against its manifest" in err
    assert "Bazel built //:jax_rocm_wheels but names no wheel of it" in err


def test_each_built_wheel_is_read_once(recorded, monkeypatch, tmp_path, capsys):
    """The tagged wheels once each, by their copy aside (a later Python's build rewrites bazel-bin),
    and the copies once each, by their copy into --output-dir (whose sha256 the summary prints);
    the first copy once more, for the toolkit line."""
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
    monkeypatch.setattr(dist_wheels, "CACHE", tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    described = [wheels.BuiltWheel(path, {"rocm_version": "7.2.4", "artifacts": {"a.so": {"origin": "examples"}}})
                 for path in built]
    monkeypatch.setattr(wheels, "built_wheels", lambda events: described)
    monkeypatch.setattr(wheels, "audit_wheels", lambda ws, policy: {w.name: {"ok": True, "platform_tag": "x"} for w in ws})
    argv = [a for a in DRY_RUN if a != "--dry-run"] + ["--allow-stand-ins", f"--output-dir={tmp_path / 'dist'}"]
    assert cli.main(argv) == 0
    # Once, by the copy aside after the tagging build: the stand-ins are known from the wheels'
    # descriptions, which Bazel names (the same paths here: Bazel's tagged wheels replace the untagged ones).
    assert sorted(p for p in opened if p.parent == bazel_bin) == sorted(built)
    # The copies aside: each once by its copy into --output-dir, the first once more for the toolkit line.
    aside = [p for p in opened if p.parent != bazel_bin]
    assert sorted(p.name for p in aside) == sorted([built[0].name] + [w.name for w in built])
    assert all(p.parent.parent == tmp_path / "cache" for p in aside)
    assert not list((tmp_path / "cache").iterdir()), "the copies aside are gone"
    assert not wheels.events_file().parent.exists(), "the build events, once read, are gone from /tmp"
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
    # Every tree outside the checkout, /tmp's too: sandbox leaves out what it mounts anyway.
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
    assert toolkit.rocm_source(None, url, "ab" * 32, None) == toolkit.RocmSource(source.variables[:2], (), None)


def test_rocm_path_anywhere_is_mounted_but_never_the_sandboxs_own_folders(toolkit_dir):
    assert toolkit.rocm_source(str(toolkit_dir), None, None, None).binds == (str(toolkit_dir), str(toolkit_dir.resolve()))
    for own in ("/usr", "/usr/lib/x86_64-linux-gnu"):
        assert toolkit.rocm_source(own, None, None, None) == toolkit.RocmSource((("ROCM_PATH", str(own)),), (), None)
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


# --- full mode: upstream's graph in full/, one Bazel run per Python --------------------------

PY311 = pythons.Interpreter("3.11", "/opt/py311/bin/python3.11", "/opt/py311")
PY314 = pythons.Interpreter("3.14", "/usr/bin/python3.14", None)


def bazel_builds(commands) -> list[list[str]]:
    """Every `bazel build` among the commands `recorded` holds, in order."""
    return [cmd for cmd, _ in commands if "build" in cmd and "/usr/bin/bazel" in cmd]


def test_this_projects_settings_are_named_from_either_root_module():
    """--@jax_rocm_build//... names this project's packages from the checkout's MODULE.bazel and
    from full/MODULE.bazel, where this project is the module jax_rocm_build: one spelling."""
    for mode in (["--sources=examples"], []):
        parsed = args(*mode, "--amdgpu-targets=gfx942", "dist_wheels", "--no-rocm-version-extra")
        assert toolkit.rocm_flags(parsed) == ["--config=rocm", "--@jax_rocm_build//rocm:amdgpu_targets=gfx942"]
        assert toolkit.rocm_flags(parsed, ("rocm_release", "manylinux_2_28")) == [
            "--config=rocm_release", "--config=manylinux_2_28", "--@jax_rocm_build//rocm:amdgpu_targets=gfx942"]
        assert "--@jax_rocm_build//wheel:rocm_version_extra=false" in wheels.wheel_flags(parsed)
    assert re.search(r'^module\(\s*name = "jax_rocm_build",', (CHECKOUT / "MODULE.bazel").read_text(), re.M)
    assert 'bazel_dep(name = "jax_rocm_build")' in (CHECKOUT / "full" / "MODULE.bazel").read_text()


def test_full_mode_builds_for_one_python_per_bazel_run():
    assert full.full_python(PY314) == ["--repo_env=HERMETIC_PYTHON_VERSION=3.14",
                                       "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.14"]


def test_full_mode_with_two_pythons_makes_a_plan_for_each_and_the_pjrt_wheel_in_the_first(recorded, monkeypatch):
    parsed = args("--dry-run", "dist_wheels", "--wheel-kind=nightly", "--wheel-date=20261123")
    assert parsed.mode == "full"
    plans = dist_wheels.plan_build(parsed, [PY311, PY314])
    assert [p.interpreters for p in plans] == [[PY311], [PY314]]
    assert [p.target for p in plans] == [p.build_args()[-1] for p in plans] == ["//:jax_rocm_wheels", "//:jax_rocm_plugin_wheel"]
    # Each build writes the events that name its wheels (wheels.built_wheels).
    assert all(p.build_args()[-3:-1] == wheels.event_flags(p.events) for p in plans)
    assert plans[0].bazel == plans[1].bazel  # one output base: the second run reuses the first's actions
    assert "/opt/py311" in plans[0].bazel[:plans[0].bazel.index("--")]  # every Python mounted in each
    # The same flags but for the Python and the target.
    assert [w.replace("3.11", "3.14").replace("/opt/py311/bin/python", "/usr/bin/python") for w in plans[0].build_args()[:-1]] \
        == plans[1].build_args()[:-1]
    assert [w for w in plans[1].build_args() if "PYTHON" in w] == full.full_python(PY314)
    # Kernels mode builds every Python in one run.
    kernels = dist_wheels.plan_build(args("--sources=examples", "--dry-run"), [PY311, PY314])
    assert len(kernels) == 1 and kernels[0].interpreters == [PY311, PY314] and kernels[0].target == "//:jax_rocm_wheels"
    assert "--repo_env=JAX_ROCM_PYTHON=/opt/py311/bin/python3.11,/usr/bin/python3.14" in kernels[0].build_args()


def test_full_modes_dry_run_builds_each_python_with_the_release_configs(recorded, monkeypatch, capsys):
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: [PY311, PY314])
    assert cli.main(["--dry-run", "dist_wheels", "--python-versions=3.11,3.14", "--wheel-kind=nightly",
                     "--wheel-date=20261123", "--amdgpu-targets=gfx942"]) == 0
    first, second = bazel_builds(recorded)
    assert first[-1] == "//:jax_rocm_wheels" and second[-1] == "//:jax_rocm_plugin_wheel"
    for cmd in (first, second):
        assert cmd[cmd.index("/usr/bin/bazel"):cmd.index("build")] == full.FULL_BAZEL
        flags = cmd[cmd.index("build") + 1:]
        # rocm_release includes rocm and release_settings, whose --@local_config_rocm//rocm:rocm_path_type
        # comes with it: none of that is spelled on the command line.
        assert flags[:2] == ["--config=rocm_release", "--config=manylinux_2_28"]
        assert [w for w in flags if w.startswith("--config=")] == flags[:2]
        assert not [w for w in flags if w.startswith("--@local_config_rocm")]
        assert "--keep_going" in flags and "--@jax_rocm_build//rocm:amdgpu_targets=gfx942" in flags
        assert "--@jax_rocm_build//wheel:kind=nightly" in flags and "--@jax_rocm_build//wheel:date=20261123" in flags
        assert not [w for w in flags if w.startswith(("--//", "--no//"))]
    assert "--repo_env=HERMETIC_PYTHON_VERSION=3.11" in first and "--repo_env=HERMETIC_PYTHON_VERSION=3.14" in second
    err = capsys.readouterr().err
    assert "building the wheels with Bazel for Python 3.11 (1 of 2)" in err
    assert "building the wheels with Bazel for Python 3.14 (2 of 2)" in err
    # The wheels must meet the toolchain's policy in full mode too.
    assert "(--manylinux=manylinux_2_28), and the same build with --@jax_rocm_build//wheel:platform_tag=" \
           "manylinux_2_28_x86_64" in err
    # full/.bazelrc reads the configs from the same files as the checkout's .bazelrc.
    rc = (CHECKOUT / "full" / ".bazelrc").read_text()
    assert "import %workspace%/../rocm/rocm.bazelrc" in rc and "import %workspace%/../toolchains/manylinux/manylinux.bazelrc" in rc
    assert "build:release_settings --@local_config_rocm//rocm:rocm_path_type=link_only" in (
        CHECKOUT / "rocm" / "rocm.bazelrc").read_text()


@pytest.mark.parametrize(("rbe", "config"), [("--rbe", "rocm_rbe"), ("--rbe=dynamic", "rocm_rbe_dynamic")])
def test_full_mode_on_remote_execution_takes_the_rbe_mode_asked(recorded, rbe, config):
    assert cli.main(["--mode=full", rbe, "--dry-run", "dist_wheels", "--python-versions=3.14"]) == 0
    (cmd,) = bazel_builds(recorded)
    assert [w for w in cmd if w.startswith("--config=")] == [f"--config={config}", "--config=release_settings",
                                                            "--config=manylinux_2_28"]


def test_full_modes_native_builds_the_plugin_and_the_modules_for_the_sandboxs_python(recorded):
    assert cli.main(["--dry-run", "native"]) == 0
    (cmd,) = bazel_builds(recorded)
    flags = cmd[cmd.index("build") + 1:]
    assert flags[0] == "--config=rocm"
    assert flags[-5:] == [*full.full_python(PY314), "--keep_going", "//:xla_rocm_plugin", "//:rocm_extensions"]


@pytest.fixture
def dry_only(monkeypatch):
    """sandbox.run and sandbox.run_bazel as they are (a dry run prints each command, `+ ...`,
    on stderr), but a command run for real fails the test; the interpreters are faked, and
    nothing of the environment (ROCM_PATH, JAX_ROCM_HOST, SOURCE_DATE_EPOCH) plays a part."""
    real_run, real_run_bazel = sandbox.run, sandbox.run_bazel
    monkeypatch.setattr(sandbox, "run", lambda cmd, dry_run: real_run(cmd, dry_run) if dry_run else pytest.fail(
        f"ran {cmd}"))
    monkeypatch.setattr(sandbox, "run_bazel", lambda cmd, dry_run: real_run_bazel(cmd, dry_run) if dry_run else pytest.fail(
        f"ran {cmd}"))
    monkeypatch.setattr(sources.urllib.request, "urlopen", lambda *a, **k: pytest.fail("urlopen called"))
    for name in ("SOURCE_DATE_EPOCH", "ROCM_PATH", *toolkit.XLA_NAMES, sandbox.HOST_ENV, "JAXCI_XLA_GIT_DIR",
                 "JAXCI_CLONE_MAIN_XLA"):
        monkeypatch.delenv(name, raising=False)


def test_a_therock_release_from_the_pins_prints_full_modes_commands_one_build_per_python(dry_only, monkeypatch, capsys):
    """A TheRock release with the pinned sources (a real XLA: full mode), dry: the sandbox and the
    pinned archives, then one Bazel run per Python in full/, the PJRT wheel by the first only."""
    py313 = pythons.Interpreter("3.13", "/usr/bin/python3.13", None)
    py314 = pythons.Interpreter("3.14", "/opt/py314/bin/python3.14", "/opt/py314")
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: [pythons.Interpreter("3.11", "/usr/bin/python3.11", None),
                                                                 py313, py314])
    url = TARBALL.format("gfx94X-dcgpu")
    assert cli.main([f"--therock-path={url}", f"--therock-sha256={'ab' * 32}", "--python-versions=3.13,3.14",
                     "dist_wheels", "--dry-run"]) == 0
    err = capsys.readouterr().err.splitlines()
    bazel = [*sandbox.SANDBOX, "run", "--bind", "/opt/py314", "--", "sh", "-c", 'cd "$0" && exec "$@"', str(CHECKOUT / "full"),
             "/usr/bin/bazel", "--nosystem_rc", "--bazelrc=/etc/bazel.shared.bazelrc", "--bazelrc=debian.bazelrc",
             f"--output_user_root={full.CACHE / 'bazel'}",
             "build", "--config=rocm_release", "--config=manylinux_2_28", f"--repo_env=THEROCK_URL={url}",
             f"--repo_env=THEROCK_SHA256={'ab' * 32}", "--@jax_rocm_build//wheel:kind=release"]
    assert [line for line in err if line.startswith("+ ")] == [
        "+ " + shlex.join(sandbox.PREFETCH + ["--pypi-only"]) + " &",
        "+ " + shlex.join(sandbox.SANDBOX + ["ensure", "--rocm=full"]),
        "+ " + shlex.join(sandbox.PREFETCH),
        "+ " + shlex.join(bazel + ["--repo_env=HERMETIC_PYTHON_VERSION=3.13", "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.13",
                                   *wheels.event_flags(wheels.events_file()), "--keep_going", "//:jax_rocm_wheels"]),
        "+ " + shlex.join(bazel + ["--repo_env=HERMETIC_PYTHON_VERSION=3.14",
                                   "--repo_env=JAX_ROCM_PYTHON=/opt/py314/bin/python3.14",
                                   *wheels.event_flags(wheels.events_file()), "--keep_going", "//:jax_rocm_plugin_wheel"]),
    ]
    builds = [n for n, line in enumerate(err) if line.startswith("+ ") and " build " in line]
    assert err[builds[0] - 1] == "ci_build dist_wheels [1/3]: building the wheels with Bazel for Python 3.13 (1 of 2)"
    assert err[builds[1] - 1] == "ci_build dist_wheels [1/3]: building the wheels with Bazel for Python 3.14 (2 of 2)"
    assert err[-1] == ("# then, after each build: build/ci_build_cli/wheel_audit.py on its wheels (--manylinux=manylinux_2_28), and the "
                       "same build with --@jax_rocm_build//wheel:platform_tag=manylinux_2_28_x86_64")
    assert any(line.startswith("# first: JAX's patches of abseil-cpp, grpc, protobuf, rules_python from the pinned JAX "
                               "archive") for line in err[:builds[0]])
    assert err[0].startswith("ci_build dist_wheels: TheRock family gfx94X-dcgpu: amdgpu targets gfx942 (default: ")


def test_bazels_output_is_shown_as_it_comes_and_kept(capsys):
    rc, output = sandbox.run_bazel(["sh", "-c", "echo to-stdout; echo one >&2; echo two >&2; exit 3"], dry_run=False)
    assert (rc, output) == (3, "one\ntwo\n")
    captured = capsys.readouterr()
    assert captured.err == "+ sh -c 'echo to-stdout; echo one >&2; echo two >&2; exit 3'\none\ntwo\n"
    assert sandbox.run_bazel(["false"], dry_run=True) == (0, "")


# --- the mode follows the sources -------------------------------------------------------------


@pytest.mark.parametrize(("argv", "mode"), [
    ([], "full"),  # the pins' XLA
    (["--sources=examples"], "kernels"),  # the examples/xla stand-in
    (["--sources=examples", "--xla-source-dir={xla}"], "full"),  # a real XLA takes precedence
    (["--xla-source-dir={xla}"], "full"),
    (["--mode=full"], "full"),
    (["--sources=examples", "--mode=kernels"], "kernels"),
    (["--sources=examples", "--jax-source-dir={xla}"], "kernels"),  # a JAX tree changes nothing of XLA
])
def test_the_mode_follows_the_sources(tmp_path, argv, mode):
    parsed = args(*(a.format(xla=tmp_path) for a in argv))
    assert parsed.mode == mode
    assert sources.real_xla(parsed.source_dirs) == (mode == "full")


def test_decide_mode_takes_a_mode_only_where_the_sources_allow_it():
    assert [sources.decide_mode(None, real) for real in (True, False)] == ["full", "kernels"]
    assert [sources.decide_mode(asked, asked == "full") for asked in sources.MODES] == ["kernels", "full"]
    with pytest.raises(inputs.InputError, match=r"^--mode=kernels cannot build XLA's PJRT plugin from a real XLA"):
        sources.decide_mode("kernels", True)
    with pytest.raises(inputs.InputError, match=r"^--mode=full builds XLA's real PJRT plugin in upstream's graph, not the "
                                                r"examples/xla stand-in"):
        sources.decide_mode("full", False)


def test_an_explicit_kernels_mode_with_a_real_xla_is_one_line_before_anything_runs(nothing_runs, tmp_path, capsys):
    for argv in (["--mode=kernels", "dist_wheels"], ["--sources=examples", f"--xla-source-dir={tmp_path}", "native",
                                                     "--mode=kernels"]):
        assert cli.main(argv) == 2
        assert one_error_line(capsys).startswith("ci_build: --mode=kernels cannot build XLA's PJRT plugin from a real XLA "
                                                 "(the pin or --xla-source-dir)")
    assert nothing_runs == []


# --- a dry run makes nothing ----------------------------------------------------------------

# The real one, which the `recorded` fixture replaces.
REAL_FIND_INTERPRETERS = pythons.find_interpreters


def test_the_sandboxs_pythons_are_read_from_its_root_and_nothing_runs_in_it(monkeypatch, tmp_path):
    """A built root's Pythons are its files (python3.X with its Python.h); before a root is built,
    those its profile installs (PROFILE_PYTHONS), or None for a dry run, which names what it assumes."""
    real_run = subprocess.run

    def run(cmd, **kwargs):
        assert cmd[:len(sandbox.SANDBOX)] != sandbox.SANDBOX, "the sandbox was run"
        return real_run(cmd, **kwargs)

    monkeypatch.setattr(pythons.subprocess, "run", run)
    root = tmp_path / "root"
    for version, headers in (("3.13", True), ("3.14", True), ("3.15", False)):
        (root / "usr/bin").mkdir(parents=True, exist_ok=True)
        (root / f"usr/bin/python{version}").touch()
        if headers:
            (root / f"usr/include/python{version}").mkdir(parents=True)
            (root / f"usr/include/python{version}/Python.h").touch()
    monkeypatch.setattr(pythons, "ready_root", lambda paths: root)
    assert pythons.sandbox_versions() == ("3.13", "3.14")
    inside = [i for i in pythons.find_interpreters(predict_from_layers=False) if i.bind is None]
    assert inside == [pythons.Interpreter("3.13", "/usr/bin/python3.13", None),
                      pythons.Interpreter("3.14", "/usr/bin/python3.14", None)]
    monkeypatch.setattr(pythons, "ready_root", lambda paths: None)
    assert pythons.find_interpreters(predict_from_layers=False) is None
    assert [i.version for i in pythons.find_interpreters() if i.bind is None] == list(pythons.PROFILE_PYTHONS["full"])


def test_a_dry_run_before_the_sandbox_exists_names_the_pythons_it_assumes(recorded, monkeypatch, capsys):
    monkeypatch.setattr(pythons, "find_interpreters", REAL_FIND_INTERPRETERS)  # not `recorded`'s
    monkeypatch.setattr(pythons, "ready_root", lambda paths: None)
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels", "--python-versions=3.14"]) == 0
    assert "the sandbox is not made yet, so its Pythons are not known" in capsys.readouterr().err
    assert "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.14" in bazel_build(recorded)


def test_the_sandbox_run_no_ensure_fails_where_there_is_none_and_writes_nothing(tmp_path):
    result = subprocess.run([*SANDBOX, "run", "--no-ensure", "--", "true"], cwd=CHECKOUT,
                            env=sandbox_environment({**os.environ, "XDG_CACHE_HOME": str(tmp_path)}), capture_output=True, text=True)
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
    result = subprocess.run([*SANDBOX, "run", "--", "true"], cwd=CHECKOUT,
                            env=sandbox_environment({**os.environ, "XDG_CACHE_HOME": str(tmp_path / "file")}), capture_output=True,
                            text=True)
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
    monkeypatch.setattr(dist_wheels, "CACHE", tmp_path)
    answer = {"rocm_toolkit_path": "/usr", "rocm_version": "7.2.4", "clang_path": "/usr/lib/llvm-22/bin/clang",
              "amdgpu_targets_supported": ["gfx90a", "gfx942", "gfx950"]}
    probes = []
    monkeypatch.setattr(sandbox, "spawn", lambda cmd, **kw: probes.append(cmd) or
                        subprocess.CompletedProcess(cmd, 0, json.dumps(answer), ""))
    monkeypatch.setattr(wheels, "built_wheels", lambda events: [])
    return probes


def test_a_target_the_toolkits_clang_does_not_know_fails_before_bazel(probed, recorded, capsys, tmp_path):
    argv = ["--sources=examples", "dist_wheels", f"--output-dir={tmp_path / 'dist'}"]
    # gfx1100: a processor LLVM knows (the flag's own check passes it), which this toolkit's clang does not.
    assert cli.main(argv + ["--amdgpu-targets=gfx942,gfx1100"]) == 2
    probed = [cmd for cmd in probed if "--check" not in cmd]  # the sandbox's prerequisite check comes first
    assert probed and dist_wheels.finder.__file__ in probed[0]
    assert not [cmd for cmd, _ in recorded if "//:jax_rocm_wheels" in cmd], "Bazel never ran"
    said = capsys.readouterr().err.splitlines()[-1]
    assert said == ("ci_build: --amdgpu-targets=gfx942,gfx1100: gfx1100 is not a target the toolkit at /usr's clang "
                    "(/usr/lib/llvm-22/bin/clang) compiles for; it knows: gfx90a gfx942 gfx950")
    # A target it knows, with a feature: the build goes on to Bazel.
    assert cli.main(argv + ["--amdgpu-targets=gfx90a:xnack+,gfx942"]) == 1  # no wheel written by the fake Bazel
    assert [cmd for cmd, _ in recorded if "//:jax_rocm_wheels" in cmd]


def test_unknown_targets_ignore_features():
    finder = dist_wheels.finder
    assert finder.unknown_targets(["gfx90a:xnack+", "gfx942", "gfx9999"], ["gfx90a", "gfx942"]) == ["gfx9999"]
    assert finder.unknown_targets([], ["gfx942"]) == []


# How Bazel reports an action that ran and failed, and errors before any action ran.
COMPILE_FAILED = ("INFO: Analyzed target //:jax_rocm_wheels (3 packages loaded, 12 targets configured).\n"
                  "ERROR: /x/BUILD:1:2: Compiling a.cc failed: (Exit 1): clang failed: error executing CppCompile "
                  "command (from target //:a) /usr/bin/clang -c a.cc\n"
                  "a.cc:1:1: error: unknown type name 'x'\n"
                  "ERROR: /x/BUILD:7:3: Linking b.so failed: (Exit 1): clang failed\n"
                  "ERROR: Build did NOT complete successfully\n")
LOADING_FAILED = ("ERROR: no such package '@@xla~~llvm_extension~llvm-raw//': java.io.IOException: Error downloading "
                  "[https://github.com/llvm/llvm-project/archive/0123.tar.gz] to /o/external/llvm-raw/temp.tar.gz: "
                  "Unknown host: github.com\n"
                  "ERROR: /home/me/jax-rocm-build/full/BUILD.bazel:10:6: Analysis of target '//:jax_rocm_wheels' failed; build "
                  "aborted: Analysis failed\n"
                  "ERROR: Build did NOT complete successfully\n")


def test_a_failed_build_says_how_to_start_bazels_outputs_afresh():
    cmd = sandbox.SANDBOX + ["run", "--bind", "/opt/x", "--", "bazel", "build", "--config=rocm", "//:jax_rocm_wheels"]
    assert sandbox.failed_actions(COMPILE_FAILED) == ["Compiling a.cc", "Linking b.so"]
    hint = sandbox.damaged_outputs_hint(1, cmd, COMPILE_FAILED)
    assert hint and hint.startswith("if Compiling a.cc fails the same way again with nothing changed")
    assert f"`{' '.join(sandbox.SANDBOX)} run --bind /opt/x -- bazel clean --expunge`" in hint
    assert sandbox.damaged_outputs_hint(2, cmd, COMPILE_FAILED) is None  # a command-line error: nothing of the outputs
    assert sandbox.damaged_outputs_hint(1, ["git", "pull"], COMPILE_FAILED) is None


def test_no_clean_hint_where_no_action_failed():
    """Loading, fetching and analysis errors (exit 1 too) are none of a damaged output base's doing."""
    cmd = full.full_bazel(args()) + ["build", "--keep_going", "//:jax_rocm_wheels"]
    assert sandbox.failed_actions(LOADING_FAILED) == []
    assert sandbox.damaged_outputs_hint(1, cmd, LOADING_FAILED) is None
    assert sandbox.damaged_outputs_hint(1, cmd, "") is None
    assert sandbox.damaged_outputs_hint(1, cmd, LOADING_FAILED + COMPILE_FAILED).startswith("if Compiling a.cc fails")


def test_a_failed_step_names_the_command_and_the_hint_only_after_a_failed_action(monkeypatch, capsys):
    cmd = ["bazel", "build", "//:x"]
    for output, hinted in ((COMPILE_FAILED, True), (LOADING_FAILED, False)):
        monkeypatch.setattr(sandbox, "run_bazel", lambda c, dry_run, output=output: (1, output))
        assert sandbox.run_steps("native", [cmd, ["bazel", "test", "//:y"]], dry_run=False) == 1
        err = capsys.readouterr().err.splitlines()
        assert err[0] == "ci_build native: failed (exit 1) at: bazel build //:x"
        assert (len(err) == 2 and err[1].startswith("ci_build native: if Compiling a.cc fails")) if hinted else len(err) == 1
