"""Pinned tool venvs under ${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build/venvs/, one per requirements file.

A venv is keyed by the requirements file's content and the interpreter's version, so
it is reused until either changes. It is built in place (a venv hard-codes its path)
and marked complete last, so an interrupted build is redone, never half-used. Concurrent
callers (two ci_builds, two test workers) take a lock: one builds, the others wait and reuse.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jax-rocm-build" / "venvs"


def venv_dir(name: str, requirements: Path) -> Path:
    digest = hashlib.sha256(requirements.read_bytes() + sys.version.encode()).hexdigest()[:12]
    return cache_dir() / f"{name}-{digest}"


def ensure_venv(name: str, requirements: Path, log_prefix: str) -> Path:
    """The python of the venv `name` with `requirements` installed; creates it on first use."""
    venv = venv_dir(name, requirements)
    python = venv / "bin" / "python"
    if (venv / ".complete").exists():
        return python
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.with_name(venv.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / ".complete").exists():
            build_venv(venv, requirements, log_prefix)
    return python


def build_venv(venv: Path, requirements: Path, log_prefix: str) -> None:
    python = venv / "bin" / "python"
    t0 = time.monotonic()
    print(f"{log_prefix}: creating venv {venv} from {requirements.name}", file=sys.stderr, flush=True)
    subprocess.run(["rm", "-rf", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(requirements)], check=True)
    (venv / ".complete").touch()
    print(f"{log_prefix}: venv ready in {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
