"""pytest-rocm (pytest_rocm/): real pytest-xdist runs on 4 simulated GPUs.

Each run is a child pytest on a small generated suite whose tests record, into files,
which GPU their process saw (ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES), when, and in
which process; the assertions read those records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT

pytestmark = pytest.mark.unit

PLUGIN_ROOT = CHECKOUT / "pytest_rocm"

SUITE = '''
import json, os, time, pytest

OUT = os.environ["RECORD_DIR"]


def record(name, gpus, sleep):
    start = time.time()
    time.sleep(sleep)
    # Whole or not at all: the test polls for these files while this suite still runs.
    path = os.path.join(OUT, name + ".json")
    with open(path + ".part", "w") as f:
        json.dump(dict(name=name, worker=os.environ.get("PYTEST_XDIST_WORKER"), pid=os.getpid(),
                       rocr=os.environ.get("ROCR_VISIBLE_DEVICES"), hip=os.environ.get("HIP_VISIBLE_DEVICES"),
                       fixture=list(gpus), start=start, end=time.time()), f)
    os.replace(path + ".part", path)


@pytest.mark.parametrize("i", range(16))
def test_single(i, rocm_gpus):
    record(f"{os.environ['RUN']}-single-{i}", rocm_gpus, 0.15)


@pytest.mark.multiaccelerator
def test_multi(rocm_gpus):
    record(f"{os.environ['RUN']}-multi", rocm_gpus, 0)
'''

CONFTEST = '''
import json, os
# What a conftest that imports jax would see: the GPU must be chosen before this runs.
path = os.path.join(os.environ["RECORD_DIR"], f"conftest-{os.getpid()}.json")
with open(path + ".part", "w") as f:
    json.dump(dict(rocr=os.environ.get("ROCR_VISIBLE_DEVICES"), hip=os.environ.get("HIP_VISIBLE_DEVICES")), f)
os.replace(path + ".part", path)
'''


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_gpus.py").write_text(SUITE)
    (tmp_path / "suite" / "conftest.py").write_text(CONFTEST)
    (tmp_path / "records").mkdir()
    return tmp_path


def start_pytest(root: Path, *args: str, gpus: int = 4, run: str = "run", **env: str) -> subprocess.Popen:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "ROCR_", "HIP_", "PYTEST_"))}
    environment |= {"JAX_ROCM_GPU_COUNT": str(gpus), "JAX_ROCM_GPU_LOCK_DIR": str(root / "locks"),
                    "RECORD_DIR": str(root / "records"), "RUN": run, "PYTHONPATH": str(PLUGIN_ROOT)} | env
    return subprocess.Popen([sys.executable, "-m", "pytest", "-p", "pytest_rocm.plugin", "-p", "no:cacheprovider",
                             "-q", *args], cwd=root / "suite", env=environment, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def run_pytest(root: Path, *args: str, **kwargs) -> tuple[int, str]:
    process = start_pytest(root, *args, **kwargs)
    output, _ = process.communicate(timeout=120)
    return process.returncode, output


def records(root: Path, prefix: str = "") -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((root / "records").glob(f"{prefix}*.json"))]


def assert_no_gpu_shared_at_once(runs: list[dict]) -> None:
    """No two processes ever held the same GPU during overlapping intervals."""
    for a in runs:
        for b in runs:
            if a["pid"] != b["pid"] and a["rocr"] == b["rocr"]:
                assert a["end"] <= b["start"] or b["end"] <= a["start"], (a, b)


def test_every_xdist_worker_gets_its_own_gpu_and_multi_gpu_tests_wait(suite):
    code, output = run_pytest(suite, "-n", "4", "--rocm-gpus=auto")
    assert code == 0, output
    singles = records(suite, "run-single-")
    assert len(singles) == 16 and not records(suite, "run-multi")  # the multiaccelerator test was deselected
    by_worker = {}
    for r in singles:
        assert r["hip"] == "0" and r["fixture"] == [r["rocr"]], r
        by_worker.setdefault(r["worker"], set()).add(r["rocr"])
    assert all(len(gpus) == 1 for gpus in by_worker.values()), by_worker
    assert sorted(g for gpus in by_worker.values() for g in gpus) == ["0", "1", "2", "3"]
    # conftest.py (where a suite imports jax) already saw the worker's GPU.
    conftests = [json.loads(p.read_text()) for p in (suite / "records").glob("conftest-*.json")]
    assert sorted(c["rocr"] for c in conftests if c["rocr"]) == ["0", "1", "2", "3"]
    assert all(c["hip"] == "0" for c in conftests if c["rocr"])


def test_two_concurrent_runs_never_share_a_gpu(suite):
    # 2 + 2 workers on 3 GPUs: one worker must wait for a slot, and no GPU is ever shared.
    first = start_pytest(suite, "-n", "2", "--rocm-gpus=auto", gpus=3, run="a")
    second = start_pytest(suite, "-n", "2", "--rocm-gpus=auto", gpus=3, run="b")
    outputs = [p.communicate(timeout=180)[0] for p in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, outputs
    runs = records(suite, "a-single-") + records(suite, "b-single-")
    assert len(runs) == 32
    assert {r["rocr"] for r in runs} <= {"0", "1", "2"}
    assert_no_gpu_shared_at_once(runs)


def test_the_serial_pass_sees_every_gpu_and_runs_only_multi_gpu_tests(suite):
    code, output = run_pytest(suite, "--rocm-multi-accelerator")
    assert code == 0, output
    assert not records(suite, "run-single-")
    (multi,) = records(suite, "run-multi")
    assert multi["rocr"] == "0,1,2,3" and multi["hip"] is None and multi["fixture"] == ["0", "1", "2", "3"]


def test_the_serial_pass_waits_for_the_gpus_a_parallel_run_holds(suite):
    parallel = start_pytest(suite, "-n", "2", "--rocm-gpus=auto", gpus=2, run="p")
    deadline = time.monotonic() + 60
    while not records(suite, "p-single-") and time.monotonic() < deadline:
        time.sleep(0.05)  # the parallel workers hold their slots once their first test ran
    code, output = run_pytest(suite, "--rocm-multi-accelerator", gpus=2, run="s")
    assert parallel.wait(timeout=120) == 0 and code == 0, output
    (multi,) = records(suite, "s-multi")
    assert multi["start"] >= max(r["end"] for r in records(suite, "p-single-"))


def test_more_workers_than_gpus_and_parallel_serial_passes_are_refused(suite):
    code, output = run_pytest(suite, "-n", "6", "--rocm-gpus=auto")
    assert code != 0 and "-n 6 starts more workers than there are GPU slots (4" in output and "-n auto" in output
    code, output = run_pytest(suite, "-n", "2", "--rocm-multi-accelerator")
    assert code != 0 and "drop -n" in output
    code, output = run_pytest(suite, "-n", "2", "--rocm-gpus=8")
    assert code != 0 and "asks for 8 GPUs; 4 found" in output
    assert not records(suite, "run-")


def test_n_auto_starts_one_worker_per_gpu_and_upstream_variable_switches_it_on(suite):
    code, output = run_pytest(suite, "-n", "auto", JAX_ENABLE_ROCM_XDIST="3")
    assert code == 0, output
    assert sorted({r["worker"] for r in records(suite)  if "worker" in r}) == ["gw0", "gw1", "gw2"]
    assert sorted({r["rocr"] for r in records(suite, "run-single-")}) == ["0", "1", "2"]


def test_a_crashed_worker_frees_its_gpu_for_its_replacement(suite):
    # One GPU and one worker, so nothing depends on how xdist schedules: the worker holding
    # the only slot dies in the first test collected (test_crash.py sorts before
    # test_gpus.py), and every other test can only run in its replacement, on that slot.
    crash = '''
import json, os
def test_crash():
    with open(os.path.join(os.environ["RECORD_DIR"], "crashed.json"), "w") as f:
        json.dump(dict(worker=os.environ.get("PYTEST_XDIST_WORKER"), rocr=os.environ.get("ROCR_VISIBLE_DEVICES")), f)
    os._exit(3)
'''
    (suite / "suite" / "test_crash.py").write_text(crash)
    code, output = run_pytest(suite, "-n", "1", "--rocm-gpus=auto", gpus=1)
    assert code == 1 and "crashed" in output, output  # the crash is reported, the run goes on
    crashed = json.loads((suite / "records" / "crashed.json").read_text())
    runs = records(suite, "run-single-")
    assert len(runs) == 16, output
    assert crashed["worker"] not in {r["worker"] for r in runs}, "the tests after the crash ran in a replacement"
    assert crashed["rocr"] == "0" and {r["rocr"] for r in runs} == {"0"}
