"""The folders show the pipeline (docs/layout.md): no folder grows into a drawer of everything.

Product code is the Python and Starlark the project ships and runs (tests/ and examples/ left
out), counted in lines per top-level folder.
"""

from __future__ import annotations

import collections
import re

import pytest

from tests.conftest import CHECKOUT, tracked

pytestmark = pytest.mark.unit

PROGRAMS_WITHOUT_SUFFIX = ("build/ci_build", "tools/bazel")
NOT_PRODUCT = ("tests", "examples")


def product_lines(files: list[str]) -> dict[str, int]:
    """Top-level folder ("." for the checkout's own files) -> lines of its Python and Starlark."""
    lines: collections.Counter[str] = collections.Counter()
    for name in files:
        if not (name.endswith((".py", ".bzl", ".bazel", ".tpl")) or name in PROGRAMS_WITHOUT_SUFFIX):
            continue
        top = name.split("/")[0] if "/" in name else "."
        if top not in NOT_PRODUCT:
            lines[top] += len((CHECKOUT / name).read_bytes().splitlines())
    return dict(lines)


def shares(lines: dict[str, int]) -> dict[str, float]:
    total = sum(lines.values())
    return {folder: count / total for folder, count in lines.items()}


def test_the_count_leaves_tests_and_examples_out_and_takes_the_programs_without_suffix():
    counted = product_lines(["tests/unit/test_layout.py", "examples/jax/BUILD.bazel", "build/ci_build", "README.md"])
    assert counted == {"build": len((CHECKOUT / "build" / "ci_build").read_bytes().splitlines())}


def test_tools_is_under_15_percent_and_no_folder_above_30():
    share = shares(product_lines(tracked()))
    assert share["tools"] < 0.15, f"tools/ holds {share['tools']:.0%} of the product code: move what is not a developer tool out"
    crowded = {folder: f"{s:.0%}" for folder, s in share.items() if s > 0.30}
    assert not crowded, f"folders above 30 % of the product code: {crowded}"


def test_the_layout_names_every_top_level_folder():
    text = (CHECKOUT / "docs" / "layout.md").read_text()
    table = {m for cell in re.findall(r"^\| ([^|]+) \|", text, re.M) for m in re.findall(r"`\.?([\w.-]+)[/`]", cell)}
    folders = {name.split("/")[0] for name in tracked() if "/" in name and not name.startswith(".")}
    assert folders - table == set(), f"docs/layout.md's table lacks {sorted(folders - table)}"
