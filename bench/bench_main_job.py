"""Benchmark: where the README main job's Bazel phase goes, and what the shared action cache saves.

    python3 -m bench.bench_main_job [--keep DIR] [--hip-split]

Runs the Bazel build of `ci_build --sources=examples dist_wheels --allow-stand-ins` (the command
line its --dry-run prints) three times, each in a fresh copy of the checkout with its own, empty
output base, with a Bazel profile:
  1. baseline: no action cache, Bazel's action sandboxes on the output base's disk
     (--sandbox_base=, as before the sandbox gave each run a tmpfs for them);
  2. cold: no action cache yet, action sandboxes on the run's tmpfs (what a first build gets);
  3. second checkout: a third copy, with the action cache build 2 filled (what a second clone,
     a test's copy or an emptied output base gets).
The cache is the benchmark's own (--disk_cache=DIR under its temporary folder): the user's
shared cache is neither read nor written. For each build it prints Bazel's elapsed time, its
ratio to the baseline, the critical path, and the spawns executed vs. taken from the cache; for
the baseline and the cold build, each phase's share of the action time (abseil, nanobind,
JAX's host code, HIP device code, Zig's runtime, links ...) and the time before the first
compile (loading, repository rules, analysis).

With --hip-split it runs two cold builds without an action cache instead: one clang run per
HIP source (--//rocm:hip_compile_per_target=false) as the baseline, then one action per GPU
target (the default), and prints the same report: whether the split makes the main job slower.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import gzip
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
MAIN_JOB = ["build/ci_build", "--sources=examples", "dist_wheels", "--allow-stand-ins", "--dry-run"]

# Phases of the action time, by the action's target label (then mnemonic): first match wins.
PHASES = (
    ("Zig's runtime (libc++, libunwind, glibc stubs)", lambda m, label: m == "ZigRuntime"),
    ("HIP device code (JAX's kernels, 9 targets)", lambda m, label: m in ("HipDeviceCompile", "HipBundle", "HipCompile")),
    ("abseil, compiled from source", lambda m, label: "com_google_absl" in label),
    ("nanobind (once per Python)", lambda m, label: "nanobind" in label),
    ("links and RUNPATH stripping", lambda m, label: m in ("CppLink", "StripBuildTreeRunpath", "SolibSymlink")),
    ("JAX's host code (examples/jax)", lambda m, label: "jax//" in label or label.startswith("//jaxlib")),
    ("XLA's code (examples/xla) and its FFI headers", lambda m, label: "xla" in label),
    ("other compiles and archives", lambda m, label: m.startswith("Cpp")),
    ("wheels and small actions", lambda m, label: True),
)


@dataclasses.dataclass
class Build:
    name: str
    elapsed: float
    critical_path: float
    processes: str
    before_first_compile: float
    action_seconds: dict[str, float]  # phase -> summed action durations


def main_job(copy: Path) -> tuple[list[str], list[str]]:
    """(`sandbox.py run ... --`, `bazel build ...`): the main job's build as ci_build --dry-run prints it for `copy`."""
    result = subprocess.run([sys.executable, *MAIN_JOB], cwd=copy, capture_output=True, text=True, check=True)
    line = next(x for x in result.stderr.splitlines() if x.startswith("+ ") and " bazel build " in x)
    argv = shlex.split(line[2:])
    split = argv.index("--") + 1
    return argv[:split], argv[split:]


def copy_checkout(dest: Path) -> Path:
    subprocess.run([sys.executable, "-m", "tests.infra.copy_workspace", str(dest)], cwd=CHECKOUT, check=True)
    return dest


def phase_of(mnemonic: str, label: str) -> str:
    return next(name for name, matches in PHASES if matches(mnemonic, label))


def read_profile(path: Path) -> tuple[dict[str, float], float]:
    """(seconds of action time per phase, seconds from the build's start to its first compile)."""
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    actions = [e for e in events if e.get("cat") == "action processing" and e.get("ph") == "X"]
    seconds: dict[str, float] = collections.Counter()
    for e in actions:
        args = e.get("args", {})
        seconds[phase_of(args.get("mnemonic", ""), args.get("target", ""))] += e["dur"] / 1e6
    compiling = ("CppCompile", "HipDeviceCompile", "HipCompile", "ZigRuntime")
    compiles = [e["ts"] for e in actions if e.get("args", {}).get("mnemonic") in compiling]
    return dict(seconds), (min(compiles) / 1e6 if compiles else 0.0)


