"""Benchmark: what proving the product costs against making it, tier by tier, first and second run.

    python3 -m bench.bench_test_tiers [--cache DIR] [--tiers unit,bazel,e2e]

In one cache (--cache, default a new folder under /tmp: the sandbox root, its downloads, Bazel's
outputs and the shared action cache all made from nothing), in this order:
  1. the README's main job, cold (`build/ci_build --sources=examples dist_wheels`): the baseline;
  2. the main job again (warm: the action cache and the output base it left);
  3. each tier's first run (`python3 -m tests.run -m TIER --rerun-kept`: every test runs,
     with the caches the runs before it filled), then its second run (`-m TIER`, the results
     the first kept reused, as a contributor's rerun gets them).
Each line gives the wall time and its ratio to the baseline, and the test counts pytest
printed. The bench's cache is its own: yours is neither read nor written. It takes about as
long as the default test run twice; run it on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
MAIN_JOB = [sys.executable, "build/ci_build", "--sources=examples", "dist_wheels"]
TIERS = ("unit", "bazel", "e2e")


def timed(name: str, cmd: list[str], env: dict[str, str], log: Path) -> tuple[str, float, int, str]:
    """(name, seconds, exit status, pytest's last line or '') of one command, its output in `log`."""
    t0 = time.monotonic()
    with log.open("w") as out:
        rc = subprocess.run(cmd, cwd=CHECKOUT, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    seconds = time.monotonic() - t0
    text = log.read_text(errors="replace")
    summary = re.findall(r"^=+ (.*(?:passed|failed|error|deselected).*) =+$", text, re.M)
    return name, seconds, rc, summary[-1] if summary else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--cache", type=Path, help="the XDG_CACHE_HOME to run in (default: a new folder under /tmp)")
    parser.add_argument("--tiers", default=",".join(TIERS), help="comma-separated, of unit, bazel, e2e (default: all)")
    args = parser.parse_args(argv)
    tiers = [t for t in args.tiers.split(",") if t]
    unknown = sorted(set(tiers) - set(TIERS))
    if unknown:
        parser.error(f"--tiers: {', '.join(unknown)} is no tier; choose from {', '.join(TIERS)}")
    cache = args.cache or Path(tempfile.mkdtemp(prefix="bench-test-tiers-", dir="/tmp"))
    cache.mkdir(parents=True, exist_ok=True)
    logs = cache / "bench-logs"
    logs.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ROCM_TEST_RESULTS", "JAX_ROCM_SANDBOX_SESSION")}
    env["XDG_CACHE_HOME"] = str(cache)
    print(f"bench_test_tiers: cache {cache}, logs {logs}", file=sys.stderr, flush=True)
    runs = [timed("main job, cold (baseline)", MAIN_JOB, env, logs / "main-cold.log"),
            timed("main job, warm", MAIN_JOB, env, logs / "main-warm.log")]
    for tier in tiers:
        runs.append(timed(f"{tier} tier, first run", [sys.executable, "-m", "tests.run", "-m", tier, "--rerun-kept"],
                          env, logs / f"{tier}-first.log"))
        runs.append(timed(f"{tier} tier, second run", [sys.executable, "-m", "tests.run", "-m", tier], env,
                          logs / f"{tier}-second.log"))
    baseline = runs[0][1]
    print(f"{'run':<28} {'seconds':>9} {'ratio':>7}  exit  tests")
    for name, seconds, rc, summary in runs:
        print(f"{name:<28} {seconds:9.1f} {seconds / baseline:6.2f}x  {rc:>4}  {summary}")
    return max(rc for _, _, rc, _ in runs)


if __name__ == "__main__":
    sys.exit(main())
