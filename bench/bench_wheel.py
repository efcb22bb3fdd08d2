"""Benchmark: packing a large shared library into a wheel, upstream's way vs. wheel/private/wheel_builder.py.

    python3 -m bench.bench_wheel [--size-mb 500] [--workers 1,2,16] [--baseline-python PY] [--compresslevel 6] [--keep]

Generates one library of --size-mb MB (the size of the PJRT plugin) plus a small
__init__.py and packs them into a wheel two ways, in the same run:
  - baseline: what JAX's upstream build does: a setup.py project with the .so as
    package_data (a BinaryDistribution, so a platform wheel), built with
    `PY -m build --wheel --no-isolation`, i.e. setuptools' bdist_wheel, where PY is
    --baseline-python (default: this interpreter; it needs build, setuptools and
    bdist_wheel: `pip install build setuptools wheel`);
  - ours: wheel/private/wheel_builder.py --spec on the equivalent spec (the same two files,
    the same places in the wheel, the same entry point), at --compresslevel, once per
    count in --workers (default: one run with its own default, every core), run by this
    interpreter, which needs packaging for it (build needs it too).
Each way runs as its own child process; measured per way:
  - wall seconds, spawn to exit, and CPU seconds (user + system);
  - peak RSS: ru_maxrss of os.wait4 on that child, which on Linux is the largest
    of the child and every descendant it waited for (build's backend subprocess),
    and never below this script's own RSS when it started the child (Linux counts
    the forking process's in; this script stays at about 20 MB);
  - the wheel's size.
Then prints the ratios (baseline time / ours, size ours / baseline, RSS baseline /
ours), one line per worker count, and checks every wheel holds the generated library
byte for byte (sha256) and that ours are the same bytes whatever the worker count,
exiting 1 otherwise.

The library is realistic in compressibility: the real ELF shared objects under
/usr/lib/x86_64-linux-gnu (regular files, sorted by path) concatenated, repeated
until the size is reached. It is generated once per work dir, under its cache/,
and reused by a later run given the same --work-dir. The baseline's zip level is
zlib's default (6), which bdist_wheel has no option for; --compresslevel only
reaches wheel_builder.py (its default is also 6). Other processes on the machine
(a Bazel build) skew wall time, so compare ratios from one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
WHEEL_BUILDER = CHECKOUT / "wheel" / "private" / "wheel_builder.py"
LIB_DIR = Path("/usr/lib/x86_64-linux-gnu")
CHUNK = 1 << 20
MB = 1_000_000
PACKAGE = "jax_plugins/xla_rocm7"
LIBRARY = "xla_rocm_plugin.so"
INIT_PY = '"""jax_plugins.xla_rocm7: the PJRT plugin (benchmark stand-in)."""\n\ndef initialize():\n    pass\n'
SETUP_PY = '''\
from setuptools import setup
from setuptools.dist import Distribution


class BinaryDistribution(Distribution):
    """A platform wheel, as upstream's jax_plugins/rocm/plugin_setup.py makes."""

    def has_ext_modules(self):
        return True


setup(
    name="jax_rocm7_pjrt",
    version="0.7.1",
    description="JAX XLA PJRT Plugin for AMD GPUs (benchmark)",
    packages=["jax_plugins.xla_rocm7"],
    package_data={"jax_plugins.xla_rocm7": ["*.so"]},
    python_requires=">=3.11",
    zip_safe=False,
    distclass=BinaryDistribution,
    entry_points={"jax_plugins": ["xla_rocm7 = jax_plugins.xla_rocm7"]},
)
'''
# Run with the baseline interpreter: the versions of what the baseline uses, or what is missing.
PROBE = '''\
import importlib, importlib.metadata, json
found, missing = {}, []
for dist, module in (("build", "build"), ("setuptools", "setuptools")):
    try:
        importlib.import_module(module)
        found[dist] = importlib.metadata.version(dist)
    except Exception:
        missing.append(dist)
try:
    importlib.import_module("setuptools.command.bdist_wheel")
    found["bdist_wheel"] = "setuptools"
except Exception:
    try:
        importlib.import_module("wheel.bdist_wheel")
        found["bdist_wheel"] = "wheel"
    except Exception:
        missing.append("wheel")
try:
    found["wheel"] = importlib.metadata.version("wheel")
except Exception:
    pass
