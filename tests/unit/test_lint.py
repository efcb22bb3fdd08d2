"""The linters of the unit tier: ruff (Python, ruff.toml) and buildifier (Starlark, tools/lint/buildifier.py).

Each is clean on the whole tree, and each does fail on a file with an obvious fault,
saying how to fix it. ruff is pinned in requirements-test.txt (this venv's); buildifier
comes from the npm package @bazel/buildifier pinned by tools/lint/package-lock.json,
installed on first use with `npm ci` (npm's registry), then reused offline.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import CHECKOUT
from tools.lint import buildifier as buildifier_py, npm_packages

pytestmark = pytest.mark.unit

BUILDIFIER = [sys.executable, "-m", "tools.lint.buildifier"]


def pinned(requirement: str) -> str:
    for line in (CHECKOUT / "requirements-test.txt").read_text().splitlines():
        if line.startswith(requirement + "=="):
            return line.split("==", 1)[1].strip()
    raise AssertionError(f"{requirement} is not pinned in requirements-test.txt")


def ruff(*args: str) -> subprocess.CompletedProcess:
    # No cache: a test leaves nothing in the checkout.
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], cwd=CHECKOUT,
                          capture_output=True, text=True, timeout=300)


def buildifier(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*BUILDIFIER, *args], cwd=CHECKOUT, capture_output=True, text=True,
                          env=env, timeout=600)


@pytest.fixture(scope="module")
def buildifier_installed() -> None:
    """buildifier's npm install, made here once if needed; skips without npm to make it."""
    if not (npm_packages.install_dir() / ".complete").exists() and shutil.which("npm") is None:
        pytest.skip("npm is needed once to install @bazel/buildifier from tools/lint/package-lock.json and is not on "
                    "PATH: install Node.js and npm (Debian 13: apt-get install nodejs npm)")


# ----------------------------------------------------------------------------------
# ruff
# ----------------------------------------------------------------------------------

def test_ruff_is_the_pinned_version():
    result = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True, text=True)
    assert result.returncode == 0, f"ruff is missing from {sys.executable}'s environment: run the tests through " \
                                   f"tests/run.py, whose venv has requirements-test.txt\n{result.stderr}"
    assert result.stdout.split() == ["ruff", pinned("ruff")]


def test_ruff_finds_nothing_in_the_tree():
    result = ruff(".")
    assert result.returncode == 0, (f"ruff found problems (fix them; imports: `{sys.executable} -m ruff check --fix`):\n"
                                    f"{result.stdout}{result.stderr}")
    assert "All checks passed!" in result.stdout


def test_ruff_checks_the_scripts_without_a_suffix_and_not_bazels_links():
    listed = set(ruff("--show-files", ".").stdout.splitlines())
    assert {str(CHECKOUT / "build" / "ci_build"), str(CHECKOUT / "tools" / "bazel")} <= listed
    assert str(CHECKOUT / "tools" / "lint" / "buildifier.py") in listed
    assert not [f for f in listed if "/bazel-" in f]


def test_ruff_fails_on_an_unused_import_and_says_how_to_fix(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef f(l):\n    return l\n")
    result = ruff("--config", str(CHECKOUT / "ruff.toml"), str(bad))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "F401" in result.stdout and "`os` imported but unused" in result.stdout
    assert "E741" in result.stdout, "ambiguous variable names are findings too"
    assert "1 fixable with `--fix`" in result.stdout


# ----------------------------------------------------------------------------------
# buildifier
# ----------------------------------------------------------------------------------

def test_buildifier_finds_nothing_in_the_tree(buildifier_installed):
    result = buildifier()
    assert result.returncode == 0, f"{result.stdout}{result.stderr}"
    assert "(buildifier version: 8.2.1)" in result.stderr
    assert f"{len(buildifier_py.tracked_files())} Starlark file(s): formatted, no lint warnings" in result.stderr


def test_buildifier_takes_every_starlark_file_of_both_modules_and_no_template():
    # The module lists the checkout it was imported from: the second xdist worker runs in a
    # clone (tests/conftest.py) but imports the source checkout's modules.
    files = {str(f.relative_to(buildifier_py.CHECKOUT)) for f in buildifier_py.tracked_files()}
    assert {"MODULE.bazel", "BUILD.bazel", "rocm/defs.bzl", "third_party/jax/BUILD.jax.bazel",
            "examples/jax/REPO.bazel", "examples/xla/xla/pjrt/c/BUILD.bazel"} <= files
    assert {"full/MODULE.bazel", "full/BUILD.bazel", "full/jaxlib/rocm/defs.bzl", "full/third_party/jax_protos.bzl"} <= files
    assert not [f for f in files if f.endswith(".tpl")]
    assert not [f for f in files if re.search(r"(^|/)bazel-", f)], "Bazel's convenience links are not Starlark files"


def test_buildifier_fails_on_an_unformatted_build_file_and_fix_formats_it(buildifier_installed, tmp_path):
    build = tmp_path / "BUILD.bazel"
    build.write_text('filegroup(name="files",\n  srcs=["b", "a"])\n')
    result = buildifier(str(build))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{build}: not formatted as buildifier formats it [format]" in result.stdout
    assert "run `python3 -m tools.lint.buildifier --fix`" in result.stderr
    fixed = buildifier("--fix", str(build))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert build.read_text() == 'filegroup(\n    name = "files",\n    srcs = [\n        "a",\n        "b",\n    ],\n)\n'


def test_buildifier_reports_lint_warnings_that_fix_cannot_fix(buildifier_installed, tmp_path):
    bzl = tmp_path / "defs.bzl"
    bzl.write_text('"""Defs."""\n\ndef double(x):\n    unused = 1\n    return 2 * x\n')
    for args in ((), ("--fix",)):
        result = buildifier(*args, str(bzl))
        assert result.returncode == 1, result.stdout + result.stderr
        assert f"{bzl}:4:5: Variable \"unused\" is unused. Please remove it. [unused-variable]" in result.stdout
    assert "what --fix could not do is left to fix by hand" in result.stderr
    assert "# buildifier: disable=<warning>" in result.stderr


def test_the_projects_prose_docstrings_pass(buildifier_installed, tmp_path):
    """function-docstring-header/-args/-return are off (tools/lint/buildifier.py says why)."""
    bzl = tmp_path / "defs.bzl"
    bzl.write_text('"""Defs."""\n\ndef double(x, y):\n    """Twice x, or y when x is None: the rule\'s\n'
                   '    default, as its callers pass it."""\n    if x == None:\n        return y\n    return 2 * x\n')
    result = buildifier(str(bzl))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_syntax_error_is_a_failure_named(buildifier_installed, tmp_path):
    bzl = tmp_path / "broken.bzl"
    bzl.write_text("x = (\n")
    result = buildifier(str(bzl))
    assert result.returncode == 3, result.stdout + result.stderr
    assert "syntax error" in result.stderr and f"buildifier cannot parse {bzl}" in result.stderr


def test_a_missing_file_is_an_error_not_a_pass(tmp_path):
    result = buildifier(str(tmp_path / "BUILD.bazel"))
    assert result.returncode == 2 and "no such file" in result.stderr


def test_without_npm_it_says_what_to_install(tmp_path):
    """A cache with no install and no npm on PATH: exit 2, naming what to install."""
    build = tmp_path / "BUILD.bazel"
    build.write_text("")
    env = dict(os.environ, PATH=str(tmp_path / "empty"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    result = buildifier(str(build), env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "`npm` is not on PATH (Debian 13: apt-get install nodejs npm)" in result.stderr
    assert not (tmp_path / "cache").exists(), "nothing half-installed"
