"""The rules speak Bazel: no string of a .bzl file or template (a fail() message, a hint), nor
of a program the rules' actions and repository rules run (the finder, the wheel builder, the
extractors), names build/ci_build or its flags. ci_build checks its inputs before Bazel runs and
answers in its own flags, and says a Bazel flag an action names in its own
(wheels.in_ci_build_words); what Bazel prints serves every user, with or without the CLI."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, tracked

pytestmark = pytest.mark.unit

def starlark_files() -> list[Path]:
    """Our .bzl files and the templates of generated BUILD and .bzl files (not the stand-ins'),
    and the Python programs the rules run."""
    return [CHECKOUT / f for f in tracked("*.bzl", "*BUILD*.tpl", "*.bzl.tpl", "wheel/private/*.py", "third_party/*.py",
                                          "toolchains/*.py", "rocm/*.py") if not f.startswith("examples/")]


def strings_naming_the_cli(text: str) -> list[str]:
    """String literals (docstrings aside) that name ci_build."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.STRING and not token.string.startswith('"""') and "ci_build" in token.string:
            found.append(token.string)
    return found


def test_the_scan_finds_a_message_naming_the_cli():
    text = 'fail("use build/ci_build --x")\n"""ci_build in a docstring"""\n# ci_build\n'
    assert strings_naming_the_cli(text) == ['"use build/ci_build --x"']


def test_no_rule_message_names_the_cli():
    files = starlark_files()
    names = {f.name for f in files}
    assert {"rocm_configure.bzl", "BUILD.tpl", "find_rocm_config.py", "wheel_builder.py", "extract_zig.py"} <= names
    offenders = {str(f.relative_to(CHECKOUT)): s for f in files if (s := strings_naming_the_cli(f.read_text()))}
    assert not offenders, offenders


def test_repository_rules_run_programs_through_the_one_checked_helper():
    """Every program a repository rule runs goes through third_party/repo_utils/repo_utils.bzl: run_checked
    fails naming the program's output, run_for_answer returns a result the caller reads."""
    direct = [f for f in tracked("*.bzl") if not f.startswith("examples/") and f != "third_party/repo_utils/repo_utils.bzl"
              and ".execute(" in (CHECKOUT / f).read_text()]
    assert direct == []
    assert ".execute(" in (CHECKOUT / "third_party/repo_utils/repo_utils.bzl").read_text()
