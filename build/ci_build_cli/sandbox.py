"""How ci_build runs things: every command through spawn (none outlives ci_build), in the
sandbox (tools/sandbox.py run) with the host folders the build reads mounted, with the Bazel
flags every build shares, one build per checkout at a time."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import hashlib
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import sources, toolkit
from .paths import CACHE, CHECKOUT, PREFETCH, SANDBOX

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def _die_with_ci_build() -> None:
    """In a child, before exec: the kernel kills it when ci_build dies, even by SIGKILL; the
    sandbox's own children follow it (tools/sandbox_root/namespaces.py), Bazel's server too."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def spawn(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run for every command ci_build starts: none outlives it."""
    return subprocess.run(cmd, preexec_fn=_die_with_ci_build, **kwargs)


def run(cmd: list[str], dry_run: bool) -> int:
    print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
    if dry_run:
        return 0
    return spawn(cmd, cwd=CHECKOUT).returncode


def provision(rocm: str, dry_run: bool) -> int:
    """The sandbox (`ensure`) and the pinned archives (prefetch.py). The PyPI wheels need no
    sandbox: they download while the sandbox is built; the Debian source (abseil) after it."""
    pypi = PREFETCH + ["--pypi-only"]
    print("+ " + shlex.join(pypi) + " &", file=sys.stderr, flush=True)
    background = None if dry_run else subprocess.Popen(pypi, cwd=CHECKOUT, preexec_fn=_die_with_ci_build)
    try:
        rc = run(SANDBOX + ["ensure", f"--rocm={rocm}"], dry_run)
    finally:
        pypi_rc = background.wait() if background else 0
    return rc or pypi_rc or run(PREFETCH, dry_run)


def run_steps(name: str, steps: list[list[str]], dry_run: bool) -> int:
    t0 = time.monotonic()
    for cmd in steps:
        rc = run(cmd, dry_run)
        if rc != 0:
            print(f"ci_build {name}: failed (exit {rc}) at: {shlex.join(cmd)}", file=sys.stderr)
            return rc
    if not dry_run:
        print(f"ci_build {name}: OK in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    return 0


@contextlib.contextmanager
def checkout_lock(command: str):
    """One ci_build at a time per checkout: Bazel's server is shared by a checkout's runs but
    lives in the sandbox of the run that started it, and dies with it. A second run waits,
    saying for whom; the lock goes with its holder, however that ends."""
    locks = CACHE / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    path = locks / f"ci_build-{hashlib.sha256(str(CHECKOUT).encode()).hexdigest()[:16]}.lock"
    with open(path, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "another run"
            print(f"ci_build: waiting for {holder} to finish: one build per checkout at a time (Bazel's server is "
                  "shared); Ctrl-C to stop waiting", file=sys.stderr, flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        lock.seek(0)
        lock.truncate()
        lock.write(f"ci_build {command} (pid {os.getpid()}, since {time.strftime('%H:%M:%S')})\n")
        lock.flush()
        yield


def sandbox_run(args: argparse.Namespace, extra_binds: list[str] = ()) -> list[str]:
    """`sandbox.py run` with the host folders the build reads mounted: source trees given
    with --xla-source-dir/--jax-source-dir and the ROCm toolkit (the checkout and /tmp are
    mounted already)."""
    mounted = (CHECKOUT, CHECKOUT.parent / "shared", Path("/tmp"))
    trees = [p if p.is_dir() else p.parent for p in sources.source_dirs(args).values()]  # an archive: its folder
    binds = [str(p) for p in trees if not any(p == m or m in p.parents for m in mounted)]
    binds += [b for b in [*extra_binds, *toolkit.args_rocm_source(args).binds] if b not in binds]
    return SANDBOX + ["run", *[a for b in binds for a in ("--bind", b)], "--"]


def bazel_flags(args: argparse.Namespace) -> list[str]:
    """The Bazel flags every build command shares, spelled as users type them (tools/bazel
    turns --override_repository=xla=DIR into the canonical name Bazel needs)."""
    return toolkit.rocm_flags(args) + [f"--override_repository={name}={path}"
                                       for name, path in sorted(sources.source_dirs(args).items())]
