"""The cases of wheel/private/version.bzl (wheel/private/tests/version_cases.bzl), asked of
packaging and of ci_build: the Starlark that makes a wheel's version and file name at analysis
is tested on them in Bazel (tests/bazel/test_starlark.py); here each expected version is one
packaging calls canonical, the canonical-form cases are packaging's own answers, the versions
order as PEP 440 says, the file names are the ones wheel_builder.py gives with packaging, and
every flag a refusal names is one ci_build says in its own words."""

from __future__ import annotations

import re

import pytest
from packaging import version as pep440

import wheel_builder as wb
from ci_build_cli import cli, wheels
from ci_build_cli.paths import OURS
from tests.conftest import CHECKOUT, bzl_constants

pytestmark = pytest.mark.unit

PRIVATE = CHECKOUT / "wheel" / "private"


CASES = bzl_constants(PRIVATE / "tests" / "version_cases.bzl")
VERSIONS = {case["id"]: case["version"] for case in CASES["VERSION_CASES"]}


def packaging_canonical(text: str) -> bool:
    try:
        return str(pep440.Version(text)) == text
    except pep440.InvalidVersion:
        return False


def test_the_cases_are_there():
    assert len(CASES["VERSION_CASES"]) >= 20 and len(CASES["PROBLEM_CASES"]) >= 20 and len(CASES["CANONICAL_CASES"]) >= 20
    assert len(VERSIONS) == len(CASES["VERSION_CASES"]), "two version cases share an id"


@pytest.mark.parametrize("case", CASES["VERSION_CASES"], ids=lambda case: case["id"])
def test_every_expected_version_is_canonical_for_packaging(case):
    assert packaging_canonical(case["version"]), case


@pytest.mark.parametrize("text, canonical", CASES["CANONICAL_CASES"])
def test_the_canonical_form_cases_are_packagings_answers(text, canonical):
    assert packaging_canonical(text) is canonical


def test_the_versions_order_as_pep440_says():
    v = {name: pep440.Version(text) for name, text in VERSIONS.items()}
    assert v["nightly"] < v["release"] < v["post_nightly"] < v["post"]
    assert v["post_nightly"].is_devrelease and v["post_nightly"].post == 1
    assert v["dev_local"].local == "gabcdef0.rocm7.2.4" and v["dev_local"].public == "0.7.1.dev20250102"
    # JAX's kinds: a snapshot before a nightly before a release candidate before the release.
    assert v["snapshot_local"] < v["nightly"] < v["rc"] < v["release"]
    assert v["snapshot_local"].local == "selfbuilt.rocm7.2.4" and v["rc"].is_prerelease


def test_a_release_is_the_same_version_however_it_was_asked_for():
    """ML_WHEEL_TYPE=release and --//wheel:kind=release make one version, and so one file name."""
    pieces = {case["id"]: case["pieces"] for case in CASES["VERSION_CASES"]}
    assert pieces["xla_release"]["ml_wheel"] and VERSIONS["xla_release"] == pieces["xla_release"]["base"]


@pytest.mark.parametrize("case", CASES["FILE_NAME_CASES"], ids=lambda case: case["name"])
def test_the_file_names_are_the_ones_the_tool_gives_with_packaging(case):
    spec = wb.WheelSpec(case["distribution"], case["version"], "s", (), python_tag=case["python_tag"],
                        abi_tag=case["abi_tag"], platform_tag=case["platform_tag"])
    assert spec.filename() == case["name"]


def ci_build_flags() -> set[str]:
    """Every option string build/ci_build's parser accepts."""
    return {s for action in cli.parser()._actions for s in action.option_strings}


@pytest.mark.parametrize("case", CASES["PROBLEM_CASES"], ids=lambda case: case["says"][:40])
def test_every_flag_a_refusal_names_is_said_in_ci_builds_words(case):
    """A refusal names the Bazel flag (or JAX's variable); after a failed build ci_build says
    its own flag for each of this project's settings (wheels.in_ci_build_words)."""
    said = wheels.in_ci_build_words(case["says"])
    if case["cli_flag"]:
        assert len(said) == 1 and said[0].rsplit(" ", 1)[1] == case["cli_flag"], said
        assert case["cli_flag"] in ci_build_flags()
    else:
        assert said == [], said


def test_the_flags_version_bzl_names_are_the_wheel_settings_ci_build_translates():
    flags = re.search(r'^FLAGS = "([^"]+)"$', (PRIVATE / "version.bzl").read_text(), re.M).group(1)
    assert flags == f"{OURS}wheel:"
    settings = set(re.findall(r'^\s*name = "(\w+)"', (CHECKOUT / "wheel" / "BUILD.bazel").read_text(), re.M))
    assert set(wheels.SETTING_FLAGS) <= settings
    assert set(wheels.SETTING_FLAGS.values()) <= ci_build_flags()
