"""How ci_build runs things: every command through spawn (none outlives ci_build), in the
sandbox (python3 -m sandbox run) with the host folders the build reads mounted, or in host mode
(--host, JAX_ROCM_HOST=1) directly on this machine with the user's own Bazel; with the Bazel
flags every build shares, one build per checkout at a time.

Every command that builds or probes goes through `wrap` or `bazel` (which mode, in one place);
`provision` readies what either mode needs before Bazel runs."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from sandbox import build as sandbox_build, session
from sandbox.cache import Paths

from . import toolkit
from .inputs import InputError
from .paths import CACHE, CHECKOUT, PREFETCH, SANDBOX, SANDBOX_PROFILE
from .request import Request

# In each child, before exec: the kernel kills it when ci_build dies, even by SIGKILL; the
# sandbox's own children follow it (sandbox/namespaces.py), Bazel's server too.
_die_with_ci_build = session.die_with_parent


# ci_build's sandbox session (sandbox/session.py), open from its first `sandbox run` to its
# end: the Bazel server the first command starts serves every later one (a build per Python,
# the tagging build, the pre-flight's stages) instead of each paying a server's start and a
# new analysis. It ends with ci_build, killed or not.
_SESSION = contextlib.ExitStack()
_session_tried = False


def _in_session(cmd: list[str]) -> None:
    """Opens the session before the first `sandbox run`, once there is a root to run in (an
    `ensure` wants the root to itself: it may swap it)."""
    global _session_tried
    if _session_tried or os.environ.get(session.SESSION_ENV) or cmd[:len(SANDBOX) + 1] != [*SANDBOX, "run"]:
        return
    if sandbox_build.ready_root(Paths.default()) is None:
        return
    _session_tried = True  # once: a session that could not start is said once, not before every command
    path = _SESSION.enter_context(session.opened(CHECKOUT))
    atexit.register(_SESSION.close)
    if path is None:
        _SESSION.close()
        print("ci_build: the sandbox session did not start: each Bazel command starts a server of its own",
              file=sys.stderr, flush=True)


def spawn(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run for every command ci_build starts: none outlives it."""
    _in_session(cmd)
    return subprocess.run(cmd, preexec_fn=_die_with_ci_build, **kwargs)


def run(cmd: list[str], dry_run: bool) -> int:
    print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
    if dry_run:
        return 0
    return spawn(cmd, cwd=CHECKOUT).returncode


def run_bazel(cmd: list[str], dry_run: bool) -> tuple[int, str]:
    """A Bazel command, its output shown as it comes and kept: (exit status, Bazel's output),
    for saying after a failure what failed (failed_actions, full.missing_repositories)."""
    print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
    if dry_run:
        return 0, ""
    kept = []
    _in_session(cmd)
    with subprocess.Popen(cmd, cwd=CHECKOUT, stderr=subprocess.PIPE, text=True, errors="replace",
                          preexec_fn=_die_with_ci_build) as bazel:
        for line in bazel.stderr:
            sys.stderr.write(line)
            kept.append(line)
    return bazel.returncode, "".join(kept)


# How Bazel reports an action (a compile, a link) that ran and failed: "ERROR: <BUILD
# file>:<line>:<column>: Compiling x.cc failed: (Exit 1): ...". Loading, fetching and analysis
# errors never have this shape.
_FAILED_ACTION = re.compile(r"^ERROR: \S+:\d+:\d+: (.+?) failed: \(", re.M)


def failed_actions(output: str) -> list[str]:
    """What Bazel said of each action that failed ("Compiling x.cc"), in order."""
    return _FAILED_ACTION.findall(output)


