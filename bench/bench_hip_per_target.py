"""Benchmark: HIP device code per target (one action each, then a bundle) against one clang run per source.

    python3 -m bench.bench_hip_per_target [--jax PATH] [--therock TARBALL] [--targets LIST] [--tenth gfx906]

Builds JAX's HIP libraries (//jaxlib/rocm's rocm_library targets: their objects and archives,
nothing else) with the release flags (-c opt, --//rocm:offload_compress) for the nine targets
JAX's wheels ship, each build cold in an output base of its own (no action cache), in the same
run, with a Bazel profile:
  baseline    --//rocm:hip_compile_per_target=false: one clang run per source, every target inside
  per target  the default: a device action per target, the bundle, the host compile
Then, in the per-target build's output base (warm), the same build with one target more
(--tenth): the actions that run, by mnemonic, and which targets the device actions were for.
It prints Bazel's elapsed time, the critical path, the longest HIP action (and its source), the
CPU time of the build's actions (what the Bazel server's reaped children used: user and
system, from /proc), each as a ratio to the baseline, and whether both builds made the same
objects, byte for byte.

JAX's files come from --jax (a JAX checkout or archive; default $JAX_ROCM_TEST_JAX_TREE), else
from examples/jax, this project's stand-ins (say so in any number you quote). The toolkit is the
sandbox's (Debian's ROCm), or with --therock a TheRock release tarball (THEROCK_URL=file://...:
the toolkit inside the actions' inputs). It runs inside the sandbox (re-executing itself there).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.bench_hip_rebuild import spawns
from tools.modules import SANDBOX, module_environment

CHECKOUT = Path(__file__).resolve().parent.parent
LIBRARIES = ("//jaxlib/rocm:hip_make_batch_pointers", "//jaxlib/rocm:hip_householder_kernels",
             "//jaxlib/rocm:hip_prng_kernels_impl", "//jaxlib/rocm:hip_linalg_kernels_impl")
HIP_MNEMONICS = ("HipCompile", "HipDeviceCompile", "HipBundle")


@dataclasses.dataclass
class Build:
    name: str
    elapsed: float
    critical_path: float
    longest: float
    longest_what: str
    cpu_seconds: float
    objects: dict[str, str]  # object path -> sha256


def hip_actions(profile: Path) -> list[tuple[float, str]]:
    """(seconds, what) of every HIP action in a Bazel JSON profile."""
    with gzip.open(profile) as f:
        events = json.load(f)["traceEvents"]
    return [(e["dur"] / 1e6, e.get("name", "?")) for e in events
            if e.get("cat") == "action processing" and e.get("ph") == "X" and e.get("args", {}).get("mnemonic") in HIP_MNEMONICS]


def bazel(output_base: Path, *args: str) -> str:
    result = subprocess.run(["bazel", f"--output_base={output_base}", *args], cwd=CHECKOUT, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"bench_hip_per_target: bazel {' '.join(args[:1])} failed:\n{result.stderr[-4000:]}")
    return result.stderr


def objects(output_base: Path, flags: list[str]) -> dict[str, str]:
    bin_dir = Path(subprocess.run(["bazel", f"--output_base={output_base}", "info", *flags, "bazel-bin"], cwd=CHECKOUT,
                                  capture_output=True, text=True, check=True).stdout.strip())
    return {str(p.relative_to(bin_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for label in LIBRARIES for p in sorted(bin_dir.glob(f"jaxlib/rocm/_objs/{label.split(':')[1]}/**/*.pic.o"))}


def configured_targets(output_base: Path) -> str:
    """The targets @local_config_rocm chose (the finder's default: JAX's wheels' list)."""
    config = next((output_base / "external").glob("*local_config_rocm/rocm_config.json"))
    return ",".join(json.loads(config.read_text())["amdgpu_targets"])


def children_cpu_seconds(output_base: Path) -> float:
    """User and system time of the Bazel server's reaped children (every action's processes,
    through the process wrapper that waits for them): /proc/PID/stat's cutime and cstime."""
    pid = subprocess.run(["bazel", f"--output_base={output_base}", "info", "server_pid"], cwd=CHECKOUT,
                         capture_output=True, text=True, check=True).stdout.strip()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")  # fields 16 and 17 of stat(5)


def build(name: str, output_base: Path, flags: list[str], work: Path) -> Build:
    profile = work / f"{name.replace(' ', '_')}.profile.gz"
    print(f"bench_hip_per_target: {name}, cold ...", file=sys.stderr, flush=True)
    # Repository rules and analysis first, untimed: the two builds then differ by their actions alone.
    bazel(output_base, "build", *flags, "--nobuild", *LIBRARIES)
    cpu_before = children_cpu_seconds(output_base)
    stderr = bazel(output_base, "build", *flags, f"--profile={profile}", *LIBRARIES)
    cpu = children_cpu_seconds(output_base) - cpu_before
    longest, what = max(hip_actions(profile))
    return Build(name, float(re.search(r"Elapsed time: ([\d.]+)s", stderr).group(1)),
                 float(re.search(r"Critical Path: ([\d.]+)s", stderr).group(1)), longest, what, cpu, objects(output_base, flags))


def inside(args: argparse.Namespace) -> int:
    jax = Path(args.jax).resolve() if args.jax else CHECKOUT / "examples" / "jax"
    toolkit = []
    if args.therock:
        tarball = Path(args.therock).resolve()
        toolkit = [f"--repo_env=THEROCK_URL=file://{tarball}",
                   f"--repo_env=THEROCK_SHA256={hashlib.sha256(tarball.read_bytes()).hexdigest()}"]
    # No bazel-* links: the checkout's own keep pointing into its own output base.
    common = [*toolkit, "--config=rocm", "-c", "opt", "--//rocm:offload_compress", "--disk_cache=",
              "--experimental_convenience_symlinks=ignore",
              "--experimental_profile_include_target_label",
              f"--override_repository=xla={CHECKOUT}/examples/xla", f"--override_repository=jax={jax}"]
    with tempfile.TemporaryDirectory(prefix="bench-hip-per-target-", dir="/tmp") as tmp:
        work = Path(tmp)
        try:
            if not args.targets:
                bazel(work / "out-whole", "build", *common, "--nobuild", *LIBRARIES)  # configures @local_config_rocm
            targets = args.targets or configured_targets(work / "out-whole")
            base = build("baseline", work / "out-whole", [*common, f"--//rocm:amdgpu_targets={targets}",
                                                           "--//rocm:hip_compile_per_target=false"], work)
            split = build("per target", work / "out-split", [*common, f"--//rocm:amdgpu_targets={targets}"], work)
            log = work / "tenth.json"
            print(f"bench_hip_per_target: + {args.tenth}, warm ...", file=sys.stderr, flush=True)
            bazel(work / "out-split", "build", *common, f"--//rocm:amdgpu_targets={targets},{args.tenth}",
                  f"--execution_log_json_file={log}", *LIBRARIES)
            ran = [spawn for spawn in spawns(log) if not spawn.get("cacheHit")]
        finally:
            for out in ("out-whole", "out-split"):
                subprocess.run(["bazel", f"--output_base={work / out}", "shutdown"], cwd=CHECKOUT, capture_output=True)
    print(f"toolkit: {args.therock or 'the sandbox ROCm (Debian)'}")
    print(f"JAX's HIP libraries from {jax}{' (stand-ins)' if not args.jax else ''}; {len(targets.split(','))} targets: {targets}; "
          f"-c opt, compressed; {os.cpu_count()} cores")
    print("build        Bazel's time  ratio   critical path  ratio   longest HIP action  ratio   actions' CPU  ratio")
    for b in (base, split):
        print(f"{b.name:12s} {b.elapsed:8.1f} s  {b.elapsed / base.elapsed:5.2f}x  {b.critical_path:9.1f} s  "
              f"{b.critical_path / base.critical_path:5.2f}x  {b.longest:12.1f} s  {b.longest / base.longest:5.2f}x  "
              f"{b.cpu_seconds:8.1f} s  {b.cpu_seconds / base.cpu_seconds:5.2f}x")
    for b in (base, split):
        print(f"  longest in {b.name}: {b.longest_what}")
    same = base.objects == split.objects and bool(base.objects)
    print(f"objects: {len(split.objects)}, {'byte-identical' if same else 'DIFFERENT'} between the two builds")
    counts = collections.Counter(s.get("mnemonic", "?") for s in ran)
    device = sorted(o["path"].rsplit("/", 1)[1] for s in ran if s.get("mnemonic") == "HipDeviceCompile" for o in s["actualOutputs"])
    only_new = all(f".{args.tenth.replace(':', '_')}.hsaco" in d for d in device)
    print(f"+ {args.tenth} on the warm per-target build: {sum(counts.values())} actions ran: "
          + ", ".join(f"{m} {n}" for m, n in sorted(counts.items()))
          + f"; device actions all for {args.tenth}: {'yes' if only_new else 'NO: ' + ' '.join(device)}")
    return 0 if same and only_new else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jax", default=os.environ.get("JAX_ROCM_TEST_JAX_TREE"),
                        help="JAX checkout or archive (default: $JAX_ROCM_TEST_JAX_TREE; unset: examples/jax, the stand-ins)")
    parser.add_argument("--therock", help="a TheRock release tarball as the toolkit (default: the sandbox's ROCm)")
    parser.add_argument("--targets", default="", help="amdgpu targets of both builds (default: the finder's, JAX's wheels' nine)")
    parser.add_argument("--tenth", default="gfx906", help="the target added to the warm build (default: %(default)s)")
    args = parser.parse_args()
    if os.environ.get("JAX_ROCM_SANDBOX") == "1":
        return inside(args)
    binds = [a for path in (args.jax, args.therock) if path for a in ("--bind", str(Path(path).resolve().parent))]
    return subprocess.run([*SANDBOX, "run", *binds, "--", "python3", "-m", "bench.bench_hip_per_target",
                           *sys.argv[1:]], cwd=CHECKOUT, env=module_environment()).returncode


if __name__ == "__main__":
    sys.exit(main())
