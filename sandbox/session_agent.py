"""Inside a sandbox session (session.py): runs the commands that `sandbox run` sends it.

Runs as the session's command, chroot'ed in the root, on the root's own Python (stdlib only,
no import of this package): it listens on a Unix socket under /tmp (the host's, mounted at its
own path) and, for each request, mounts the host folders the command needs that the session
lacks, then starts the command with the caller's stdin, stdout and stderr (passed over the
socket), in the caller's folder and environment. Every command runs in the session's PID
namespace, so a Bazel server it starts serves the next command of the same workspace; the
session's end (its PID 1) ends them all.

A folder at its own path is mounted into the session itself, where every later command (and
every server) sees it. A file at a path the session already has from elsewhere (another
checkout's /etc/bazel.bazelrc, the one without the action cache) is mounted in a mount namespace
of that command's own. Bazel's client takes a server in another mount namespace for one whose
folder was moved (it reads the server's cwd through /proc) and starts its own: such a command
pays a server's start, as without a session. The session's mounts are private, as a `run`'s:
what a command mounts stays its own (tests/infra/isolated_replay.py mounts under /tmp).

    python3 session_agent.py SOCKET ROOT BINDS_JSON
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import socket
import struct
import sys
import time

_MS_RDONLY = 1
_MS_REMOUNT = 32
_MS_BIND = 4096
_MS_REC = 16384
_CLONE_NEWNS = 0x00020000
_KEPT_MOUNT_FLAGS = 2 | 4 | 8 | 1024 | 2048 | 4096
HOST_ROOT_FD_ENV = "JAX_ROCM_SANDBOX_HOST_ROOT_FD"
STAGING = "/run/jax-rocm-build/session-mounts"
_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str | None, target: str, flags: int) -> None:
    _check(_libc.mount(None if src is None else src.encode(), target.encode(), None, ctypes.c_ulong(flags), None),
           f"mount {src} on {target}")


# The wire, both ways (session.py speaks it too): a 4-byte length, then that much JSON; a
# request's first 4 bytes carry the caller's descriptors (SCM_RIGHTS).
def frame(message: dict) -> bytes:
    data = json.dumps(message).encode()
    return struct.pack("!I", len(data)) + data


def _exactly(conn: socket.socket, size: int, data: bytes = b"") -> bytes:
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError("the other end closed the connection")
        data += chunk
    return data


def read_message(conn: socket.socket, nfds: int = 0) -> tuple[dict, list[int]]:
    """One message, with up to `nfds` descriptors sent along its first bytes."""
    head, fds, _, _ = socket.recv_fds(conn, 4, nfds) if nfds else (b"", [], 0, None)
    (size,) = struct.unpack("!I", _exactly(conn, 4, head))
    return json.loads(_exactly(conn, size)), fds


def write_message(conn: socket.socket, message: dict) -> None:
    conn.sendall(frame(message))


class Mounts:
    """The session's mounts by target: which host path each shows."""

    def __init__(self, host_root_fd: int, binds: list[list]):
        self.host_root_fd = host_root_fd
        self.shown = {target: source for source, target, *_ in binds}
        self.staged: dict[str, str] = {}
        # A command's own mounts come from here: a mount namespace of its own cannot mount from
        # the session's (the host's / reached through the descriptor belongs to the session).
        os.makedirs(STAGING, exist_ok=True)
        _check(_libc.mount(b"tmpfs", STAGING.encode(), b"tmpfs", ctypes.c_ulong(0), None), f"mount tmpfs on {STAGING}")

    def host(self, source: str) -> str:
        return f"/proc/self/fd/{self.host_root_fd}{source}"

    def covered(self, target: str) -> bool:
        """Whether `target` already shows the host path of the same name: it is, or lies
        below, a folder mounted at its own path."""
        path = target
        while True:
            if self.shown.get(path) == path and os.path.isdir(path):
                return True
            if path == "/":
                return False
            path = os.path.dirname(path)

    def prepare(self, source: str, target: str) -> None:
        if os.path.isdir(self.host(source)):
            if os.path.isfile(target) and os.path.getsize(target) == 0:
                os.unlink(target)  # a mount point an earlier run made when the source was a file
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.islink(target) and not os.path.exists(target):
                os.unlink(target)
            if not os.path.exists(target):
                open(target, "a").close()

    def stage(self, source: str, recursive: bool) -> str:
        """`source` mounted in the session under STAGING, where a command's namespace can take it."""
        if source not in self.staged:
            staged = f"{STAGING}/{len(self.staged)}"
            self.bind(source, staged, False, recursive)
            self.staged[source] = staged
        return self.staged[source]

    def bind(self, source: str, target: str, readonly: bool, recursive: bool, staged: bool = False) -> None:
        """Mounts the host's `source` (or, `staged`, the session's path) at `target`."""
        if staged:
            if os.path.isdir(source):
                os.makedirs(target, exist_ok=True)
            elif not os.path.exists(target):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                open(target, "a").close()
        else:
            self.prepare(source, target)
        _mount(source if staged else self.host(source), target, _MS_BIND | (_MS_REC if recursive else 0))
        if readonly:
            kept = os.statvfs(target).f_flag & _KEPT_MOUNT_FLAGS
            _mount(None, target, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | kept)

    def split(self, binds: list[list]) -> list[list]:
        """Mounts the folders the session lacks into the session; returns the binds that must
        stay the command's own (a target the session shows from another source)."""
        own = []
        for source, target, readonly, recursive in binds:
            if self.shown.get(target) == source or (source == target and self.covered(target)):
                continue
            if target not in self.shown and source == target:
                self.bind(source, target, readonly, recursive)
                self.shown[target] = source
            else:
                own.append([self.stage(source, recursive), target, readonly, recursive])
        return own


