"""Starlark unit tests (bazel_skylib's unittest) of pure functions: rocm/private/tests, third_party/gpus/private/tests
and the rules' providers as Bazel analyses them."""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys

import pytest

from tests.conftest import CHECKOUT, without_session

pytestmark = pytest.mark.bazel


def test_rocm_private_functions(in_sandbox):
    result = in_sandbox("bazel", "test", "--test_output=errors", "//rocm/private/tests:all", "//third_party/gpus/private/tests:all",
                        "//wheel/private/tests:all",
                        check=False)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    # Every test target Bazel found passed ("Executed 0 out of N" when cached): the count is
    # Bazel's, so adding a test file to rocm/private/tests needs no edit here.
    found = re.search(r"Found (\d+) test targets", out)
    assert found and int(found.group(1)) > 0, out[-2000:]
    assert f"{found.group(1)} tests pass" in out, out[-2000:]


WHEELS_EXPR = ('[(w.distribution, w.python_tag, w.version, w.wheel.basename, w.wheel.is_directory) '
               'for k, p in providers(target).items() if k.endswith("%RocmWheelSetInfo") for w in p.wheels]')


@pytest.fixture(scope="module")
def analyse_wheels(sandbox_root):
    """Runs `bazel cquery` on //:jax_rocm_wheels with the main job's own flags (what `ci_build
    --dry-run` prints) and more: analysis, no build. Returns (returncode, the wheels' RocmWheelInfo
    fields as WHEELS_EXPR lists them or None, stderr)."""
    dry = subprocess.run([sys.executable, str(CHECKOUT / "build" / "ci_build"), "--sources=examples", "--dry-run", "dist_wheels"],
                         cwd=CHECKOUT, capture_output=True, text=True, env=without_session())
    line = next(line for line in dry.stderr.splitlines() if line.startswith("+ ") and " bazel build " in line)
    command = [w for w in shlex.split(line[2:]) if not w.startswith("--build_event_json_file")]
    at = command.index("build", command.index("bazel"))

    def analyse(*flags: str):
        # The extra flags last: they override the main job's (Bazel takes the last of each).
        result = subprocess.run(command[:at] + ["cquery", "--output=starlark", f"--starlark:expr={WHEELS_EXPR}"]
                                + command[at + 1:] + list(flags), cwd=CHECKOUT, capture_output=True, text=True)
        wheels = ast.literal_eval(result.stdout.strip().splitlines()[-1]) if result.returncode == 0 else None
        return result.returncode, wheels, result.stderr
    return analyse


def test_the_wheel_set_passes_each_wheels_provider_on(analyse_wheels):
    """rocm_wheel declares RocmWheelInfo with its .whl named at analysis, and the set hands each
    wheel's on in RocmWheelSetInfo, the PJRT wheel first, then a plugin wheel per Python."""
    returncode, wheels, stderr = analyse_wheels()
    assert returncode == 0, stderr[-3000:]
    major = re.fullmatch(r"jax_rocm(\d+)_pjrt", wheels[0][0]).group(1)  # the configured ROCm's major (7, 10)
    assert wheels[0][:2] == (f"jax_rocm{major}_pjrt", "py3"), wheels
    assert len(wheels) > 1 and all(d == f"jax_rocm{major}_plugin" and t.startswith("cp3") for d, t, *_ in wheels[1:]), wheels
    for distribution, python_tag, version, basename, is_directory in wheels:
        abi = "none" if python_tag == "py3" else python_tag
        assert not is_directory and re.fullmatch(rf"{distribution}-{re.escape(version)}-{python_tag}-{abi}-[a-z0-9_.]+\.whl",
                                                 basename), wheels


def test_a_version_suffix_jax_spells_is_in_the_names_or_refused_at_analysis(analyse_wheels):
    """JAX's ML_WHEEL_VERSION_SUFFIX goes into every .whl's name as analysis names it; one that
    would not make a canonical PEP 440 version stops analysis (before any compile) naming the
    variable and the spelling that would."""
    release = ["--repo_env=ML_WHEEL_TYPE=release", "--@jax_rocm_build//wheel:kind="]
    returncode, wheels, stderr = analyse_wheels(*release, "--repo_env=ML_WHEEL_VERSION_SUFFIX=rc1")
    assert returncode == 0, stderr[-3000:]
    assert all(re.match(r"\d+\.\d+\.\d+rc1(\+|$)", version) and f"-{version}-" in basename
               for _, _, version, basename, _ in wheels), wheels

    returncode, wheels, stderr = analyse_wheels(*release, "--repo_env=ML_WHEEL_VERSION_SUFFIX=.RC1")
    assert returncode != 0 and wheels is None
    assert re.search(r'ML_WHEEL_VERSION_SUFFIX "\.RC1" goes after X\.Y\.Z of a release .* \(as rc1 it would be: \d+\.\d+\.\d+rc1\)',
                     stderr), stderr[-3000:]
