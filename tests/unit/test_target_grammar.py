"""One grammar for amdgpu target lists: what ci_build hands Bazel and what plain Bazel reads
from the same text are the same targets, and both are the finder's.

Starlark cannot call Python, so rocm/private/amdgpu_targets.bzl has its own form of the
finder's split_targets. This test runs that Starlark function itself: its source is also
Python, given Starlark's type() (which names a value's type as a string)."""

from __future__ import annotations

import ast
import re

import pytest

from ci_build_cli import inputs
from ci_build_cli.paths import CHECKOUT
from third_party.gpus import find_rocm_config as finder

pytestmark = pytest.mark.unit

AMDGPU_TARGETS_BZL = CHECKOUT / "rocm/private/amdgpu_targets.bzl"


def starlark_split():
    """split_amdgpu_targets from amdgpu_targets.bzl, with the constant it reads."""
    text = AMDGPU_TARGETS_BZL.read_text()
    separators = re.search(r"^_SEPARATORS = .*$", text, re.M).group(0)
    function = re.search(r"^def split_amdgpu_targets\(.*?(?=^\S)", text, re.M | re.S).group(0)
    namespace = {"type": lambda value: "string" if isinstance(value, str) else "list"}
    exec(compile(separators + "\n" + function, str(AMDGPU_TARGETS_BZL), "exec"), namespace)  # noqa: S102
    return namespace["split_amdgpu_targets"]


LISTS = [
    "gfx942,gfx950", "gfx942;gfx950", "gfx942 gfx950",  # the three ways people write them
    "gfx942, gfx950", "gfx942;;gfx950;", " gfx942\tgfx950\n", "gfx942,gfx950,gfx942",
    "gfx90a:xnack-;gfx942:sramecc+", "gfx1201",
]


@pytest.mark.parametrize("written", LISTS)
def test_ci_build_and_plain_bazel_read_a_list_as_the_finder_does(written):
    split = starlark_split()
    expected = finder.split_targets(written)
    assert split(written) == expected  # plain Bazel: --//rocm:amdgpu_targets=<as written>
    handed = inputs.listed_targets(inputs.amdgpu_targets(written))  # ci_build checks it, then passes this to Bazel
    assert split(handed) == expected


def test_the_three_ways_are_one_list():
    assert {tuple(finder.split_targets(w)) for w in LISTS[:3]} == {("gfx942", "gfx950")}


def test_the_features_a_target_takes_are_the_finders():
    text = AMDGPU_TARGETS_BZL.read_text()
    starlark = ast.literal_eval(re.search(r"^_FEATURES = (\[.*?\])$", text, re.M).group(1))
    assert tuple(starlark) == finder.TARGET_FEATURES
    with pytest.raises(inputs.InputError, match="is no target feature"):
        inputs.amdgpu_targets("gfx90a:xnack")
