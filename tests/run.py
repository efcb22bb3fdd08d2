"""Run this project's tests: sets up what they need, then runs pytest.

    python3 -m tests.run               # the default run: unit, bazel, e2e (not the slow tier)
    python3 -m tests.run -m unit       # the fast tier alone (no sandbox)
    python3 -m tests.run -m slow       # the slow tier: proofs that rebuild from nothing on purpose or
                                          # repeat a capability on a second input (docs/testing.md lists
                                          # them); the scheduled workflow slow_tests.yml runs it
    python3 -m tests.run --rerun-kept  # also run the bazel/e2e tests whose results are kept
    python3 -m tests.run -m bazel -k smoke -x

Arguments are passed to pytest. The venv with the pinned packages of
requirements-test.txt lives under ${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build/venvs/
and is reused while that file is unchanged. Unless only the unit tier is asked for, the
sandbox root is built or checked (python3 -m sandbox ensure) in the background meanwhile;
the first `bazel`-tier test waits for it. Tests run in two pytest-xdist workers, a file each at
a time, each worker building in its own checkout (the second in a clone under /tmp) and running
every sandbox command in one sandbox session of its own (sandbox/session.py: one Bazel
server per workspace for the whole run); `-n 0` runs them in one process, `-n N` in N.
A bazel or e2e test that passed (or skipped) is not run again while the checkout's files, the
environment and the sandbox root are the same (tests/infra/result_cache.py, as `bazel test`
keeps results); the summary says how many were reused. With JAX_ROCM_BAZEL_EVENTS=DIR every
Bazel command writes its build events to DIR: `python3 -m bench.action_counts DIR` then says how
many actions ran and how many came from the shared action cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.venvs import ensure_venv

CHECKOUT = Path(__file__).resolve().parent.parent

REQUIREMENTS = CHECKOUT / "requirements-test.txt"


def only_unit_tests(argv: list[str]) -> bool:
    """Whether these pytest arguments select the unit tier alone (`-m unit`, or only paths
    under tests/unit), which needs no sandbox."""
    for i, arg in enumerate(argv):
        if arg == "-m" and i + 1 < len(argv):
            return argv[i + 1].strip() == "unit"
        if arg.startswith("-m") and len(arg) > 2:
            return arg[2:].lstrip("=").strip() == "unit"
    paths = [a for a in argv if not a.startswith("-") and (CHECKOUT / a.split("::")[0]).exists()]
    return bool(paths) and all(Path(p.split("::")[0]).parts[:2] == ("tests", "unit") for p in paths)


# Two pytest-xdist workers, a test file each at a time: one Bazel command at a time leaves about
# half of two cores idle (server starts, analysis, repository rules and pip are mostly serial).
# Each worker builds in a checkout of its own (tests/conftest.py). `-n 0` runs in one process.
DEFAULT_WORKERS = ("-n", "2", "--dist", "loadfile")


def parallel_args(argv: list[str]) -> list[str]:
    """xdist's arguments to add: none for a unit-only selection (seconds in one process) or
    when the arguments already choose (-n/--numprocesses, --dist, -p no:xdist)."""
    chosen = any(a in ("-n", "--numprocesses", "--dist", "no:xdist") or a.startswith(("-n", "--numprocesses=", "--dist="))
                 for a in argv)
    return [] if chosen or only_unit_tests(argv) else list(DEFAULT_WORKERS)


def missing_prerequisite(profile: str) -> str:
    """The one line of `python3 -m sandbox ensure --check` when this machine cannot build
    the sandbox the bazel and e2e tiers need (no uidmap or subordinate ids, no mmdebstrap, too
    little disk); "" when it can, or has it already."""
    check = subprocess.run([sys.executable, "-m", "sandbox", "ensure", "--check", f"--rocm={profile}"],
                           cwd=CHECKOUT, capture_output=True, text=True)
    if check.returncode == 0:
        return ""
    return (check.stderr.strip().splitlines() or [f"sandbox ensure --check exited {check.returncode}"])[-1]


def main(argv: list[str]) -> int:
    # The second worker's clone (tests/infra/copy_workspace.py) of an interrupted run, then the
    # output bases of the checkouts such runs left behind: with caches reused across CI runs
    # they would otherwise fill the disk.
    subprocess.run([sys.executable, "-m", "tests.infra.copy_workspace", "--remove-stale-clones"], cwd=CHECKOUT,
                   check=False)
    subprocess.run([sys.executable, "-m", "sandbox", "prune"], cwd=CHECKOUT, check=False)
    if not only_unit_tests(argv):
        profile = os.environ.get("JAX_ROCM_TEST_PROFILE", "full")
        missing = missing_prerequisite(profile)
        if missing:
            # Every test that needs the sandbox would meet the same line: say it once, run what
            # needs no sandbox, and fail the run.
            print(f"run_tests: the sandbox cannot be built here, so no bazel or e2e test runs: {missing}",
                  file=sys.stderr, flush=True)
            python = ensure_venv("test", REQUIREMENTS, "run_tests")
            subprocess.run([str(python), "-m", "pytest", *argv, "-m", "unit"], cwd=CHECKOUT, check=False)
            print(f"run_tests: stopped: {missing}", file=sys.stderr)
            return 2
        # The sandbox's downloads go on while the venv is made and the unit tier runs; the
        # first test that needs the sandbox waits for this `ensure` (its build lock).
        # Its log is removed when it succeeds: only a failed ensure's is worth reading.
        log = Path(tempfile.gettempdir()) / f"run_tests-ensure-{os.getpid()}.log"
        print(f"run_tests: building or checking the sandbox in the background (log, kept if it fails: {log})",
              file=sys.stderr, flush=True)
        ensure = [sys.executable, "-m", "sandbox", "ensure", f"--rocm={profile}"]
        subprocess.Popen(["sh", "-c", 'log=$1; shift; "$@" >"$log" 2>&1 && rm -f "$log"', "sh", str(log), *ensure],
                         stdin=subprocess.DEVNULL, cwd=CHECKOUT)
    python = ensure_venv("test", REQUIREMENTS, "run_tests")
    os.chdir(CHECKOUT)
    os.execv(python, [str(python), "-m", "pytest", *parallel_args(argv), *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
