#!/usr/bin/env python3
"""Run this project's tests: sets up what they need, then runs pytest.

    python3 tools/run_tests.py                 # every tier: unit, bazel, e2e (not the slow RBE wheel proof)
    python3 tools/run_tests.py -m unit         # the fast tier alone (no sandbox)
    python3 tools/run_tests.py -m slow         # the RBE wheel proof (tests/bazel/test_rbe_wheels.py, ~25 min)
    python3 tools/run_tests.py -m bazel -k smoke -x

Arguments are passed to pytest. The venv with the pinned packages of
requirements-test.txt lives under ${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build/venvs/
and is reused while that file is unchanged. Tests of the `bazel` tier build the
sandbox root themselves (tools/sandbox.py ensure) on first use.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from venvs import ensure_venv  # beside this script: its folder is on sys.path

CHECKOUT = Path(__file__).resolve().parent.parent

REQUIREMENTS = CHECKOUT / "requirements-test.txt"


def main(argv: list[str]) -> int:
    # Output bases of the scratch checkouts an earlier, interrupted run left behind: with
    # caches reused across CI runs they would otherwise fill the disk.
    subprocess.run([sys.executable, str(CHECKOUT / "tools" / "sandbox.py"), "prune"], check=False)
    python = ensure_venv("test", REQUIREMENTS, "run_tests")
    os.chdir(CHECKOUT)
    os.execv(python, [str(python), "-m", "pytest", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
