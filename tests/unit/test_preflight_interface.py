"""build/ci_build_cli/preflight_interface.py and preflight.check_interface: the environment
variables XLA's rocm_configure reads and the --config names JAX's rocm.bazelrc defines, read
from a tree's text, and Bazel's answer read back (Bazel's words are 7.7.1's own)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ci_build_cli import cli, preflight, preflight_interface as pi

pytestmark = pytest.mark.unit

CONFIGURE = '''"""Reads `DOC_ONLY`: a docstring is not a read."""

load("//third_party/remote_config:common.bzl", "get_host_environ")

_DISTRO_URL = "DISTRO_URL"
_POOL = "POOL"
_DEFAULT_POOL = "default"

def _hipcc_env(repository_ctx):
    for name in [
        "HIP_CLANG_PATH",
        "HIPCC_VERBOSE",
    ]:
        if get_host_environ(repository_ctx, name):
            pass

def _impl(repository_ctx):
    enable = get_host_environ(repository_ctx, "NEED_ROCM")
    url = repository_ctx.os.environ.get(_DISTRO_URL)
    pool = repository_ctx.os.environ.get(_POOL, _DEFAULT_POOL)
    tmp = repository_ctx.getenv("TMPDIR", "")
    path = repository_ctx.os.environ["ROCM_PATH"]
    if "LLVM_PATH" in repository_ctx.os.environ:
        pass
    if "an_attribute" in repository_ctx.attr.environ:
        pass
    generic = get_host_environ(repository_ctx, some_name())

_ENVIRONS = [
    "NEED_ROCM",
    _POOL,
    "DECLARED_ONLY",
]

configure = repository_rule(
    implementation = _impl,
    environ = _ENVIRONS + [_DISTRO_URL, "CONFIG_REPO"],
    attrs = {"environ": attr.string_dict()},
)
'''
FILE = "xla/third_party/gpus/rocm_configure.bzl"


def test_every_variable_read_or_declared_with_the_line_that_writes_it():
    found = pi.environ_names(CONFIGURE, FILE)
    assert {n: (u.line, u.how) for n, u in found.names.items()} == {
        "HIP_CLANG_PATH": (11, "get_host_environ"),  # a loop over a list: the item's line
        "HIPCC_VERBOSE": (12, "get_host_environ"),
        "NEED_ROCM": (18, "get_host_environ"),  # read before the environ list declares it
        "DISTRO_URL": (19, "os.environ.get"),  # a constant: the line that uses its name
        "POOL": (20, "os.environ.get"),  # the default (a constant too) is not a variable
        "TMPDIR": (21, "getenv"),
        "ROCM_PATH": (22, "os.environ[]"),
        "LLVM_PATH": (23, "in os.environ"),
        "DECLARED_ONLY": (32, "environ"),  # environ = a constant list + [...]
        "CONFIG_REPO": (37, "environ"),
    }
    assert found.unresolved == (pi.Unresolved(FILE, 27, "get_host_environ"),)
    assert found.names["TMPDIR"].where == f"{FILE}:21"


def test_a_local_and_a_keyword_name():
    text = ('_URL = "URL"\n'
            'def f(ctx):\n'
            '    which = _URL\n'
            '    return get_host_environ(ctx, which), get_host_environ(repository_ctx = ctx, name = "BY_KEYWORD")\n')
    assert {n: u.line for n, u in pi.environ_names(text, "f.bzl").names.items()} == {"URL": 3, "BY_KEYWORD": 4}


def test_a_file_python_cannot_parse_is_an_error_not_an_empty_answer():
    with pytest.raises(pi.UnreadableStarlark, match="f.bzl"):
        pi.environ_names("def f(:\n", "f.bzl")


def test_the_files_are_found_at_their_path_in_any_tree():
    texts = [("xla-main/third_party/gpus/rocm_configure.bzl", "a"), ("xla-main/x/third_party/gpus/rocm_configure.bzl", "b"),
             ("jax/build/rocm/rocm.bazelrc", "c"), ("jax/.bazelrc", "d")]
    assert pi.tree_files(texts, pi.XLA_ROCM_CONFIGURE) == [texts[0]]
    assert pi.tree_files(texts, pi.JAX_ROCM_BAZELRC) == [texts[2]]


def test_the_probe_loads_ours_from_where_it_is():
    build = pi.environ_probe(["ROCM_PATH", "MADE_UP"])["BUILD.bazel"]
    assert 'load("//third_party/gpus:rocm_configure.bzl", "ROCM_CONFIGURE_ENVIRON", "XLA_ENVIRON_NOT_NEEDED")' in build
    assert 'XLA_READS = [\n    "ROCM_PATH",\n    "MADE_UP",\n]' in build
    package, name = pi.OUR_ROCM_CONFIGURE.removeprefix("//").split(":")
    assert (Path(preflight.CHECKOUT) / package / name).is_file()


def test_bazels_answer_to_the_probe_read_back():
    names = ["A", "B", "C"]
    stdout = "//build/preflight_probe/i1:loaded\n//build/preflight_probe/i1:unanswered_2\n"
    assert pi.unanswered(names, "//build/preflight_probe/i1", stdout) == {"C"}
    assert pi.unanswered(names, "//build/preflight_probe/i1", "//build/preflight_probe/i1:loaded\n") == set()
    # Not loaded (ours lacks a symbol): no answer, rather than "all answered".
    assert pi.unanswered(names, "//build/preflight_probe/i1", "") is None


def test_one_line_per_unanswered_variable_in_file_order():
    names = pi.environ_names(CONFIGURE, FILE).names
    assert pi.environ_report(names, {"TMPDIR", "HIPCC_VERBOSE"}) == [
        f"{FILE}:12: HIPCC_VERBOSE: XLA's rocm_configure reads it (get_host_environ); ours neither reads it "
        "(ROCM_CONFIGURE_ENVIRON) nor says why it need not (XLA_ENVIRON_NOT_NEEDED)",
        f"{FILE}:21: TMPDIR: XLA's rocm_configure reads it (getenv); ours neither reads it (ROCM_CONFIGURE_ENVIRON) nor "
        "says why it need not (XLA_ENVIRON_NOT_NEEDED)",
    ]


BAZELRC = """# Used for ROCm build and test
# build:commented_out --copt=-x
common:rocm --define=using_rocm=true
build --@rules_python//python/config_settings:bootstrap_impl=script
try-import %workspace%/user.bazelrc

