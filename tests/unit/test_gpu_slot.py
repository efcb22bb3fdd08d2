"""GPU slots (pytest_rocm.slots) and tools/gpu_slot.py, the Bazel wrapper over them:
GPU discovery, slot planning, and real processes contending for slots."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, load_module

pytestmark = pytest.mark.unit

GPU_SLOT = CHECKOUT / "tools" / "gpu_slot.py"
gs = load_module("gpu_slot", GPU_SLOT)
slots = load_module("pytest_rocm_slots", CHECKOUT / "pytest_rocm" / "pytest_rocm" / "slots.py")


def no_kfd() -> None:
    return None


def no_rocminfo() -> None:
    return None


def test_a_forced_count_wins_and_upstream_variable_is_honoured():
    assert slots.find_gpus({"JAX_ROCM_GPU_COUNT": "4"}, no_kfd, no_rocminfo).ids == ("0", "1", "2", "3")
    assert slots.find_gpus({"TF_GPU_COUNT": "2"}, lambda: 8, no_rocminfo).ids == ("0", "1")
    with pytest.raises(slots.SlotError, match="not a positive GPU count"):
        slots.find_gpus({"JAX_ROCM_GPU_COUNT": "four"}, no_kfd, no_rocminfo)


def test_an_existing_rocr_visible_devices_limits_the_slots_to_those_gpus():
    gpus = slots.find_gpus({"ROCR_VISIBLE_DEVICES": "4,5,6", "JAX_ROCM_GPU_COUNT": "2"}, no_kfd, no_rocminfo)
    assert gpus.ids == ("4", "5") and "limited to ROCR_VISIBLE_DEVICES=4,5,6" in gpus.source


def test_kfd_topology_counts_gpu_nodes_only(tmp_path):
    for node, simds in (("0", 0), ("1", 304), ("2", 304)):  # node 0 is the CPU
        (tmp_path / node).mkdir()
        (tmp_path / node / "properties").write_text(f"cpu_cores_count 0\nsimd_count {simds}\ngfx_target_version 90402\n")
    assert slots.kfd_gpu_count(tmp_path) == 2
    assert slots.kfd_gpu_count(tmp_path / "absent") is None


def test_rocminfo_is_the_fallback_and_no_gpu_says_how_to_force():
    rocminfo = "Agent 1\n  Device Type:             CPU\nAgent 2\n  Device Type:             GPU\nAgent 3\n  Device Type:             GPU\n"
    assert slots.find_gpus({}, no_kfd, lambda: rocminfo).ids == ("0", "1")
    with pytest.raises(slots.SlotError, match="set JAX_ROCM_GPU_COUNT=N"):
        slots.find_gpus({}, lambda: 0, no_rocminfo)


def test_slots_fill_every_gpu_before_sharing_one():
    planned = slots.plan_slots(slots.Gpus(("0", "1"), "test"), 2)
    assert [(s.gpu, s.share) for s in planned] == [("0", 0), ("1", 0), ("0", 1), ("1", 1)]
    with pytest.raises(slots.SlotError):
        slots.plan_slots(slots.Gpus(("0",), "test"), 0)


def test_child_environment_pairs_rocr_and_hip_like_upstream_ci():
    one = slots.child_environment({"HIP_VISIBLE_DEVICES": "3"}, ("2",), "gpu2-0")
    assert (one["ROCR_VISIBLE_DEVICES"], one["HIP_VISIBLE_DEVICES"], one["JAX_ROCM_GPU_SLOT"]) == ("2", "0", "gpu2-0")
    every = slots.child_environment({"HIP_VISIBLE_DEVICES": "3"}, ("0", "1", "2", "3"), "all")
    assert every["ROCR_VISIBLE_DEVICES"] == "0,1,2,3" and "HIP_VISIBLE_DEVICES" not in every


def wrapper(tmp_path: Path, *command: str, count: int = 1, extra: tuple[str, ...] = ()) -> subprocess.Popen:
    env = dict(os.environ, JAX_ROCM_GPU_COUNT=str(count), JAX_ROCM_GPU_LOCK_DIR=str(tmp_path / "locks"))
    # A new session, like a Bazel test: killing the test kills its whole process group.
    return subprocess.Popen([sys.executable, str(GPU_SLOT), *extra, *command], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def wait_for(path: Path, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def test_a_waiting_test_gets_the_slot_of_a_killed_one(tmp_path):
    held = tmp_path / "held"
    first = wrapper(tmp_path, "sh", "-c", f"echo $ROCR_VISIBLE_DEVICES/$HIP_VISIBLE_DEVICES > {held}; sleep 60")
    assert wait_for(held).strip() == "0/0"
    got = tmp_path / "got"
    second = wrapper(tmp_path, "sh", "-c", f"echo $ROCR_VISIBLE_DEVICES/$HIP_VISIBLE_DEVICES > {got}")
    time.sleep(1.0)
    assert second.poll() is None and not got.exists(), "the second test must wait while the only GPU is held"
    os.killpg(first.pid, signal.SIGKILL)  # the test crashes (or Bazel kills it on timeout)
    first.wait(10)
    assert second.wait(10) == 0
    assert got.read_text().strip() == "0/0"
    assert "all 1 GPU slots in" in second.stderr.read()  # it said why it was waiting


def test_all_takes_every_gpu_and_waits_for_single_gpu_tests(tmp_path):
    held = tmp_path / "held"
    single = wrapper(tmp_path, "sh", "-c", f"echo x > {held}; sleep 60", count=2)
    wait_for(held)
    seen = tmp_path / "seen"
    every = wrapper(tmp_path, "sh", "-c", f"echo $ROCR_VISIBLE_DEVICES/${{HIP_VISIBLE_DEVICES:-unset}} > {seen}", count=2, extra=("--all",))
    time.sleep(1.0)
    assert every.poll() is None, "--all must wait for the GPU a single-GPU test holds"
    os.killpg(single.pid, signal.SIGTERM)
    single.wait(10)
    assert every.wait(10) == 0 and seen.read_text().strip() == "0,1/unset"


def test_exit_status_passes_through_and_errors_are_one_line(tmp_path):
    assert wrapper(tmp_path, "sh", "-c", "exit 7").wait(10) == 7
    env = dict(os.environ, JAX_ROCM_GPU_COUNT="0", JAX_ROCM_GPU_LOCK_DIR=str(tmp_path))
    env.pop("TF_GPU_COUNT", None)
    bad = subprocess.run([sys.executable, str(GPU_SLOT), "true"], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("gpu_slot: JAX_ROCM_GPU_COUNT='0'") and bad.stderr.count("\n") == 1
    missing = wrapper(tmp_path, "/nonexistent/test-binary")
    assert missing.wait(10) == 127 and "cannot run /nonexistent/test-binary" in missing.stderr.read()
