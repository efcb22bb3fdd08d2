"""One shard of the GPU-slot probe: records which GPU the wrapper gave it, and when.

Run by tests/bazel/test_gpu_slot.py as 8 shards under --config=ci_single_gpu with
JAX_ROCM_GPU_COUNT=4; each shard holds its slot for a while so that shards overlap,
and writes one JSON record into $JAX_ROCM_SLOT_PROBE_DIR for the outer test to check.
"""

import json
import os
import sys
import time
from pathlib import Path

out = os.environ.get("JAX_ROCM_SLOT_PROBE_DIR")
if not out or "JAX_ROCM_GPU_SLOT" not in os.environ:
    sys.exit("run me through tools/gpu_slot.py (--config=ci_single_gpu) with --test_env=JAX_ROCM_SLOT_PROBE_DIR=DIR")
shard = os.environ.get("TEST_SHARD_INDEX", "0")
Path(os.environ["TEST_SHARD_STATUS_FILE"]).touch()  # this test understands sharding
start = time.time()
time.sleep(float(os.environ.get("JAX_ROCM_SLOT_PROBE_SECONDS", "2")))
record = {
    "shard": int(shard),
    "rocr": os.environ.get("ROCR_VISIBLE_DEVICES"),
    "hip": os.environ.get("HIP_VISIBLE_DEVICES"),
    "slot": os.environ["JAX_ROCM_GPU_SLOT"],
    "start": start,
    "end": time.time(),
    "pid": os.getpid(),
}
Path(out, f"shard-{shard}.json").write_text(json.dumps(record))
