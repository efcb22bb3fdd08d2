"""Starlark unit tests (bazel_skylib's unittest) of rocm/private's pure functions: tests/starlark."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.bazel


def test_rocm_private_functions(in_sandbox):
    result = in_sandbox("bazel", "test", "--test_output=errors", "//tests/starlark:all", check=False)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    assert "Executed 4 out of 4 tests: 4 tests pass." in out or "4 tests pass" in out, out[-2000:]
