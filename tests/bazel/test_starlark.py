"""Starlark unit tests (bazel_skylib's unittest) of pure functions: rocm/private/tests and third_party/gpus/private/tests."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.bazel


def test_rocm_private_functions(in_sandbox):
    result = in_sandbox("bazel", "test", "--test_output=errors", "//rocm/private/tests:all", "//third_party/gpus/private/tests:all",
                        check=False)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    # Every test target Bazel found passed ("Executed 0 out of N" when cached): the count is
    # Bazel's, so adding a test file to rocm/private/tests needs no edit here.
    found = re.search(r"Found (\d+) test targets", out)
    assert found and int(found.group(1)) > 0, out[-2000:]
    assert f"{found.group(1)} tests pass" in out, out[-2000:]
