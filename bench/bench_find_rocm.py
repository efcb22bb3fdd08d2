"""Benchmark: ROCm finder run time, and how often Bazel re-runs rocm_configure.

    python3 -m bench.bench_find_rocm [--runs 10]

Runs inside the sandbox against its real ROCm (/usr). Prints:
  - the finder's mean wall time over --runs runs, and its ratio to a bare
    `python3 -c pass` measured in the same run (the interpreter's own floor);
  - the number of times @local_config_rocm was re-generated across two identical
    builds (want 0) and after changing TF_ROCM_AMDGPU_TARGETS (want 1), read
    from the repository's marker file.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from tools.modules import SANDBOX, module_environment

CHECKOUT = Path(__file__).resolve().parent.parent

INNER = r"""
import json, os, statistics, subprocess, sys, time
runs = int(sys.argv[1])

def timed(argv):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter(); subprocess.run(argv, check=True, capture_output=True); times.append(time.perf_counter() - t0)
    return statistics.mean(times)

floor = timed([sys.executable, "-c", "pass"])
finder = timed([sys.executable, "third_party/gpus/find_rocm_config.py", "--rocm-path", "/usr"])
print(f"finder:  {finder * 1000:.0f} ms mean over {runs} runs; python3 -c pass: {floor * 1000:.0f} ms; ratio {finder / floor:.1f}x")

def bazel(*args):
    subprocess.run(["bazel", *args], check=True, capture_output=True)

base = subprocess.run(["bazel", "info", "output_base"], check=True, capture_output=True, text=True).stdout.strip()
mapping = subprocess.run(["bazel", "mod", "dump_repo_mapping", ""], check=True, capture_output=True, text=True).stdout
marker = os.path.join(base, "external", "@" + json.loads(mapping)["local_config_rocm"] + ".marker")  # Bazel's spelling
def stamp():
    return os.stat(marker).st_mtime_ns if os.path.exists(marker) else None

bazel("build", "--config=rocm", "@local_config_rocm//:hip")
first = stamp()
bazel("build", "--config=rocm", "@local_config_rocm//:hip")
second = stamp()
bazel("build", "--config=rocm", "--repo_env=TF_ROCM_AMDGPU_TARGETS=gfx942", "@local_config_rocm//:hip")
third = stamp()
print(f"re-runs across two identical builds: {int(first != second)} (want 0)")
print(f"re-runs after changing TF_ROCM_AMDGPU_TARGETS: {int(second != third)} (want 1)")
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=10)
    args = p.parse_args()
    return subprocess.run([*SANDBOX, "run", "--", "python3", "-c", INNER, str(args.runs)],
                          cwd=CHECKOUT, env=module_environment()).returncode


if __name__ == "__main__":
    sys.exit(main())
