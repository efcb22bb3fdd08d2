"""Benchmark: the plugin wheel built locally, on a cold remote cluster, and from its warm cache.

    python3 -m bench.bench_rbe [--runner=isolated|hosttools] [--toolchain=manylinux_2_28|sandbox]
                               [--targets=gfx90a,gfx942]

Copies the workspace (on the host: git in the sandbox cannot read a worktree), then runs
inside the sandbox on that copy with a loopback cluster of tests/infra/rbe/cluster.py. Builds //:jax_rocm_plugin_wheel_cp314
(--config=rocm_release, as ci_build dist_wheels does; two amdgpu targets unless
--targets says otherwise, to keep the three builds within minutes on two cores) three times, each after
`bazel clean` (external repositories stay: every build analyses and runs all actions),
and prints, each measured in this run:
  - cold local: wall time and Bazel's process summary (the baseline);
  - cold remote (--config=rocm_rbe on the cluster's empty cache): time, summary, ratio;
  - warm cache (the same again: every action a remote cache hit): time, hit ratio, ratio;
and whether the three wheels are byte-identical.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.modules import SANDBOX, module_environment

CHECKOUT = Path(__file__).resolve().parent.parent
TARGET = "//:jax_rocm_plugin_wheel_cp314"
OUTPUT_DIR = "bazel-bin/jax_rocm_plugin_wheel_cp314"
TOOLCHAIN_FLAGS = {"manylinux_2_28": ["--config=manylinux_2_28"], "sandbox": []}


def summary(stderr: str) -> str:
    found = re.findall(r"^INFO: (\d+ process.*)$", stderr, re.MULTILINE)
    return found[-1] if found else "(no summary)"


def hit_ratio(line: str) -> str:
    _, _, parts = line.rstrip(".").partition(": ")
    counts = {name: int(n) for n, name in (p.split(" ", 1) for p in parts.split(", ") if p)}
    executed = sum(n for runner, n in counts.items() if runner != "internal")
    return f"{counts.get('remote cache hit', 0)}/{executed}" if executed else "0/0"


def wheel_digest(workspace: Path) -> str:
    wheels = sorted((workspace / OUTPUT_DIR).glob("*.whl"))
    return hashlib.sha256(wheels[0].read_bytes()).hexdigest()[:16] if wheels else "(no wheel)"


def bazel(workspace: Path, *args: str) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(["bazel", *args], cwd=workspace, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.stderr.write(result.stderr[-6000:])
        raise SystemExit(f"bench_rbe: `bazel {' '.join(args)}` exited {result.returncode} (its output is above)")
    return elapsed, result.stderr


def inside(args: argparse.Namespace) -> int:
    from tests.infra.rbe.cluster import Cluster  # importable here: run as a module from the checkout

    workspace = Path(args.workspace)
    # The offline stand-ins, as ci_build --sources=examples gives them (tools/bazel maps the names).
    sources = [f"--override_repository={name}={workspace}/examples/{name}" for name in ("jax", "xla")]
    # --disk_cache=: cold builds, and remote spawns or remote cache hits only; the shared action
    # cache (the sandbox's rc sets one) would answer from an earlier run or from the local build.
    flags = ["--config=rocm", "--config=rocm_release", "--disk_cache=", *TOOLCHAIN_FLAGS[args.toolchain],
             f"--//rocm:amdgpu_targets={args.targets}", *sources]
    rows = []

    def report(name: str, seconds: float, line: str, digest: str) -> None:
        # Each row as soon as it is measured: a remote build can take many minutes.
        rows.append((name, seconds, line, digest))
        extra = f"  remote cache hits {hit_ratio(line)}" if name == "warm cache" else ""
        print(f"{name + (' (baseline)' if name == 'cold local' else ''):22s} {seconds:7.1f} s  "
              f"{seconds / rows[0][1]:5.2f}x  wheel {digest}  [{line}]{extra}", flush=True)

    print(f"{TARGET}, amdgpu targets {args.targets}, toolchain {args.toolchain}, runner {args.runner}, "
          f"{os.cpu_count()} CPUs, worker jobs = CPUs", flush=True)
    try:
        bazel(workspace, "build", *flags, "--nobuild", TARGET)  # fetch and analyse once, outside the timings
        bazel(workspace, "clean")
        seconds, stderr = bazel(workspace, "build", *flags, TARGET)
        report("cold local", seconds, summary(stderr), wheel_digest(workspace))
        with Cluster(jobs=os.cpu_count() or 1, runner=args.runner) as cluster:
            remote = [*flags, "--config=rocm_rbe", f"--remote_executor={cluster.env['JAX_ROCM_RBE_EXECUTOR']}",
                      f"--remote_instance_name={cluster.env['JAX_ROCM_RBE_INSTANCE']}"]
            for name in ("cold remote", "warm cache"):
                bazel(workspace, "clean")
                seconds, stderr = bazel(workspace, "build", *remote, TARGET)
                report(name, seconds, summary(stderr), wheel_digest(workspace))
    finally:
        subprocess.run(["bazel", "clean", "--expunge"], cwd=workspace, capture_output=True)
    print("wheels byte-identical: " + ("yes" if len({r[3] for r in rows}) == 1 else "NO"))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runner", choices=("isolated", "hosttools"), default="isolated")
    parser.add_argument("--toolchain", choices=tuple(TOOLCHAIN_FLAGS), default="manylinux_2_28",
                        help="manylinux_2_28: Zig, ci_build's default; sandbox: the sandbox's gcc")
    parser.add_argument("--targets", default="gfx90a,gfx942", help="amdgpu targets (default: %(default)s)")
    parser.add_argument("--workspace", help=argparse.SUPPRESS)  # the copy, given to the run inside
    args = parser.parse_args()
    if args.workspace:
        return inside(args)
    tmp = Path(tempfile.mkdtemp(prefix="bench-rbe-", dir="/tmp"))  # /tmp: mounted in the sandbox
    try:
        workspace = tmp / "ws"
        subprocess.run([sys.executable, "-m", "tests.infra.copy_workspace", str(workspace)], cwd=CHECKOUT, check=True)
        return subprocess.run([*SANDBOX, "run", "--", "python3", "-m", "bench.bench_rbe", *sys.argv[1:],
                               f"--workspace={workspace}"], cwd=CHECKOUT, env=module_environment()).returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
