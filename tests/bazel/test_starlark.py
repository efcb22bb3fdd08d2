"""Starlark unit tests (bazel_skylib's unittest) of rocm/private's pure functions: rocm/private/tests."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.bazel


def test_rocm_private_functions(in_sandbox):
    result = in_sandbox("bazel", "test", "--test_output=errors", "//rocm/private/tests:all", check=False)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    assert "4 tests pass" in out, out[-2000:]  # "Executed 0 out of 4" when cached
