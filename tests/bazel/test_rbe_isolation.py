"""The isolated runner of the loopback cluster hides what an action does not declare.

tests/bazel/rbe_isolation_driver.py builds, with --config=rocm_rbe on
tests/infra/rbe/cluster.py's cluster, genrules that `cat` one file each: a declared
input, and three undeclared absolute paths (in the checkout, in Bazel's exec root
under the output base, in /var/tmp). On the isolated runner every undeclared read
fails remotely and the declared one succeeds; on hosttools (the machine's filesystem)
the same undeclared reads succeed, which is what makes this test able to fail: a
runner that isolated nothing would pass them. About a minute.
"""

from __future__ import annotations

import pytest

from tests.conftest import run_driver, scratch_copy

# slow tier (docs/testing.md): remote execution on an isolated runner, on two shared cores.
pytestmark = [pytest.mark.bazel, pytest.mark.slow]

UNDECLARED = ["undeclared_checkout", "undeclared_exec_root", "undeclared_var_tmp"]


@pytest.fixture(scope="module")
def builds(sandbox_root, scratch_checkout_module) -> dict:
    return run_driver("python3", "-m", "tests.bazel.rbe_isolation_driver", str(scratch_checkout_module))


@pytest.fixture(scope="module")
def scratch_checkout_module(tmp_path_factory):
    with scratch_copy(tmp_path_factory.mktemp("rbe-isolation") / "checkout") as copy:
        yield copy


def test_on_the_isolated_runner_every_undeclared_read_fails_remotely(builds):
    isolated = builds["isolated"]
    assert isolated["failed"] == UNDECLARED, isolated
    assert isolated["spawn_runners"] == ["remote"], isolated
    # Each failed because the path is not there, not for some other reason.
    for path in builds["undeclared"].values():
        assert f"cat: {path}: No such file or directory" in isolated["cat_errors"], isolated["cat_errors"]


def test_on_the_isolated_runner_the_declared_read_succeeds(builds):
    assert builds["isolated"]["outputs"]["declared"] == "declared input\n", builds["isolated"]


def test_on_hosttools_the_same_undeclared_reads_succeed(builds):
    hosttools = builds["hosttools"]
    assert hosttools["returncode"] == 0 and hosttools["failed"] == [], hosttools
    assert hosttools["spawn_runners"] == ["remote"], hosttools
    assert hosttools["outputs"] == {"declared": "declared input\n", "undeclared_checkout": "declared input\n",
                                    "undeclared_exec_root": "declared input\n",
                                    "undeclared_var_tmp": "undeclared, in /var/tmp\n"}, hosttools