print(json.dumps({"found": found, "missing": missing}))
'''


def is_elf_shared_object(path: Path) -> bool:
    """A regular file starting with the ELF magic and of type ET_DYN (little-endian e_type 3)."""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            header = f.read(18)
    except OSError:
        return False
    return len(header) == 18 and header[:4] == b"\x7fELF" and header[16:18] == b"\x03\x00"


def elf_sources(lib_dir: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(lib_dir):
        dirs.sort()
        for name in sorted(files):
            if ".so" in name and is_elf_shared_object(Path(root) / name):
                found.append(Path(root) / name)
    return sorted(found)


def generate_library(cache: Path, size: int, lib_dir: Path) -> tuple[Path, str, str]:
    """(path, sha256, how it was made) of the size-byte library, made once per cache dir."""
    path = cache / f"lib-{size}.so"
    stamp = path.with_suffix(".json")
    if path.is_file() and stamp.is_file():
        made = json.loads(stamp.read_text())
        if path.stat().st_size == size:
            return path, made["sha256"], made["note"]
    sources = elf_sources(lib_dir)
    if not sources:
        raise SystemExit(f"bench_wheel: no ELF shared objects under {lib_dir} to make the library from")
    cache.mkdir(parents=True, exist_ok=True)
    digest, written, used = hashlib.sha256(), 0, 0
    distinct = sum(p.stat().st_size for p in sources)
    with open(path, "wb") as out:
        while written < size:
            for source in sources:
                with open(source, "rb") as f:
                    while written < size and (block := f.read(min(CHUNK, size - written))):
                        out.write(block)
                        digest.update(block)
                        written += len(block)
                used += 1
                if written >= size:
                    break
    note = (f"{len(sources)} ELF shared objects under {lib_dir}, {distinct / MB:.0f} MB in all; "
            f"{used} concatenated ({written / distinct:.2f} passes)")
    stamp.write_text(json.dumps({"sha256": digest.hexdigest(), "note": note}))
    return path, digest.hexdigest(), note


def probe_baseline(python: str) -> dict[str, str]:
    # Not from the checkout's folder: `-c` puts the current folder first on sys.path, where the
    # checkout's own build/ and wheel/ packages would stand in for PyPA's.
    result = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, cwd=tempfile.gettempdir())
    if result.returncode != 0:
        raise SystemExit(f"bench_wheel: cannot run the baseline Python {python}:\n{result.stderr}")
    info = json.loads(result.stdout)
    if info["missing"]:
        raise SystemExit(f"bench_wheel: the baseline Python {python} lacks {', '.join(info['missing'])}; "
                         f"install them with: {python} -m pip install build setuptools wheel")
    return info["found"]


def stage_baseline(work: Path, library: Path) -> Path:
    """The setup.py project; the library is hard-linked in (copied across file systems)."""
    src = work / "baseline" / "src"
    package = src / PACKAGE
    package.mkdir(parents=True)
    (src / "setup.py").write_text(SETUP_PY)
    (package / "__init__.py").write_text(INIT_PY)
    try:
        os.link(library, package / LIBRARY)
    except OSError:
        shutil.copyfile(library, package / LIBRARY)
    return src


def stage_ours(work: Path, library: Path) -> Path:
    """wheel_builder.py's spec for the same two files, as wheel/private/wheel.bzl writes it."""
    folder = work / "ours"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(INIT_PY)
    spec = {
        "distribution": "jax_rocm7_pjrt",
        "version": "0.7.1",
        "python_tag": "py3",
        "abi_tag": "none",
        "platform_tag": "manylinux_2_28_x86_64",
        "summary": "JAX XLA PJRT Plugin for AMD GPUs (benchmark)",
        "requires_python": ">=3.11",
        "entry_points": {"jax_plugins": {"xla_rocm7": "jax_plugins.xla_rocm7"}},
        "files": [
            {"src": str(library), "dest": f"{PACKAGE}/{LIBRARY}", "executable": True},
            {"src": str(folder / "__init__.py"), "dest": f"{PACKAGE}/__init__.py"},
        ],
    }
    path = folder / "spec.json"
    path.write_text(json.dumps(spec, indent=2))
    return path


def measured(cmd: list[str], log: Path, cwd: Path | None = None) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one child process and the descendants it
    waited for; exits with the child's output if it fails."""
    with open(log, "wb") as out:
        start = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        tail = log.read_text(errors="replace")[-4000:]
        raise SystemExit(f"bench_wheel: {' '.join(cmd)} exited {child.returncode}; its output ends:\n{tail}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024 / MB  # ru_maxrss is in KiB on Linux


def the_wheel(folder: Path) -> Path:
    wheels = sorted(folder.glob("*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"bench_wheel: expected one wheel in {folder}, found {[w.name for w in wheels]}")
    return wheels[0]


def member_sha256(wheel: Path, name: str) -> str:
    digest = hashlib.sha256()
    with zipfile.ZipFile(wheel) as archive, archive.open(name) as member:
        while block := member.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def worker_counts(text: str) -> list[int]:
    """--workers 1,2,16 -> [1, 2, 16]; each at least 1, no repeats."""
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None
    if not counts or min(counts) < 1 or len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError(f"{text!r}: give distinct counts of at least 1, e.g. 1,2,16")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=500, help="size of the generated library in MB (default: %(default)s)")
    parser.add_argument("--workers", type=worker_counts, default=None, metavar="N[,N...]",
                        help="run wheel_builder.py once per count (--workers N), e.g. 1,2,16 "
                             "(default: one run with its default, every core)")
    parser.add_argument("--baseline-python", default=sys.executable,
                        help="interpreter with build, setuptools and wheel for the baseline (default: this one)")
    parser.add_argument("--compresslevel", type=int, default=6, choices=range(0, 10), metavar="0-9",
                        help="zlib level passed to wheel_builder.py (default: %(default)s; the baseline always uses 6)")
    parser.add_argument("--work-dir", type=Path,
                        help="where the library, projects and wheels go (default: a fresh temporary dir); "
                             "a library already in its cache/ is reused")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (default: delete it, unless --work-dir)")
    parser.add_argument("--lib-dir", type=Path, default=LIB_DIR, help="where the ELF files come from (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.size_mb <= 0:
        parser.error("--size-mb must be positive")

    versions = probe_baseline(args.baseline_python)
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="bench-wheel-"))
    work.mkdir(parents=True, exist_ok=True)
    for stale in ("baseline", "ours"):
        shutil.rmtree(work / stale, ignore_errors=True)
    try:
        library, expected, note = generate_library(work / "cache", args.size_mb * MB, args.lib_dir)
        baseline_src = stage_baseline(work, library)
        spec = stage_ours(work, library)

        # way -> (wall, CPU, RSS); "ours" runs are named by their --workers ("ours" alone: the default).
        results, wheels = {}, {}
        results["baseline"] = measured(
            [args.baseline_python, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(work / "baseline" / "dist"),
             str(baseline_src)], work / "baseline" / "log.txt", cwd=baseline_src)
        wheels["baseline"] = the_wheel(work / "baseline" / "dist")
        for workers in args.workers or [None]:
            way = "ours" if workers is None else f"ours -w{workers}"
            out = work / "ours" / ("dist" if workers is None else f"dist-{workers}")
            results[way] = measured(
                [sys.executable, str(WHEEL_BUILDER), "--spec", str(spec), "--out-dir", str(out),
                 "--compresslevel", str(args.compresslevel)] + ([] if workers is None else ["--workers", str(workers)]),
                work / "ours" / f"log-{workers or 'default'}.txt")
            wheels[way] = the_wheel(out)

        member = f"{PACKAGE}/{LIBRARY}"
        hashes = {way: member_sha256(wheel, member) for way, wheel in wheels.items()}
        sizes = {way: wheel.stat().st_size / MB for way, wheel in wheels.items()}

        baseline_py = subprocess.run([args.baseline_python, "-c", "import sys; print(sys.version.split()[0])"],
                                     capture_output=True, text=True).stdout.strip()
        cores = os.process_cpu_count() if hasattr(os, "process_cpu_count") else len(os.sched_getaffinity(0))
        print(f"library: {args.size_mb} MB from {note}")
        print(f"baseline: Python {baseline_py} ({args.baseline_python}), "
              + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())) + "; zip level 6")
        print(f"ours: Python {sys.version.split()[0]}, wheel/private/wheel_builder.py, zip level {args.compresslevel}, "
              f"{cores} cores")
        print()
        b_wall, b_cpu, b_rss = results["baseline"]
        print(f"{'way':<12} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12} {'wheel MB':>10} "
              f"{'time x':>7} {'CPU x':>6} {'RSS x':>6} {'size x':>7}  wheel")
        for way, (wall, cpu, rss) in results.items():
            print(f"{way:<12} {wall:8.2f} {cpu:8.2f} {rss:12.1f} {sizes[way]:10.2f} {b_wall / wall:7.2f} {b_cpu / cpu:6.2f} "
                  f"{b_rss / rss:6.2f} {sizes[way] / sizes['baseline']:7.4f}  {wheels[way].name}")
        print()
        print("time x, CPU x, RSS x: the baseline's wall time, CPU time, peak RSS over this way's; "
              "size x: this wheel's size over the baseline's")
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
              f"(other work on the machine skews wall time)")
        bad = [way for way, h in hashes.items() if h != expected]
        if bad:
            print(f"FAIL: the library in the {' and '.join(bad)} wheel differs from the generated one "
                  f"(sha256 {', '.join(hashes[w] for w in bad)} != {expected})", file=sys.stderr)
            return 1
        ours = {way: hashlib.sha256(wheel.read_bytes()).hexdigest() for way, wheel in wheels.items() if way != "baseline"}
        if len(set(ours.values())) != 1:
            print(f"FAIL: our wheels differ with the number of workers: {ours}", file=sys.stderr)
            return 1
        print(f"every wheel holds the generated library byte for byte (sha256 {expected[:16]}...); "
              f"ours are identical across {len(ours)} run(s)")
    finally:
        if args.keep or args.work_dir:
            print(f"work dir kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0

if __name__ == "__main__":
    sys.exit(main())
