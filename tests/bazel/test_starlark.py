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


def test_the_wheel_set_passes_each_wheels_provider_on(sandbox_root):
    """//:jax_rocm_wheels, analysed (not built) with the main job's own flags (what `ci_build
    --dry-run` prints): rocm_wheel declares RocmWheelInfo with its .whl already named, and the
    set hands each wheel's on in RocmWheelSetInfo, the PJRT wheel first, then a plugin wheel
    per Python."""
    dry = subprocess.run([sys.executable, str(CHECKOUT / "build" / "ci_build"), "--sources=examples", "--dry-run", "dist_wheels"],
                         cwd=CHECKOUT, capture_output=True, text=True, env=without_session())
    line = next(line for line in dry.stderr.splitlines() if line.startswith("+ ") and " bazel build " in line)
    command = [w for w in shlex.split(line[2:]) if not w.startswith("--build_event_json_file")]
    at = command.index("build", command.index("bazel"))
    expr = ('[(w.distribution, w.python_tag, w.version, w.wheel.basename, w.wheel.is_directory) '
            'for k, p in providers(target).items() if k.endswith("%RocmWheelSetInfo") for w in p.wheels]')
    command[at:at + 1] = ["cquery", "--output=starlark", f"--starlark:expr={expr}"]
    result = subprocess.run(command, cwd=CHECKOUT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    wheels = ast.literal_eval(result.stdout.strip().splitlines()[-1])
    major = re.fullmatch(r"jax_rocm(\d+)_pjrt", wheels[0][0]).group(1)  # the configured ROCm's major (7, 10)
    assert wheels[0][:2] == (f"jax_rocm{major}_pjrt", "py3"), wheels
    assert len(wheels) > 1 and all(d == f"jax_rocm{major}_plugin" and t.startswith("cp3") for d, t, *_ in wheels[1:]), wheels
    for distribution, python_tag, version, basename, is_directory in wheels:
        abi = "none" if python_tag == "py3" else python_tag
        assert not is_directory and re.fullmatch(rf"{distribution}-{re.escape(version)}-{python_tag}-{abi}-[a-z0-9_.]+\.whl",
                                                 basename), wheels
