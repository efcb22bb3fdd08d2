"""No code spells a repository's canonical name (issue 57): Bazel 7 writes `_main~sources~jax`,
Bazel 8 (and .bazelrc's --config=bazel9) `+sources+jax`, so code that writes either down breaks
under the other. The code asks Bazel (`bazel mod dump_repo_mapping`, tests/infra/repositories.py)
or reads both in what Bazel printed.

The unit tests are left out: they feed the parsers samples of what Bazel printed."""

from __future__ import annotations

import ast
import re

import pytest

from tests.conftest import CHECKOUT, tracked

pytestmark = pytest.mark.unit

# A canonical name written down: Bazel 7's `_main~ext~repo`, `module~~ext~repo` or `module~//`,
# Bazel 8's `+ext+repo`, `module++ext+repo` or `module+//`; or a glob of either (`*~local_config_rocm`).
SPELLED = re.compile(r"_main~\w|\w~~\w|@@\w+[~+]//|(?<![\w+])\+\w+\+\w|\w\+\+\w+\+\w|\*[~+]\w")
# The code whose job is to write a canonical name for Bazel (real_trees.canonical_name composes
# one from its parts by the Bazel version, which the scan does not see as a spelling).
WRITERS = {
    "tools/bazel_overrides.py": "the launcher: it gives Bazel 7 an override under both of its spellings",
}


def docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (they describe both spellings)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            found.add(id(body[0].value))
    return found


def spelled(text: str) -> list[int]:
    """The lines whose code (its strings; not comments or docstrings) spells a canonical name.
    Starlark parses as Python; a template that does not is read line by line, comments left out."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return [n for n, line in enumerate(text.splitlines(), 1) if SPELLED.search(line.split("#", 1)[0])]
    skip = docstrings(tree)
    texts = []  # (line, text): each string; an f-string whole, its fields as "x"
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
            texts.append((node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)))
    texts += [(node.lineno, node.value) for node in ast.walk(tree)
              if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip]
    return sorted({line for line, value in texts if SPELLED.search(value)})


def test_the_scan_finds_both_spellings_and_not_cpp_or_a_tilde():
    lines = ['"""Bazel 7 names it _main~sources~xla."""', 'path = f"{base}/external/_main~rocm~local_config_rocm"',
             'sdk = "external/+zig+zig_sdk"', 'repo = "xla~~llvm_extension~llvm-raw"  # _main~x~y',
             'flags = ["-std=c++17", "--copt=-O2"]', 'home = "~/mirror"  # a user\'s folder', 'label = "@@grpc~//:grpc++"',
             'name = f"_main~{extension}~{repository}"', 'cat = "cat $base/external/*~local_config_rocm/x.json"']
    assert spelled("\n".join(lines)) == [2, 3, 4, 7, 8, 9]


def test_no_code_spells_a_canonical_repository_name():
    files = [f for f in tracked("*.py", "*.bzl", "*.bazel", "*.tpl", "*.sh") if not f.startswith(("tests/unit/", "examples/"))]
    found = {f: lines for f in files if f not in WRITERS and (lines := spelled((CHECKOUT / f).read_text()))}
    assert len(files) > 100
    assert found == {}, f"ask Bazel for the name (tests/infra/repositories.py) instead: {found}"