def build(name: str, copy: Path, prefix: list[str], bazel: list[str], extra: list[str], work: Path) -> Build:
    profile = work / f"{copy.name}.profile.gz"
    argv = [*bazel[:2], *extra, f"--profile={profile}", "--experimental_profile_include_target_label", *bazel[2:]]
    env = dict(os.environ, JAX_ROCM_ACTION_CACHE="off")  # the benchmark's own cache only (--disk_cache in extra)
    print(f"bench_main_job: {name} ...", file=sys.stderr, flush=True)
    result = subprocess.run([*prefix, *argv], cwd=copy, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise SystemExit(f"bench_main_job: the {name} build failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    elapsed = float(re.search(r"Elapsed time: ([\d.]+)s", result.stderr).group(1))
    critical = float(re.search(r"Critical Path: ([\d.]+)s", result.stderr).group(1))
    processes = re.search(r"INFO: (\d+ processes: [^\n]*)", result.stderr).group(1)
    seconds, first = read_profile(profile)
    return Build(name, elapsed, critical, processes, first, seconds)


def report(builds: list[Build]) -> str:
    base = builds[0]
    lines = ["build                          Bazel's time  ratio   critical path  spawns"]
    for b in builds:
        lines.append(f"{b.name:30s} {b.elapsed:8.1f} s  {b.elapsed / base.elapsed:5.2f}x  {b.critical_path:8.1f} s  {b.processes}")
    for b in builds:
        total = sum(b.action_seconds.values())
        if total < 0.2 * sum(base.action_seconds.values()):
            continue  # taken from the cache: no phases to speak of
        lines.append("")
        lines.append(f"{b.name}: {total:.0f} s of action time on {os.cpu_count()} cores; first compile at {b.before_first_compile:.1f} s "
                     "(loading, repository rules, analysis before it)")
        for phase, secs in sorted(b.action_seconds.items(), key=lambda kv: -kv[1]):
            was = base.action_seconds.get(phase, 0.0)
            versus = f"  ({secs / was:4.2f}x of the baseline's)" if b is not base and was else ""
            lines.append(f"  {phase:48s} {secs:7.1f} s  {100 * secs / total:5.1f} %{versus}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="work in DIR, under /tmp, and keep the copies and profiles (default: a "
                        "temporary folder)")
    parser.add_argument("--hip-split", action="store_true",
                        help="instead, two cold builds without any action cache: one clang run per HIP source "
                             "(--//rocm:hip_compile_per_target=false, the baseline) against one action per GPU target "
                             "(the default): what splitting the HIP compiles costs or saves the main job")
    args = parser.parse_args(argv)
    if args.keep and not args.keep.resolve().is_relative_to("/tmp"):
        parser.error(f"--keep {args.keep}: the builds run in the sandbox, which mounts /tmp but not that folder (Bazel "
                     "would write its profile and cache where this script cannot read them): give a folder under /tmp")
    with tempfile.TemporaryDirectory(prefix="bench-main-", dir="/tmp") as tmp:  # /tmp: the sandbox mounts it
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        no_cache, cache = ["--disk_cache="], [f"--disk_cache={work / 'action-cache'}"]
        runs = ((("one clang run per HIP source", "single", [*no_cache, "--//rocm:hip_compile_per_target=false"]),
                 ("one action per GPU target", "split", no_cache)) if args.hip_split else
                (("baseline", "baseline", ["--sandbox_base=", *no_cache]),
                 ("cold", "cold", cache),
                 ("second checkout, warm cache", "second", cache)))
        builds = []
        for name, folder, extra in runs:
            copy = copy_checkout(work / folder)
            prefix, bazel = main_job(copy)
            builds.append(build(name, copy, prefix, bazel, extra, work))
            # The copies' output bases: 1-2 GB each, of no use once measured.
            subprocess.run([*prefix, "bazel", "clean", "--expunge"], cwd=copy, capture_output=True)
        print(report(builds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
