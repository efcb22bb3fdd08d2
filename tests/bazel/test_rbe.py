"""--config=rocm_rbe against a real REAPI cluster: BuildGrid + buildbox on loopback.

One `python3 -m sandbox run` starts the cluster (`python3 -m tests.infra.rbe.cluster run`) and,
under it, the module tests.bazel.rbe_driver builds //tests/rocm/hip:libhip_kernels.so three times in a
private copy of the checkout: locally, remotely, and remotely again after
`bazel clean` (from the remote cache). The worker is the isolated one (tests/infra/rbe/cluster.py's
default), so the HIP compiles, the archive and the link find everything they read
among their inputs and the worker image. About a minute when BuildGrid's venv exists.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import run_driver

# slow tier (docs/testing.md): remote execution on the loopback cluster, every action remote, on two shared cores.
pytestmark = [pytest.mark.bazel, pytest.mark.slow]

@pytest.fixture(scope="module")
def builds(sandbox_root) -> dict:
    return run_driver("python3", "-m", "tests.infra.rbe.cluster", "run", "--", "python3", "-m", "tests.bazel.rbe_driver")


def runners(build: dict) -> set[str]:
    return {runner for counts in build["runners"].values() for runner in counts}


def test_every_action_runs_remotely_including_hip_compiles(builds):
    local = builds["local"]
    assert sum(local["runners"]["HipCompile"].values()) == 2 and not any("remote" in r for r in runners(local)), local
    remote = builds["remote"]
    # Per .hip source: a device compile for each of gfx90a and gfx942, their bundle and the host compile.
    assert remote["runners"]["HipDeviceCompile"] == {"remote": 4}, remote
    assert remote["runners"]["HipBundle"] == {"remote": 2} and remote["runners"]["HipCompile"] == {"remote": 2}, remote
    assert runners(remote) == {"remote"}, remote
    assert re.search(r"\d+ remote\.$", remote["processes"]), remote["processes"]


def test_rebuild_after_clean_comes_from_the_remote_cache(builds):
    cached = builds["cached"]
    assert re.search(r"\d+ remote cache hit", cached["processes"]), cached["processes"]
    assert cached["runners"]["HipCompile"] == {"remote cache hit": 2}, cached
    assert cached["runners"]["HipDeviceCompile"] == {"remote cache hit": 4}, cached
    assert runners(cached) == {"remote cache hit"}, cached


def test_remote_library_is_byte_identical_to_the_local_build(builds):
    local = builds["local"]["sha256"]
    assert (builds["remote"]["sha256"], builds["cached"]["sha256"]) == (local, local), builds.get("difference")