def provision(request: Request, rocm: str) -> int:
    """What a build needs before Bazel runs. Sandboxed: the sandbox (`ensure`) and the pinned
    archives (prefetch.py; the PyPI wheels need no sandbox: they download while the sandbox is
    built, the Debian source (abseil) after it). Host mode: the pinned PyPI wheels with pip into
    HOST_DISTDIR, which the build names with --distdir (where pip reaches PyPI and Java does
    not); a failure there is a note, not an error: the user's Bazel may fetch them itself."""
    if request.host:
        fetch = PREFETCH + ["--pypi-only", f"--distdir={HOST_DISTDIR}"]
        if run(fetch, request.dry_run):
            print(f"ci_build: host mode: pip could not fetch the pinned PyPI archives into {HOST_DISTDIR} (above); "
                  "your Bazel downloads them itself, or takes them from a --distdir of your bazelrc", file=sys.stderr)
        return 0
    pypi = PREFETCH + ["--pypi-only"]
    print("+ " + shlex.join(pypi) + " &", file=sys.stderr, flush=True)
    background = None if request.dry_run else subprocess.Popen(pypi, cwd=CHECKOUT, preexec_fn=_die_with_ci_build)
    try:
        rc = run(SANDBOX + ["ensure", f"--rocm={rocm}"], request.dry_run)
    finally:
        pypi_rc = background.wait() if background else 0
    return rc or pypi_rc or run(PREFETCH, request.dry_run)


def damaged_outputs_hint(rc: int, cmd: list[str], output: str) -> str | None:
    """After a Bazel build or test in which an action failed (a compile or link step: exit 1, and
    Bazel said so), the way out of a damaged output base, whose stale file would fail every rerun
    the same way. None for what a damaged output base cannot cause: loading, fetching, analysis."""
    verb = next((w for w in ("build", "test") if w in cmd), None)
    if rc != 1 or verb is None or not failed_actions(output):
        return None
    clean = shlex.join(cmd[:cmd.index(verb)] + ["clean", "--expunge"])
    return (f"if {failed_actions(output)[0]} fails the same way again with nothing changed, this checkout's Bazel "
            f"outputs may be damaged: `{clean}` starts them afresh (the shared action cache keeps the rebuild short)")


def say_damaged_outputs_hint(name: str, rc: int, cmd: list[str], output: str) -> None:
    """Prints damaged_outputs_hint as `ci_build NAME: ...` where there is one."""
    hint = damaged_outputs_hint(rc, cmd, output)
    if hint:
        print(f"ci_build {name}: {hint}", file=sys.stderr)


def run_steps(name: str, steps: list[list[str]], dry_run: bool) -> int:
    t0 = time.monotonic()
    for cmd in steps:
        rc, output = run_bazel(cmd, dry_run)
        if rc != 0:
            print(f"ci_build {name}: failed (exit {rc}) at: {shlex.join(cmd)}", file=sys.stderr)
            say_damaged_outputs_hint(name, rc, cmd, output)
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


def sandbox_run(request: Request, extra_binds: list[str] = ()) -> list[str]:
    """`sandbox.py run` with the host folders the build reads mounted: source trees given
    with --xla-source-dir/--jax-source-dir and the ROCm toolkit (sandbox.py leaves out those it
    mounts anyway: the checkout, /tmp)."""
    trees = [p if p.is_dir() else p.parent for p in request.source_dirs.values()]  # an archive: its folder
    binds = [str(p) for p in trees if not (p == CHECKOUT or CHECKOUT in p.parents)]
    binds += [b for b in [*extra_binds, *request.rocm_source.binds] if b not in binds]
    return SANDBOX + ["run", *[a for b in binds for a in ("--bind", b)], "--"]


def bazel_flags(request: Request, configs: tuple[str, ...] = ("rocm",)) -> list[str]:
    """The Bazel flags every build command shares, spelled as users type them (tools/bazel
    turns --override_repository=xla=DIR into the canonical name Bazel needs); in host mode also
    the distdir `provision` filled (inside the sandbox, its /etc/bazel.bazelrc names its own).
    `configs`: as toolkit.rocm_flags."""
    flags = toolkit.rocm_flags(request, configs) + [f"--override_repository={name}={path}"
                                        for name, path in sorted(request.source_dirs.items())]
    return flags + ([f"--distdir={HOST_DISTDIR}"] if request.host else [])


