"""Benchmark: what a HIP edit costs. Full build vs. one-kernel edit vs. no-op, one warm Bazel server.

    python3 -m bench.bench_hip_rebuild [--targets gfx942,gfx1100] [--noop-runs 5]

Runs inside the sandbox (re-executing itself there) on a private copy of the
workspace, so the checkout and its output base are untouched. Builds
//tests/rocm/hip:libhip_kernels.so, and prints, each measured in this run:
  - full build: wall time and the actions executed, by mnemonic (the baseline);
  - after changing one kernel file: actions executed (want that source's alone: a
    HipDeviceCompile per target, its HipBundle and HipCompile) and the time as a ratio of
    the full build;
  - a no-op rebuild with the server warm: mean wall time (want well under 1 s) and
    its ratio to the full build.
Executed actions come from --execution_log_json_file (cache hits excluded).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.infra.copy_workspace import copy_workspace
from tools.modules import SANDBOX, module_environment

CHECKOUT = Path(__file__).resolve().parent.parent

TARGET = "//tests/rocm/hip:libhip_kernels.so"
EDITED = "tests/rocm/hip/scale.hip"


def spawns(log: Path) -> list[dict]:
    """The spawns of a --execution_log_json_file: JSON objects one after another."""
    decoder, text, pos, out = json.JSONDecoder(), log.read_text().strip(), 0, []
    while pos < len(text):
        spawn, pos = decoder.raw_decode(text, pos)
        out.append(spawn)
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def executed_mnemonics(log: Path) -> collections.Counter:
    return collections.Counter(s.get("mnemonic", "?") for s in spawns(log) if not s.get("cacheHit"))


def inside(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-hip-") as tmp:
        workspace = Path(tmp) / "ws"
        copy_workspace(workspace)  # tests/infra/copy_workspace.py
        # --disk_cache=: the full build must be cold and the edit really recompile; the shared
        # action cache (the sandbox's rc sets one) would answer both from an earlier run.
        flags = ["--config=rocm", "--disk_cache=", f"--//rocm:amdgpu_targets={args.targets}"]

        def build(log: Path | None = None) -> float:
            extra = [f"--execution_log_json_file={log}"] if log else []
            start = time.perf_counter()
            subprocess.run(["bazel", "build", *flags, *extra, TARGET], cwd=workspace, check=True, capture_output=True)
            return time.perf_counter() - start

        try:
            subprocess.run(["bazel", "build", "--config=rocm", "--nobuild", TARGET], cwd=workspace, check=True, capture_output=True)
            full_log, edit_log = Path(tmp) / "full.json", Path(tmp) / "edit.json"
            full = build(full_log)
            noop = statistics.mean(build() for _ in range(args.noop_runs))
            with open(workspace / EDITED, "a") as f:
                f.write("\n__global__ void bench_edit_kernel(float* x) { x[0] = 42.0f; }\n")
            edit = build(edit_log)
        finally:
            subprocess.run(["bazel", "shutdown"], cwd=workspace, capture_output=True)
        full_counts, edit_counts = executed_mnemonics(full_log), executed_mnemonics(edit_log)

    def show(counts: collections.Counter) -> str:
        return ", ".join(f"{m} {n}" for m, n in sorted(counts.items()))

    print(f"targets {args.targets}; {TARGET}")
    print(f"full build (baseline):    {full:6.2f} s  executed: {show(full_counts)}")
    print(f"edit one kernel file:     {edit:6.2f} s  executed: {show(edit_counts)}  "
          f"({edit / full:.2f}x of full; HipCompile {edit_counts['HipCompile']} of {full_counts['HipCompile']}, "
          f"HipDeviceCompile {edit_counts['HipDeviceCompile']} of {full_counts['HipDeviceCompile']})")
    print(f"no-op, warm server:       {noop:6.3f} s  mean of {args.noop_runs}  ({noop / full:.3f}x of full; want < 1 s)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", default="gfx942,gfx1100", help="amdgpu targets (default: %(default)s)")
    parser.add_argument("--noop-runs", type=int, default=5)
    args = parser.parse_args()
    if os.environ.get("JAX_ROCM_SANDBOX") == "1":
        return inside(args)
    return subprocess.run([*SANDBOX, "run", "--", "python3", "-m", "bench.bench_hip_rebuild", *sys.argv[1:]],
                          cwd=CHECKOUT, env=module_environment()).returncode


if __name__ == "__main__":
    sys.exit(main())
