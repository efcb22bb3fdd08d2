"""Benchmark: how long a wrong input takes to be answered, as a new user meets it.

    python3 -m bench.bench_input_probes [--runs 3]

Every probe of tests/infra/input_probes.py (issue 56: the wrong inputs a new user types), run as
the test runs it: `python3 build/ci_build ...` in a fresh clone of this checkout, with an empty
cache, HOME and TMPDIR and a plain PATH. The baseline, measured in the same run: `build/ci_build
--help` there (the interpreter's start and ci_build's imports, what any answer costs). Prints each
probe's median wall time over --runs and its ratio to the baseline, then the median, the slowest
and how many took a second or more. Run it on an idle machine; as root, the probes root cannot
be refused by (mmdebstrap, unreadable files) are left out, as in the test.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.infra.copy_workspace import clone_workspace
from tests.infra.input_probes import AS_ROOT, PROBES, prepared_files, run_probe

CHECKOUT = Path(__file__).resolve().parent.parent


def median_wall(runs: int, once) -> float:
    return statistics.median(once() for _ in range(runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs of each probe; the median counts (default: %(default)s)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-input-probes-") as tmp:
        clone = clone_workspace(Path(tmp) / "jax-rocm-build", CHECKOUT)

        def help_once() -> float:
            t0 = time.monotonic()
            subprocess.run([sys.executable, "build/ci_build", "--help"], cwd=clone, capture_output=True, check=True)
            return time.monotonic() - t0

        help_once()  # Python writes the clone's bytecode once, on the first run: not what is measured
        baseline = median_wall(args.runs, help_once)
        print(f"baseline: build/ci_build --help {baseline * 1000:.0f} ms (median of {args.runs})")
        counter = iter(range(1_000_000))
        walls, wrong = {}, []
        for name, case in PROBES.items():
            if case.skip_as_root and AS_ROOT:
                continue

            def probe_once(case=case, name=name) -> float:
                folder = Path(tmp) / f"probe-{next(counter)}"
                (folder / "files").mkdir(parents=True)
                prepared_files(folder / "files")
                run = run_probe(case, clone, folder, folder / "files")
                if run.result.returncode != case.exit or len(run.result.stderr.splitlines()) != 1 or run.written:
                    wrong.append(name)
                return run.wall

            walls[name] = median_wall(args.runs, probe_once)
            print(f"{walls[name] * 1000:6.0f} ms  {walls[name] / baseline:4.2f}x  {name}")
    slowest = max(walls, key=walls.get)
    print(f"{len(walls)} probes: median {statistics.median(walls.values()) * 1000:.0f} ms "
          f"({statistics.median(walls.values()) / baseline:.2f}x the baseline), slowest {walls[slowest] * 1000:.0f} ms "
          f"({slowest}), {sum(w >= 1 for w in walls.values())} at a second or more")
    if wrong:
        print(f"not answered in one line with their exit status (see the test): {', '.join(sorted(set(wrong)))}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