build:rocm_rbe --bes_backend="grpcs://example.com"
test:rocm --test_timeout=920
  test:rocm_rbe --jobs=50
test:tests_only --flaky_test_attempts=3
query:query_only --keep_going
"""
RC = "jax/build/rocm/rocm.bazelrc"


def test_configs_with_their_first_line_and_commands():
    configs = pi.bazelrc_configs(BAZELRC, RC)
    assert [(c.name, c.line, c.commands) for c in configs.values()] == [
        ("query_only", 11, ("query",)), ("rocm", 3, ("common", "test")), ("rocm_rbe", 7, ("build", "test")),
        ("tests_only", 10, ("test",))]
    assert configs["rocm"].where == f"{RC}:3"


def test_each_config_is_asked_by_the_command_it_is_for():
    configs = pi.bazelrc_configs(BAZELRC, RC)
    assert pi.config_command(["bazel"], configs["rocm_rbe"]) == ["bazel", "canonicalize-flags", "--config=rocm_rbe", "--"]
    assert pi.config_command(["bazel"], configs["tests_only"]) == ["bazel", "test", "--nobuild", "--config=tests_only"]
    assert pi.config_command(["bazel"], configs["query_only"]) is None


NOT_DEFINED = "ERROR: Config value 'rocm_release_wheel' is not defined in any .rc file\nINFO: Invocation ID: 1d4\n"


def test_bazels_word_for_an_undefined_config_read_back():
    assert pi.not_defined(NOT_DEFINED) == {"rocm_release_wheel"}
    assert pi.not_defined("INFO: Invocation ID: 1d4\n--config=rocm\n") == set()


def test_one_line_per_missing_config():
    configs = pi.bazelrc_configs(BAZELRC, RC)
    assert pi.config_report([configs["rocm_rbe"], configs["rocm"]], "ours") == [
        f"{RC}:3: --config=rocm: JAX defines it (common, test); ours does not (Bazel: Config value 'rocm' is not defined "
        "in any .rc file)",
        f"{RC}:7: --config=rocm_rbe: JAX defines it (build, test); ours does not (Bazel: Config value 'rocm_rbe' is not "
        "defined in any .rc file)",
    ]


def test_one_script_the_sentinel_first():
    configs = list(pi.bazelrc_configs(BAZELRC, RC).values())
    lines = pi.script(["bazel"], "/w/p x", "//p", configs)
    assert lines[0] == "bazel query --keep_going --output=label //p:all >'/w/p x/env.out' 2>'/w/p x/env.err'"
    assert lines[1] == (f"bazel canonicalize-flags --config={pi.SENTINEL} -- >/dev/null 2>'/w/p x/config0.err'; "
                        "echo $? >'/w/p x/config0.rc'")
    # config<i> is configs[i - 1]; query_only (1) is not asked. The build configs at once, then
    # (where that fails) each on its own; the test-only one on its own.
    assert lines[2] == ("if bazel canonicalize-flags --config=rocm --config=rocm_rbe -- >/dev/null 2>&1; then "
                        ": >'/w/p x/config2.err'; echo 0 >'/w/p x/config2.rc'; : >'/w/p x/config3.err'; echo 0 >'/w/p x/config3.rc'; "
                        "else bazel canonicalize-flags --config=rocm -- >/dev/null 2>'/w/p x/config2.err'; echo $? >'/w/p x/config2.rc'; "
                        "bazel canonicalize-flags --config=rocm_rbe -- >/dev/null 2>'/w/p x/config3.err'; echo $? >'/w/p x/config3.rc'; fi")
    assert len(lines) == 4 and "config4.err" in lines[-1] and lines[-1].startswith("bazel test --nobuild")


# ---- preflight.check_interface with a Bazel of the test's making --------------------------

XLA_READS = re.compile(r'^    "(\w+)",$', re.M)


def fake_bazel(ours_environ: set[str], ours_configs: set[str], says_sentinel: bool = True, loads: bool = True,
               stops: dict[str, str] | None = None, cut_after: int | None = None):
    """A sandbox.spawn that answers check_interface's script as Bazel would, ours answering
    `ours_environ` and defining `ours_configs`; `stops`: config -> the error Bazel stops at
    after expanding it; `cut_after`: the run ends after that many configs (the sentinel first)."""
    runs = []

    def spawn(cmd, **kwargs):
        script = cmd[-1]
        runs.append(script)
        query = re.search(r"query --keep_going --output=label (\S+):all >(\S+) 2>(\S+);", script)
        if query:
            package, out, err = query.groups()
            reads = XLA_READS.findall((Path(out).parent / "BUILD.bazel").read_text())
            answer = [f"{package}:loaded"] * loads + [f"{package}:unanswered_{i}" for i, n in enumerate(reads)
                                                      if n not in ours_environ]
            Path(out).write_text("".join(f"{label}\n" for label in answer))
            Path(err).write_text("" if loads else "ERROR: file '//third_party/gpus:rocm_configure.bzl' does not contain "
                                 "symbol 'XLA_ENVIRON_NOT_NEEDED'\n")
        for name, err, status in re.findall(r"--config=(\S+) .*?2>(\S+); echo \$\? >([^\s;]+)", script)[:cut_after]:
            undefined = name not in ours_configs and (says_sentinel or name != pi.SENTINEL)
            stop = (stops or {}).get(name)
            Path(err).write_text(f"ERROR: Config value '{name}' is not defined in any .rc file\n" if undefined else
                                 f"INFO: Invocation ID: 1d4\n{stop}\n" if stop else "")
            Path(status).write_text("2\n" if undefined else "1\n" if stop else "0\n")

    return spawn, runs


@pytest.fixture
def interface(monkeypatch, tmp_path):
    """check_interface over the texts given, its probe folder under tmp_path; returns (rc, stderr lines)."""
    (tmp_path / "build").mkdir()
    monkeypatch.setattr(preflight, "CHECKOUT", tmp_path)
    monkeypatch.setattr(preflight, "PREFLIGHT_PROBES", tmp_path / "build" / "preflight_probe")
    monkeypatch.delenv("ROCM_PATH", raising=False)

    def run(capsys, texts, spawn=None, dry_run=False):
        argv = ["--xla-source-dir=/trees/xla", "--jax-source-dir=/trees/jax", *["--dry-run"] * dry_run, "preflight",
                "--names-only"]
        monkeypatch.setattr(preflight.sandbox, "spawn", spawn or (lambda *a, **k: pytest.fail("Bazel ran")))
        rc = preflight.check_interface(cli.parse_args(argv), texts)
        assert not list((tmp_path / "build" / "preflight_probe").glob("*")), "the probe is left behind"
        return rc, [line.removeprefix("ci_build preflight: ") for line in capsys.readouterr().err.splitlines()]

    return run


TEXTS = [(FILE, CONFIGURE), (RC, BAZELRC)]
ALL_READ = {"HIP_CLANG_PATH", "HIPCC_VERBOSE", "NEED_ROCM", "DISTRO_URL", "POOL", "TMPDIR", "ROCM_PATH", "LLVM_PATH",
            "DECLARED_ONLY", "CONFIG_REPO"}


def test_what_ours_lacks_is_one_line_each_and_exit_1(interface, capsys):
    spawn, runs = fake_bazel(ALL_READ - {"TMPDIR", "DECLARED_ONLY"}, {"rocm", "tests_only"})
    rc, lines = interface(capsys, TEXTS, spawn)
    assert rc == 1 and len(runs) == 1, "one Bazel run for both"
    assert [line for line in lines if line.startswith(("xla/", "jax/"))] == [
        f"{FILE}:21: TMPDIR: XLA's rocm_configure reads it (getenv); ours neither reads it (ROCM_CONFIGURE_ENVIRON) nor "
        "says why it need not (XLA_ENVIRON_NOT_NEEDED)",
        f"{FILE}:32: DECLARED_ONLY: XLA's rocm_configure reads it (environ); ours neither reads it (ROCM_CONFIGURE_ENVIRON) "
        "nor says why it need not (XLA_ENVIRON_NOT_NEEDED)",
        f"{RC}:7: --config=rocm_rbe: JAX defines it (build, test); this project's .bazelrc does not (Bazel: Config value "
        "'rocm_rbe' is not defined in any .rc file)",
    ]
    assert any(line.startswith("ours does not answer 2 of the 10 environment variables") for line in lines), lines
    assert any(line.startswith("this project's .bazelrc lacks 1 of the 3 --config names") for line in lines), lines
    assert f"note: {FILE}:27: get_host_environ: which variable it reads is not known from the text; not checked" in lines
    assert f"note: {RC}:11: --config=query_only is for query only; not checked" in lines


def test_all_answered_is_exit_0(interface, capsys):
    rc, lines = interface(capsys, TEXTS, fake_bazel(ALL_READ, {"rocm", "rocm_rbe", "tests_only"})[0])
    assert rc == 0
    assert any(line.startswith("ours answers all 10 environment variables") for line in lines), lines
    assert any(line.startswith("this project's .bazelrc defines all 3 --config names") for line in lines), lines


def test_a_config_bazel_stops_after_expanding_is_a_note(interface, capsys):
    """Defined (the check passes), and what Bazel then said is shown; `bazel test` without
    targets stopping, as it always does, is not."""
    stops = {"rocm_rbe": "ERROR: --remote_magic=1: Unrecognized option: --remote_magic=1",
             "tests_only": "ERROR: Couldn't start the build. Unable to run tests"}
    rc, lines = interface(capsys, TEXTS, fake_bazel(ALL_READ, {"rocm", "rocm_rbe", "tests_only"}, stops=stops)[0])
    assert rc == 0
    assert [line for line in lines if line.startswith("note: --config")] == [
        "note: --config=rocm_rbe is defined, but Bazel stopped at: ERROR: --remote_magic=1: Unrecognized option: --remote_magic=1"]


def test_a_bazel_that_says_nothing_of_the_sentinel_proves_nothing(interface, capsys):
    rc, lines = interface(capsys, TEXTS, fake_bazel(ALL_READ, {"rocm", "rocm_rbe", "tests_only"}, says_sentinel=False)[0])
    assert rc == 1
    assert any("which no .rc file defines, is undefined" in line for line in lines), lines
    assert not any("defines all" in line for line in lines)


def test_a_run_cut_short_is_a_failure_not_all_defined(interface, capsys):
    rc, lines = interface(capsys, TEXTS, fake_bazel(ALL_READ, {"rocm", "rocm_rbe", "tests_only"}, cut_after=2)[0])
    assert rc == 1
    assert "Bazel gave no answer for --config=rocm_rbe, tests_only: the run ended before it" in lines
    assert not any("defines all" in line for line in lines)


def test_ours_not_loading_is_a_failure_not_all_answered(interface, capsys):
    rc, lines = interface(capsys, TEXTS, fake_bazel(set(), {"rocm", "rocm_rbe", "tests_only"}, loads=False)[0])
    assert rc == 1
    assert "ERROR: file '//third_party/gpus:rocm_configure.bzl' does not contain symbol 'XLA_ENVIRON_NOT_NEEDED'" in lines
    assert any(line.startswith("our //third_party/gpus:rocm_configure.bzl did not load in the probe") for line in lines)
    assert not any("answers all" in line for line in lines)


def test_a_dry_run_prints_the_one_run(interface, capsys):
    rc, lines = interface(capsys, TEXTS, dry_run=True)
    assert rc == 0
    [command] = [line for line in lines if line.startswith("+ ")]
    assert "query --keep_going --output=label //build/preflight_probe/iXXXXXXXX:all" in command
    assert f"canonicalize-flags --config={pi.SENTINEL} --" in command and "test --nobuild --config=tests_only" in command


def test_trees_without_the_files_ask_nothing_and_say_so(interface, capsys):
    rc, lines = interface(capsys, [("xla/BUILD", ""), ("jax/.bazelrc", "build:rocm --x\n")])
    assert rc == 0
    assert lines == [
        "note: /trees/xla has no third_party/gpus/rocm_configure.bzl: the environment variables it reads are not checked",
        "note: /trees/jax has no build/rocm/rocm.bazelrc: its --config names are not checked",
    ]
