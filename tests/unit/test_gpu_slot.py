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

from pytest_rocm import slots
from tests.conftest import CHECKOUT, CPU_NODE as CPU, gpu_node as gpu, kfd_tree, sandbox_environment

pytestmark = pytest.mark.unit

GPU_SLOT = [sys.executable, "-m", "tools.gpu_slot"]


def slot_environment(env: dict[str, str]) -> dict[str, str]:
    """`env` for the wrapper run as a module from any folder: the checkout, then pytest_rocm/ (the
    root of the pytest-rocm distribution, whose slots it takes) on PYTHONPATH."""
    search = os.pathsep.join(filter(None, [str(CHECKOUT / "pytest_rocm"), env.get("PYTHONPATH")]))
    return sandbox_environment(env | {"PYTHONPATH": search})


def no_rocminfo() -> None:
    return None


def test_a_forced_count_wins_and_upstream_variable_is_honoured(tmp_path):
    assert slots.find_gpus({"JAX_ROCM_GPU_COUNT": "4"}, tmp_path, no_rocminfo).ids == ("0", "1", "2", "3")
    eight = kfd_tree(tmp_path / "eight", [CPU] + [gpu()] * 8)
    assert slots.find_gpus({"TF_GPU_COUNT": "2"}, eight, no_rocminfo).ids == ("0", "1")
    with pytest.raises(slots.SlotError, match="not a positive GPU count"):
        slots.find_gpus({"JAX_ROCM_GPU_COUNT": "four"}, tmp_path, no_rocminfo)


def test_a_forced_count_takes_rocr_visible_devices_tokens_as_given(tmp_path):
    gpus = slots.find_gpus({"ROCR_VISIBLE_DEVICES": "4,5,6", "JAX_ROCM_GPU_COUNT": "2"}, tmp_path, no_rocminfo)
    assert gpus.ids == ("4", "5") and "limited to ROCR_VISIBLE_DEVICES=4,5,6" in gpus.source


def test_the_kfd_topology_gives_one_slot_per_gpu_node(tmp_path):
    gpus = slots.find_gpus({}, kfd_tree(tmp_path, [CPU, gpu(), gpu()]), no_rocminfo)
    assert gpus.ids == ("0", "1") and gpus.source == "2 GPU node(s) in /sys/class/kfd/kfd/topology/nodes"


@pytest.mark.parametrize("value, ids", [
    ("1,7,0", ("1",)),  # 7 is out of range: the ROCm runtime ends the list there, so 0 is not visible
    ("1,0", ("1", "0")), ("1,1", ("1",)), ("0x1", ("1",)),  # the index, however the token spells it
    ("GPU-00000000000000CD", ("1",)), ("gpu-00000000000000ab,GPU-00000000000000CD", ("0", "1")),
])
def test_an_inherited_rocr_visible_devices_leaves_the_gpus_the_rocm_runtime_would(tmp_path, value, ids):
    root = kfd_tree(tmp_path, [CPU, gpu(0xAB), gpu(0xCD)])
    gpus = slots.find_gpus({"ROCR_VISIBLE_DEVICES": value}, root, no_rocminfo)
    assert gpus.ids == ids and f"{len(ids)} of them visible with ROCR_VISIBLE_DEVICES={value!r}" in gpus.source


def test_no_gpu_left_by_rocr_visible_devices_says_so(tmp_path):
    with pytest.raises(slots.SlotError, match=r"0 of them visible with ROCR_VISIBLE_DEVICES='7'"):
        slots.find_gpus({"ROCR_VISIBLE_DEVICES": "7"}, kfd_tree(tmp_path, [CPU, gpu()]), no_rocminfo)


def test_rocminfo_is_the_fallback_and_no_gpu_says_how_to_force(tmp_path):
    rocminfo = "Agent 1\n  Device Type:             CPU\nAgent 2\n  Device Type:             GPU\nAgent 3\n  Device Type:             GPU\n"
    assert slots.find_gpus({}, tmp_path, lambda: rocminfo).ids == ("0", "1")
    # rocminfo has applied ROCR_VISIBLE_DEVICES already: its tokens name the GPUs it lists.
    assert slots.find_gpus({"ROCR_VISIBLE_DEVICES": "3,1"}, tmp_path, lambda: rocminfo).ids == ("3", "1")
    cpu_only = kfd_tree(tmp_path / "cpu-only", [CPU])
    assert slots.find_gpus({}, cpu_only, lambda: rocminfo).source == "rocminfo"
    with pytest.raises(slots.SlotError, match="nor in rocminfo.*set JAX_ROCM_GPU_COUNT=N"):
        slots.find_gpus({}, cpu_only, no_rocminfo)


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
    # Nothing of a GPU host's own settings (a suite run under pytest-rocm) reaches the wrapper.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_ROCM_", "ROCR_", "HIP_", "TF_GPU_"))}
    env |= {"JAX_ROCM_GPU_COUNT": str(count), "JAX_ROCM_GPU_LOCK_DIR": str(tmp_path / "locks")}
    # A new session, like a Bazel test: killing the test kills its whole process group.
    return subprocess.Popen([*GPU_SLOT, *extra, *command], env=slot_environment(env), stdout=subprocess.PIPE,
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
    bad = subprocess.run([*GPU_SLOT, "true"], env=slot_environment(env), capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("gpu_slot: JAX_ROCM_GPU_COUNT='0'") and bad.stderr.count("\n") == 1
    missing = wrapper(tmp_path, "/nonexistent/test-binary")
    assert missing.wait(10) == 127 and "cannot run /nonexistent/test-binary" in missing.stderr.read()
