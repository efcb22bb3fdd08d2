"""What compiling JAX's own files for its ROCm modules costs, against this project's stand-ins.

    python3 -m bench.bench_jax_modules --jax PATH [--targets gfx942] [--skip-build]

Same run, same machine, the same target (//jaxlib/rocm:rocm_extensions) through @jax, each
build cold in an output base of its own (no action cache; the repository cache is shared, so
no download is timed):
  baseline  @jax from examples/jax, this project's stand-in tree laid out like JAX's
  current   @jax from --jax PATH (a JAX checkout or archive; default $JAX_ROCM_TEST_JAX_TREE)
Then the plugin wheel against the published jax_rocm7_plugin 0.10.2 for cp311 (PyPI, 3.8 MB):
ours is dist/'s cp311 wheel (the README's main job writes it), module by module.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from tools.modules import SANDBOX, module_environment

CHECKOUT = Path(__file__).resolve().parent.parent
TARGET = "//jaxlib/rocm:rocm_extensions"


def binds(tree: Path) -> list[str]:
    """The tree's folder bound into the sandbox (sandbox.py leaves out what it mounts anyway)."""
    return ["--bind", str(tree if tree.is_dir() else tree.parent)]


def cold_build(workspace: Path, flags: list[str], output_base: Path, extra: list[str] = ()) -> float:
    """Seconds for a build from an empty output base (the Bazel server start excluded)."""
    script = (f"bazel --output_base={output_base} info >/dev/null 2>&1 && start=$(date +%s.%N) && "
              f"bazel --output_base={output_base} build {' '.join(flags)} {TARGET} >{output_base}.log 2>&1; "
              f"status=$?; end=$(date +%s.%N); bazel --output_base={output_base} shutdown; "
              f"echo \"$status $start $end\"")
    # A cold build: without the shared action cache sandbox gives every run (unless off).
    result = subprocess.run(SANDBOX + ["run", *extra, "--", "sh", "-c", script], cwd=workspace, capture_output=True, text=True,
                            env=module_environment() | {"JAX_ROCM_ACTION_CACHE": "off"})
    status, start, end = result.stdout.split()[-3:]
    if status != "0":
        raise SystemExit(f"bench_jax_modules: the build in {workspace} failed; see {output_base}.log")
    return float(end) - float(start)


def module_sizes(wheel: Path) -> dict[str, int]:
    with zipfile.ZipFile(wheel) as z:
        return {Path(i.filename).name.split(".")[0]: i.file_size for i in z.infolist() if i.filename.endswith(".so")}


def published_wheel(dest: Path) -> Path | None:
    result = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                             "--python-version", "3.11", "--platform", "manylinux_2_27_x86_64", "-d", str(dest),
                             "jax-rocm7-plugin==0.10.2"], capture_output=True, text=True)
    found = sorted(dest.glob("jax_rocm7_plugin-0.10.2-cp311-*.whl"))
    return found[0] if result.returncode == 0 and found else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", default="gfx942", help="amdgpu targets of both builds (default: %(default)s)")
    parser.add_argument("--jax", type=Path, default=os.environ.get("JAX_ROCM_TEST_JAX_TREE"),
                        help="JAX checkout or archive for the current build (default: $JAX_ROCM_TEST_JAX_TREE)")
    parser.add_argument("--skip-build", action="store_true", help="only compare the wheel sizes")
    args = parser.parse_args(argv)
    common = ["--config=rocm", f"--//rocm:amdgpu_targets={args.targets}", f"--override_repository=xla={CHECKOUT}/examples/xla"]

    if not args.skip_build:
        if args.jax is None:
            parser.error("--jax PATH (or JAX_ROCM_TEST_JAX_TREE): the JAX tree to compare with examples/jax")
        jax = Path(args.jax).expanduser().resolve()
        with tempfile.TemporaryDirectory(prefix="bench-jax-modules-", dir="/tmp") as tmp:
            tmp = Path(tmp)
            print(f"baseline: @jax from examples/jax (stand-ins), {TARGET}, cold ...", flush=True)
            base_s = cold_build(CHECKOUT, common + [f"--override_repository=jax={CHECKOUT}/examples/jax"], tmp / "out-baseline")
            print(f"current:  @jax from {jax}, cold ...", flush=True)
            cur_s = cold_build(CHECKOUT, common + [f"--override_repository=jax={jax}"], tmp / "out-current", binds(jax))
        print(f"cold build of {TARGET} for {args.targets}: examples/jax {base_s:.1f} s, JAX's files from {jax} {cur_s:.1f} s "
              f"(ratio {cur_s / base_s:.2f}x)")

    ours = sorted((CHECKOUT / "dist").glob("jax_rocm7_plugin-*-cp311-*.whl"))
    with tempfile.TemporaryDirectory() as tmp:
        theirs = published_wheel(Path(tmp))
        if not ours or theirs is None:
            print("wheel size: skipped (" + ("no dist/ cp311 plugin wheel: run the README's main job" if not ours
                                            else "the published wheel could not be downloaded") + ")")
            return 0
        ours_size, theirs_size = ours[0].stat().st_size, theirs.stat().st_size
        print(f"plugin wheel cp311: ours {ours_size / 1e6:.1f} MB ({ours[0].name}), published {theirs_size / 1e6:.1f} MB "
              f"(ratio {ours_size / theirs_size:.2f}x)")
        mine, published = module_sizes(ours[0]), module_sizes(theirs)
        for module in sorted(set(mine) | set(published)):
            a, b = mine.get(module), published.get(module)
            ratio = f"{a / b:.2f}x" if a and b else "-"
            print(f"  {module:24} ours {a or 0:>11,} B  published {b or 0:>11,} B  {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