def start(request: dict, fds: list[int], own_binds: list[list], mounts: Mounts) -> int:
    pid = os.fork()
    if pid:
        return pid
    try:
        os.setpgid(0, 0)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        if own_binds:
            _check(_libc.unshare(_CLONE_NEWNS), "unshare(mount)")
            for staged, target, readonly, recursive in own_binds:
                mounts.bind(staged, target, readonly, recursive, staged=True)
        for n, fd in enumerate(fds):
            os.dup2(fd, n)
        try:
            os.chdir(request["cwd"])
        except OSError:
            os.chdir("/")
        os.closerange(3, 65536)
        os.execvpe(request["argv"][0], request["argv"], request["env"])
    except FileNotFoundError:
        print(f"sandbox: {request['argv'][0]}: command not found inside the sandbox", file=sys.stderr, flush=True)
        os._exit(127)
    except BaseException as e:  # noqa: BLE001 - report anything and leave the fork
        print(f"sandbox: cannot start {request['argv'][0]}: {e}", file=sys.stderr, flush=True)
        os._exit(126)
    os._exit(126)


def end_group(pgid: int, grace: float) -> None:
    """SIGTERM to what is left of a command's process group, SIGKILL after `grace` seconds. A
    Bazel server is in a group of its own and stays for the next command."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def attend(conn: socket.socket, pid: int) -> None:
    """The command's lifetime, in a process of its own: signals from the caller reach it; its
    end (or the caller's) ends what remains of its process group."""
    write_message(conn, {"started": pid})
    while True:
        ready, _, _ = select.select([conn], [], [], 0.1)
        if ready:
            data = conn.recv(64)
            if not data:  # the caller died: so does its command
                end_group(pid, 5)
                os.waitpid(pid, 0)
                os._exit(0)
            for word in data.split():
                if word.isdigit():
                    try:
                        os.kill(pid, int(word))
                    except ProcessLookupError:
                        pass
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            end_group(pid, 1)
            if os.WIFSIGNALED(status):
                write_message(conn, {"signal": os.WTERMSIG(status)})
            else:
                write_message(conn, {"exit": os.waitstatus_to_exitcode(status)})
            os._exit(0)


def serve(path: str, root: str, binds: list[list]) -> None:
    mounts = Mounts(int(os.environ.pop(HOST_ROOT_FD_ENV)), binds)
    os.set_inheritable(mounts.host_root_fd, False)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)

    def reap(_sig: int, _frame: object) -> None:
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    return
            except ChildProcessError:
                return

    signal.signal(signal.SIGCHLD, reap)
    # A terminal's Ctrl-C reaches the session's whole process group, the agent too: the commands
    # hear of it from their callers (session.run), and the session ends with its opener.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGQUIT, signal.SIG_IGN)
    while True:
        try:
            conn, _ = listener.accept()
        except InterruptedError:
            continue
        fds: list[int] = []
        try:
            request, fds = read_message(conn, 3)
            if request.get("op") == "ping":
                write_message(conn, {"root": root, "pid": os.getpid()})
            elif request.get("root") != root:
                write_message(conn, {"refused": f"the session runs in {root}, the command in {request.get('root')}", "quiet": True})
            else:
                try:
                    own = mounts.split(request["binds"])
                except OSError as e:
                    write_message(conn, {"refused": f"cannot mount what the command needs: {e}"})
                else:
                    if os.fork() == 0:  # the command's attendant, its parent
                        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                        listener.close()
                        attend(conn, start(request, fds, own, mounts))
        except (EOFError, OSError, ValueError, KeyError):
            pass
        finally:
            for fd in fds:
                os.close(fd)
            conn.close()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
