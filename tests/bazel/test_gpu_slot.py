"""--config=ci_single_gpu for real: 8 test shards on 4 simulated GPUs through tools/gpu_slot.py."""

from __future__ import annotations

import json
import uuid

import pytest

pytestmark = pytest.mark.bazel


def peak_overlap(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


def test_eight_shards_on_four_gpus_never_share_one(in_sandbox):
    work = f"/var/tmp/jax-rocm-slot-test-{uuid.uuid4().hex[:8]}"
    script = (
        f"mkdir -p {work}/probe && "
        "bazel test --config=ci_single_gpu --jobs=8 --local_test_jobs=8 --local_cpu_resources=8 "
        f"--test_env=JAX_ROCM_GPU_COUNT=4 --test_env=JAX_ROCM_GPU_LOCK_DIR={work}/locks "
        f"--test_env=JAX_ROCM_SLOT_PROBE_DIR={work}/probe --test_env=JAX_ROCM_SLOT_PROBE_SECONDS=3 "
        "--nocache_test_results //tests/rocm/gpu:slot_probe_test >&2; status=$?; "
        f"cat {work}/probe/*.json; rm -rf {work}; "
        "echo; echo WAITED=$(grep -l 'busy; waiting' bazel-testlogs/tests/rocm/gpu/slot_probe_test/shard_*/test.log | wc -l); "
        "exit $status"
    )
    result = in_sandbox("sh", "-c", script)
    assert "1 test passes" in result.stderr
    probes, waited = result.stdout.rsplit("WAITED=", 1)
    records = [json.loads(line) for line in probes.replace("}{", "}\n{").splitlines() if line.strip()]
    assert sorted(r["shard"] for r in records) == list(range(8)), "every shard ran and reported"
    assert all(r["hip"] == "0" for r in records), "HIP sees its one GPU as device 0"
    assert {r["rocr"] for r in records} == {"0", "1", "2", "3"}
    for gpu in "0123":
        on_gpu = sorted((r["start"], r["end"]) for r in records if r["rocr"] == gpu)
        for (_, end), (start, _) in zip(on_gpu, on_gpu[1:]):
            assert start >= end, f"two shards held GPU {gpu} at once: {on_gpu}"
    # Bazel started all 8 at once: 4 shards found every slot busy and waited, so the
    # wrapper, not Bazel, kept it to 4 at a time.
    assert int(waited) == 4
    assert peak_overlap([(r["start"], r["end"]) for r in records]) == 4
