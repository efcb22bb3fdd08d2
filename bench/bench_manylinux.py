"""Benchmark: the wheels built with the manylinux_2_28 toolchain (Zig's clang, glibc 2.28,
libc++) against the sandbox's own compiler (Debian sid's gcc, glibc 2.43, libstdc++), in one run.

    python3 -m bench.bench_manylinux [--amdgpu-targets gfx942] [--python-versions 3.11] [--jax PATH]

Each toolchain builds the README's main command (`ci_build --sources=examples dist_wheels`:
the examples/xla and examples/jax stand-ins; with --jax PATH or $JAX_ROCM_TEST_JAX_TREE, JAX's
modules from that JAX checkout or archive instead) in a fresh copy of this checkout, so each
has a private, cold Bazel output base (the repository cache and distdir are shared:
no download is timed). The sandbox's toolchain is the baseline. Printed per toolchain:
wall time of dist_wheels (Bazel build, audit, re-tag), the wheels' sizes, and the
size of each native library inside them, with ratios to the baseline. Zig's runtime
(libc++, libunwind, glibc stubs) is an action of the build (@zig_sdk//:runtime), so it is
cold too. Single runs: one sample per toolchain, no statistics.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from tests.infra.copy_workspace import copy_workspace
from tools.modules import SANDBOX, module_environment

CHECKOUT = Path(__file__).resolve().parent.parent

TOOLCHAINS = ("sandbox", "manylinux_2_28")  # the first is the baseline


def dist_wheels(checkout: Path, toolchain: str, targets: str, pythons: str, output: Path, jax: Path | None) -> float:
    cmd = [sys.executable, "build/ci_build", "--sources=examples", *([f"--jax-source-dir={jax}"] if jax else []),
           "dist_wheels", "--allow-stand-ins", f"--host-toolchain={toolchain}", f"--amdgpu-targets={targets}",
           f"--python-versions={pythons}", f"--output-dir={output}"]
    start = time.perf_counter()
    # A cold build: without the shared action cache sandbox gives every run (the other
    # toolchain's or an earlier run's results would be taken instead of built).
    result = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True, env=dict(os.environ, JAX_ROCM_ACTION_CACHE="off"))
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"bench_manylinux: dist_wheels with --host-toolchain={toolchain} failed (exit {result.returncode}):\n"
                         + (result.stdout + result.stderr)[-3000:])
    return elapsed


def shutdown(checkout: Path) -> None:
    """Stops the copy's Bazel server (its output base stays, the next copy gets another)."""
    subprocess.run([*SANDBOX, "run", "--", "bazel", "shutdown"], cwd=checkout, env=module_environment(),
                   capture_output=True)


def native_sizes(wheels: list[Path]) -> dict[str, int]:
    """Uncompressed size of every shared library in the wheels, by its path (platform tag dropped)."""
    sizes = {}
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            for info in z.infolist():
                if info.filename.endswith(".so"):
                    sizes[info.filename] = info.file_size
    return sizes


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--amdgpu-targets", default="gfx942", help="default: %(default)s (one target keeps a cold build short)")
    parser.add_argument("--python-versions", default="%d.%d" % sys.version_info[:2], help="default: this Python's, %(default)s")
    parser.add_argument("--jax", type=Path, default=os.environ.get("JAX_ROCM_TEST_JAX_TREE") or None,
                        help="a JAX checkout or archive for JAX's modules (default: $JAX_ROCM_TEST_JAX_TREE, else "
                             "examples/jax, as the README's main command)")
    args = parser.parse_args(argv)
    jax = args.jax.resolve() if args.jax else None
    if jax and not jax.exists():
        print(f"bench_manylinux: --jax {jax} does not exist", file=sys.stderr)
        return 1
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-manylinux-") as tmp:  # /tmp: visible in the sandbox
        for toolchain in TOOLCHAINS:
            checkout = copy_workspace(Path(tmp) / toolchain / "checkout")
            output = Path(tmp) / toolchain / "dist"
            print(f"bench_manylinux: {toolchain}: cold dist_wheels ...", file=sys.stderr, flush=True)
            try:
                seconds = dist_wheels(checkout, toolchain, args.amdgpu_targets, args.python_versions, output, jax)
            finally:
                shutdown(checkout)
            wheels = sorted(output.glob("*.whl"))
            results[toolchain] = {"seconds": seconds, "wheels": {w.name: w.stat().st_size for w in wheels},
                                  "native": native_sizes(wheels)}
    base = results[TOOLCHAINS[0]]
    print(f"amdgpu targets {args.amdgpu_targets}, Python {args.python_versions}, cold Bazel output base each "
          f"(Zig's runtime included); baseline: {TOOLCHAINS[0]}")
    print(f"{'':34}{'seconds / bytes':>16}{'ratio':>9}")
    for toolchain in TOOLCHAINS:
        r = results[toolchain]
        print(f"{toolchain}:")
        print(f"  {'dist_wheels wall time':32}{r['seconds']:16.1f}{ratio(r['seconds'], base['seconds']):>9}")
        for name, size in sorted(r["wheels"].items()):
            kind = name.split("-")[0] + " wheel (" + name.rsplit("-", 1)[1].removesuffix(".whl") + ")"
            base_size = next((s for n, s in base["wheels"].items() if n.split("-")[0] == name.split("-")[0]
                              and n.split("-")[2] == name.split("-")[2]), 0)
            print(f"  {kind[:32]:32}{size:16,}{ratio(size, base_size):>9}")
        for path, size in sorted(r["native"].items()):
            print(f"  {path.rsplit('/', 1)[-1][:32]:32}{size:16,}{ratio(size, base['native'].get(path, 0)):>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
