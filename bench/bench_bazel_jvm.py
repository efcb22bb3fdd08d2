"""Benchmark: a Bazel command in a new sandbox run, with and without the JVM's optimising JIT tier.

    python3 -m bench.bench_bazel_jvm [--runs 3]

Every `python3 -m sandbox run` starts a new Bazel server (it dies with the run), and the
sandbox's rc starts it with `-XX:TieredStopAtLevel=1` (sandbox/environment.py).
In a private copy of the checkout, after one build that fills its output base, this times
`sandbox.py run -- bazel build` of the stand-in PJRT plugin (answered from the output base
and the shared action cache, as most test commands are) `--runs` times each way,
alternating: the baseline with the full tiered JIT (`-XX:TieredStopAtLevel=4` given after
the rc's), then the rc's setting. Prints each mean and the ratio to the baseline.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.modules import SANDBOX, module_environment

CHECKOUT = Path(__file__).resolve().parent.parent
BUILD = ["build", "--config=rocm", "--config=gfx942", "--override_repository=xla=examples/xla", "//:xla_rocm_plugin"]
WAYS = {"full tiered JIT (baseline)": ["--host_jvm_args=-XX:TieredStopAtLevel=4"], "rc: TieredStopAtLevel=1": []}


def timed_run(workspace: Path, startup: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([*SANDBOX, "run", "--", "bazel", *startup, *BUILD],
                   cwd=workspace, env=module_environment(), check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs each way (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-jvm-") as tmp:
        workspace = Path(tmp) / "checkout"
        subprocess.run([sys.executable, "-m", "tests.infra.copy_workspace", str(workspace)], cwd=CHECKOUT, check=True)
        try:
            timed_run(workspace, [])  # fills the output base: repositories, the plugin's outputs
            times: dict[str, list[float]] = {way: [] for way in WAYS}
            for _ in range(args.runs):
                for way, startup in WAYS.items():
                    times[way].append(timed_run(workspace, startup))
        finally:
            subprocess.run(["rm", "-rf", str(workspace)], check=False)
            subprocess.run([*SANDBOX, "prune"], env=module_environment(), check=False, capture_output=True)  # its output base
    baseline = statistics.mean(times["full tiered JIT (baseline)"])
    print(f"sandbox run -- bazel {' '.join(BUILD)}  ({args.runs} runs each, a new server each run)")
    for way, samples in times.items():
        mean = statistics.mean(samples)
        print(f"  {way:28} {mean:6.2f} s  {mean / baseline:5.2f}x   ({', '.join(f'{s:.2f}' for s in samples)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
