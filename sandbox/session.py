"""One sandbox, one PID namespace, for every `run` of a command that runs many: a session.

Each `run` alone starts a namespace that ends with it, Bazel's server included, so a command
that runs Bazel several times (ci_build's builds, the pre-flight's stages, the test suite)
paid a server's start and a new analysis each time. A session is a namespace that lives as long
as the process that opened it (`opened`): it sets SESSION_ENV, and every
`python3 -m sandbox run` under it with that variable sends its command to the session's
agent (session_agent.py) instead of starting a namespace of its own. Bazel's servers then last
from one command to the next; they end with the session, which ends with its opener, even
killed (the kernel's parent-death signal at each step, as for `run`).

A `run` the session cannot serve (another root, since swapped in, or a session gone) runs in
a namespace of its own, as without one.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator, Sequence

from . import SandboxError, log
from .namespaces import Bind
from .session_agent import frame, read_message

SESSION_ENV = "JAX_ROCM_SANDBOX_SESSION"
AGENT = Path(__file__).resolve().parent / "session_agent.py"
_PR_SET_PDEATHSIG = 1
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def agent_argv(socket_path: str, root: Path, binds: Sequence[Bind]) -> tuple[str, ...]:
    """The session's command: the agent, on the root's Python, told the session's mounts."""
    listed = [[str(b.source), b.target, b.readonly, b.recursive] for b in binds]
    return ("python3", str(AGENT), socket_path, str(root), json.dumps(listed))


def _connect(path: str) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        return None
    return conn


def ping(path: str) -> dict | None:
    """The agent's answer ({"root": ..., "pid": ...}), or None where no agent listens."""
    conn = _connect(path)
    if conn is None:
        return None
    with conn:
        try:
            conn.sendall(frame({"op": "ping"}))
            return read_message(conn)[0]
        except (OSError, EOFError, ValueError):
            return None


def _std_fds() -> list[int]:
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:  # closed: the command gets /dev/null there
            fds.append(os.open(os.devnull, os.O_RDWR))
    return fds


def run(path: str, root: Path, binds: Sequence[Bind], argv: Sequence[str], env: dict[str, str], cwd: str) -> int | None:
    """Runs argv in the session at `path`: its exit code (-SIGNUM where a signal ended it), or
    None where the session cannot run it (the caller then runs it in a namespace of its own)."""
    conn = _connect(path)
    if conn is None:
        return None
    with conn:
        request = frame({"op": "run", "root": str(root), "argv": list(argv), "env": env, "cwd": cwd,
                            "binds": [[str(b.source), b.target, b.readonly, b.recursive] for b in binds]})
        try:
            socket.send_fds(conn, [request[:4]], _std_fds())
            conn.sendall(request[4:])
            answer = read_message(conn)[0]
        except (OSError, EOFError, ValueError):
            return None
        if "refused" in answer:
            if not answer.get("quiet"):
                log(f"the session at {path} cannot run this ({answer['refused']}): it runs in a sandbox of its own")
            return None

        def forward(sig: int, _frame: object) -> None:
            with contextlib.suppress(OSError):
                conn.sendall(f"{sig} ".encode())

        old = {sig: signal.signal(sig, forward) for sig in _FORWARDED}
        try:
            while True:
                try:
                    result = read_message(conn)[0]
                    break
                except InterruptedError:
                    continue
                except (OSError, EOFError, ValueError):
                    raise SandboxError(f"the sandbox session at {path} ended during the command") from None
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
    return -result["signal"] if "signal" in result else int(result["exit"])


def die_with_parent() -> None:
    """In a child before exec (preexec_fn), or in a process itself: the kernel kills it when its
    parent dies, even by SIGKILL."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


# Set by the test suite for everything it starts: a program of this project that sees it ends
# when the process that started it ends, even killed (a SIGKILL of the test command leaves
# nothing running). Never set by default: `nohup ci_build ...` from a shell must outlive it.
DIE_WITH_PARENT_ENV = "JAX_ROCM_DIE_WITH_PARENT"


def die_with_parent_if_asked() -> None:
    """The kernel's parent-death signal for this process, where DIE_WITH_PARENT_ENV=1 asks it."""
    if os.environ.get(DIE_WITH_PARENT_ENV) == "1":
        parent = os.getppid()
        die_with_parent()
        if os.getppid() != parent:  # the parent ended before the signal was set
            os._exit(137)


@contextlib.contextmanager
def opened(checkout: Path, env: dict[str, str] | None = None, timeout: float = 60) -> Iterator[str | None]:
    """A session for the `run`s of this process and its children (SESSION_ENV set in os.environ
    meanwhile): its socket's path, or None where none could start (no root yet, say), the runs
    then each starting their own. Inside an open session, that one: sessions do not nest."""
    if os.environ.get(SESSION_ENV) and ping(os.environ[SESSION_ENV]) is not None:
        yield os.environ[SESSION_ENV]
        return
    folder = tempfile.mkdtemp(prefix="jax-rocm-session-", dir="/tmp")
    path = f"{folder}/agent.sock"
    serve = subprocess.Popen([sys.executable, "-m", "sandbox", "serve", "--socket", path], cwd=checkout,
                             env=env, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
    deadline = time.monotonic() + timeout
    while serve.poll() is None and ping(path) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    ready = serve.poll() is None and ping(path) is not None
    before = os.environ.get(SESSION_ENV)
    if ready:
        os.environ[SESSION_ENV] = path
    try:
        yield path if ready else None
    finally:
        if before is None:
            os.environ.pop(SESSION_ENV, None)
        else:
            os.environ[SESSION_ENV] = before
        serve.terminate()
        try:
            serve.wait(30)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()
        shutil.rmtree(folder, ignore_errors=True)