# ---- host mode: the user's Bazel, ROCm and Pythons, no sandbox ----------------------------

HOST_ENV = "JAX_ROCM_HOST"
# Where host mode's prefetch puts the pinned PyPI archives (prefetch.py's default too).
HOST_DISTDIR = CACHE / "distdir"
TOOLS_BAZEL = CHECKOUT / "tools" / "bazel"


def host_from_env(value: str | None) -> bool:
    """JAX_ROCM_HOST: 1 is host mode, 0 or unset the sandbox; anything else is an InputError."""
    value = (value or "").strip()
    if value not in ("", "0", "1"):
        raise InputError(f"{HOST_ENV}={value} (from the environment) is neither 1 (host mode: your Bazel, ROCm and "
                         f"Pythons) nor 0 (the sandbox): set it to one of them, or unset it")
    return value == "1"


def check_prerequisites(request: Request) -> None:
    """What this machine must have for the command, named before anything is downloaded, locked
    or built, dry runs included (InputError): in host mode the user's Bazel; else what building
    the sandbox needs where it is not built yet (sandbox/build.py: root, or mmdebstrap,
    uidmap and subordinate ids; the disk)."""
    if request.host:
        find_host_bazel(dict(os.environ), request.given.get("host", "--host"))
        return
    try:
        sandbox_build.check_prerequisites(Paths.default(), request.rocm if request.command == "doctor" else SANDBOX_PROFILE)
    except sandbox_build.SandboxError as e:
        raise InputError(str(e)) from None


def find_host_bazel(env: dict[str, str], host: str = "--host") -> str:
    """The user's Bazel: $BAZEL, else bazelisk, else bazel on PATH (InputError naming what to
    install or set when there is none; `host` says how host mode was asked for)."""
    given = env.get("BAZEL", "").strip()
    path = env.get("PATH", os.defpath)
    if given:
        found = shutil.which(given, path=path)
        if not found:
            raise InputError(f"BAZEL={given} (from the environment) is not an executable on this machine: point it at "
                             "your bazelisk or bazel, or unset it to use the one on PATH")
        return found
    for name in ("bazelisk", "bazel"):
        found = shutil.which(name, path=path)
        if found and Path(found).resolve() != TOOLS_BAZEL.resolve():
            return found
    raise InputError(f"host mode ({host}) runs your own Bazel, and none is on PATH: install bazelisk (it takes "
                     f".bazelversion's Bazel 7.7.1) or Bazel 7, or set BAZEL=/path/to/bazel; or drop {host.split('=')[0]} "
                     "to build in the sandbox")


def host_bazel() -> list[str]:
    """The user's Bazel through this checkout's tools/bazel (as bazelisk and Bazel's own
    launcher do), so that --override_repository=xla=DIR means what ci_build means by it
    whichever Bazel it is; a launcher that runs tools/bazel again passes the flags through."""
    return ["env", f"BAZEL_REAL={find_host_bazel(dict(os.environ))}", sys.executable, str(TOOLS_BAZEL)]


def wrap(request: Request, cmd: list[str], extra_binds: list[str] = ()) -> list[str]:
    """`cmd` as this build runs it: in the sandbox with the folders it reads mounted, or, in
    host mode, as it is, on this machine."""
    return list(cmd) if request.host else sandbox_run(request, extra_binds) + list(cmd)


def bazel_word(request: Request) -> list[str]:
    """Bazel as a command run by `wrap` (or a script it runs) names it: the sandbox's `bazel`, or the user's."""
    return host_bazel() if request.host else ["bazel"]


def bazel(request: Request, extra_binds: list[str] = ()) -> list[str]:
    """The Bazel command of this build: the sandbox's (Debian's 7.7.1) or, in host mode, the user's."""
    return wrap(request, bazel_word(request), extra_binds)
