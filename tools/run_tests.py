#!/usr/bin/env python3
"""Run this project's tests: sets up what they need, then runs pytest.

    python3 tools/run_tests.py                 # every tier: unit, bazel, e2e
    python3 tools/run_tests.py -m unit         # the fast tier alone (no sandbox)
    python3 tools/run_tests.py -m bazel -k smoke -x

Arguments are passed to pytest. The venv with the pinned packages of
requirements-test.txt lives under ${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build/venvs/
and is reused while that file is unchanged. Tests of the `bazel` tier build the
sandbox root themselves (tools/sandbox.py ensure) on first use.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
REQUIREMENTS = CHECKOUT / "requirements-test.txt"


def venv_dir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jax-rocm-build" / "venvs"
    digest = hashlib.sha256(REQUIREMENTS.read_bytes() + sys.version.encode()).hexdigest()[:12]
    return cache / f"test-{digest}"


def ensure_venv() -> Path:
    venv = venv_dir()
    python = venv / "bin" / "python"
    if (venv / ".complete").exists():
        return python
    t0 = time.monotonic()
    print(f"run_tests: creating test venv {venv} from {REQUIREMENTS.name}", file=sys.stderr, flush=True)
    # A venv hard-codes its own path, so it is built in place; the marker
    # written last tells a finished venv from an interrupted one.
    subprocess.run(["rm", "-rf", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)], check=True)
    (venv / ".complete").touch()
    print(f"run_tests: venv ready in {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
    return python


def main(argv: list[str]) -> int:
    python = ensure_venv()
    os.chdir(CHECKOUT)
    os.execv(python, [str(python), "-m", "pytest", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
