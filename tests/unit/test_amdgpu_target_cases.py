"""rocm/private/tests/amdgpu_target_cases.bzl asked of the finder's Python: the split, the
targets a toolkit's clang does not know, the features no code object takes and a TheRock
toolkit's coverage, as ci_build reads them before Bazel. The same table runs through the
Starlark that re-reads --//rocm:amdgpu_targets at analysis (rocm_private_test.bzl, run by
tests/bazel/test_starlark.py): one answer per case on either side."""

from __future__ import annotations

import pytest

from tests.conftest import CHECKOUT, bzl_constants
from third_party.gpus import find_rocm_config as finder

pytestmark = pytest.mark.unit

CASES = bzl_constants(CHECKOUT / "rocm" / "private" / "tests" / "amdgpu_target_cases.bzl")


def test_the_cases_are_there():
    assert len(CASES["SPLIT_CASES"]) >= 5 and len(CASES["CHECK_CASES"]) >= 5 and len(CASES["COVERAGE_CASES"]) >= 3


@pytest.mark.parametrize("case", CASES["SPLIT_CASES"], ids=lambda case: repr(case["value"]))
def test_the_finder_splits_as_the_starlark_does(case):
    assert finder.split_targets(case["value"]) == case["targets"]


@pytest.mark.parametrize("case", CASES["CHECK_CASES"], ids=lambda case: case["requested"])
def test_the_finder_refuses_what_the_starlark_refuses(case):
    targets = finder.split_targets(case["requested"])
    assert finder.unknown_targets(targets, case["supported"]) == case["unknown"]
    bad = [f for t in targets for f in t.split(":")[1:] if f not in finder.TARGET_FEATURES]
    assert bad == case["bad_features"]


@pytest.mark.parametrize("case", CASES["COVERAGE_CASES"], ids=lambda case: case["requested"])
def test_coverage_is_the_finders_one_policy(case):
    """The Starlark is handed allowed_targets' answer (rocm_config.json); ci_build asks uncovered_targets."""
    assert finder.allowed_targets(case["supported"], case["covered"]) == case["allowed"]
    assert finder.uncovered_targets(finder.split_targets(case["requested"]), case["covered"]) == case["uncovered"]
