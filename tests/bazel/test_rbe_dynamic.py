"""--config=rocm_rbe_dynamic (Bazel's dynamic execution) on the loopback BuildGrid + buildbox cluster.

tests/bazel/rbe_dynamic_driver.py, inside the sandbox, builds in a copy of the checkout:

    reference  --config=rocm, no cluster: //tests/rocm/hip:libhip_kernels.so, three tests
               (one of them 8 GPU-slot probe shards), and the driver's gated library
    race       --config=rocm_rbe_dynamic --config=ci_single_gpu: the library and the tests
    stop       --config=rocm_rbe_dynamic: a build that the driver holds at a gate while it
               stops the whole cluster, then lets finish

Determinism. Under dynamic execution every action is started on both sides and the
first to finish wins; on one loopback machine which side wins is a matter of timing.
So no assertion here depends on a race's outcome. Where a side matters, the test
takes the other side away, through the execution requirements Bazel's dynamic
strategy itself obeys (DynamicExecutionModule.getExecutionPolicy): `no-local` makes a
spawn remote-only, `no-remote-exec` local-only. In the race phase
--modify_execution_info gives every HipCompile and HipDeviceCompile `no-local` and every test
`no-remote-exec`, so the summary must show both remote and local spawns, and every
test (under ci_single_gpu's GPU-slot wrapper) runs here. Every other action (host
compiles, archives, links) races, and is only checked to have run on one side or the
other. In the stop phase the order is fixed by dependencies, not by time: two
`no-local` genrules run before a `no-remote-exec` gate, which blocks until the driver
has stopped the cluster; everything after it (two HIP compiles, their archive and
link, a genrule reading a remote-only step's output) can then only run here.
--experimental_local_execution_delay (upstream's) does not exist in Bazel 7.7 and its
successor --dynamic_local_execution_delay only starts after remote has won once: a
delay, which would still leave the outcome to timing.

About a minute and a half with BuildGrid's venv in place.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import run_driver, scratch_copy
from tests.infra.bazel_processes import process_counts

# slow tier (docs/testing.md): dynamic execution racing the loopback cluster, on two shared cores.
pytestmark = [pytest.mark.bazel, pytest.mark.slow]

LOCAL = {"linux-sandbox", "processwrapper-sandbox", "local"}
REMOTE = {"remote", "remote cache hit"}
PROBE_SHARDS = 8
SIMULATED_GPUS = {"0", "1"}
# Test executions: two tests plus the eight shards of the GPU-slot probe.
TEST_SPAWNS = 2 + PROBE_SHARDS


@pytest.fixture(scope="module")
def builds(sandbox_root, tmp_path_factory) -> dict:
    with scratch_copy(tmp_path_factory.mktemp("rbe-dynamic") / "checkout") as copy:
        return run_driver("python3", "-m", "tests.bazel.rbe_dynamic_driver", str(copy))


def spawns(build: dict, mnemonic: str | None = None, output: str | None = None) -> list[dict]:
    """The spawns of `mnemonic` (all if None) with an output path containing `output` (any if None)."""
    return [s for s in build["spawns"] if (mnemonic is None or s["mnemonic"] == mnemonic)
            and (output is None or any(output in o for o in s["outputs"]))]


def test_race_summary_shows_remote_and_local_spawns(builds):
    race = builds["race"]
    by_runner = process_counts(race["processes"])
    assert by_runner.get("remote", 0) >= 2, race["processes"]
    assert sum(n for r, n in by_runner.items() if r in LOCAL) >= TEST_SPAWNS, race["processes"]


def test_race_hip_compiles_ran_remotely_and_tests_locally(builds):
    race = builds["race"]
    # Per .hip source its host compile and a device compile per target; `no-local` left them
    # only the remote side (the bundles race like any other action).
    assert [s["runner"] for s in spawns(race, "HipCompile")] == ["remote", "remote"], race["spawns"]
    device = spawns(race, "HipDeviceCompile")
    assert device and {s["runner"] for s in device} == {"remote"}, race["spawns"]
    # TestRunner also names the spawns writing each test's test.xml; all ran here too.
    runner = spawns(race, "TestRunner")
    tests = [s for s in runner if not any(o.endswith("/test.xml") for o in s["outputs"])]
    assert len(tests) == TEST_SPAWNS and {s["runner"] for s in runner} <= LOCAL, runner


def test_race_every_other_action_ran_on_one_side_or_the_other(builds):
    race = builds["race"]
    unknown = [s for s in race["spawns"] if s["runner"] not in LOCAL | REMOTE]
    assert race["spawns"] and not unknown, unknown


def test_race_local_tests_held_a_gpu_slot_each(builds):
    """ci_single_gpu composes: its --run_under=//tools:gpu_slot wraps the locally run tests."""
    probes = builds["race"]["probes"]
    assert sorted(p["shard"] for p in probes) == list(range(PROBE_SHARDS)), probes
    assert all(p["hip"] == "0" and p["rocr"] in SIMULATED_GPUS and p["slot"].startswith(f"gpu{p['rocr']}-")
               for p in probes), probes
    for gpu in SIMULATED_GPUS:
        held = sorted((p["start"], p["end"]) for p in probes if p["rocr"] == gpu)
        for (_, end), (start, _) in zip(held, held[1:]):
            assert start >= end, f"two shards held GPU {gpu} at once: {held}"


def test_race_library_is_byte_identical_to_the_local_build(builds):
    assert builds["race"]["sha256"] == builds["reference"]["sha256"], builds.get("difference")


def test_stop_build_finishes_locally_after_the_cluster_is_stopped(builds):
    stop = builds["stop"]
    assert stop["returncode"] == 0, stop
    # Before the gate: the cluster was there and did the no-local steps.
    assert [s["runner"] for s in spawns(stop, "Genrule", "/remote_")] == ["remote", "remote"], stop["spawns"]
    # After it, only this machine: Bazel's sandbox, or the remote branch's local fallback.
    after = [s for s in stop["spawns"] if any(re.search(r"/(gated|libgated_kernels|after_gate|gate\.txt)", o)
                                              for o in s["outputs"])]
    assert {s["mnemonic"] for s in after} == {"Genrule", "HipDeviceCompile", "HipBundle", "HipCompile", "CppArchive", "CppLink"}, after
    assert len(spawns(stop, "HipCompile", "/gated/")) == 2, stop["spawns"]
    assert {s["runner"] for s in after} <= LOCAL, after


def test_stop_outputs_match_the_local_build(builds):
    stop = builds["stop"]
    assert stop["gated_sha256"] == builds["reference"]["gated_sha256"], builds.get("difference")
    # after_gate copied remote_origin's output, made remotely before the stop: the byte
    # count of the library, i.e. it had been downloaded.
    assert stop["after"].isdigit() and int(stop["after"]) > 0, stop
