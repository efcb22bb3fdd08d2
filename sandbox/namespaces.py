"""Running one command in private mount and PID namespaces, optionally chroot'ed.

No mount and no process (a Bazel server included) outlives the command: the
namespace's PID 1 kills what is left when the command exits, and signals sent
to us reach the command.

Without root, the namespaces belong to a user namespace of our own (as `unshare -r`
makes, but with the user's subordinate ids too, as podman and mmdebstrap map them):
the user is root inside, and the root's other users (postgres, _apt) are the user's
subordinate ids, so packages that chown to them install. Files the root's root writes
are the user's own on the host.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import grp
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import SandboxError

_CLONE_NEWNS = 0x00020000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWUSER = 0x10000000
_MS_RDONLY = 1
_MS_REMOUNT = 32
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_PR_SET_PDEATHSIG = 1
_KEPT_MOUNT_FLAGS = 2 | 4 | 8 | 1024 | 2048 | 4096  # nosuid nodev noexec noatime nodiratime relatime
_FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str | None, target: str, fstype: str | None, flags: int) -> None:
    _check(
        _libc.mount(
            None if src is None else src.encode(),
            target.encode(),
            None if fstype is None else fstype.encode(),
            ctypes.c_ulong(flags),
            None,
        ),
        f"mount {src} on {target}",
    )


@dataclasses.dataclass(frozen=True)
class Bind:
    source: Path  # on the host
    target: str  # absolute path inside the root
    readonly: bool = False
    recursive: bool = False


@dataclasses.dataclass(frozen=True)
class Enter:
    """How to start one command: in `root` (None = on the host) with these mounts."""

    argv: tuple[str, ...]
    root: Path | None
    binds: tuple[Bind, ...] = ()
    env: dict[str, str] | None = None
    cwd: str = "/"
    stdout: int | None = None  # a file descriptor; None = inherited
    stderr: int | None = None
    tmpfs: tuple[str, ...] = ()  # absolute paths inside the root that get a fresh tmpfs of their own
    # A session (session.py): the command gets a descriptor of the host's / (its number in
    # HOST_ROOT_FD_ENV) to mount host folders that later commands ask for.
    session: bool = False


HOST_ROOT_FD_ENV = "JAX_ROCM_SANDBOX_HOST_ROOT_FD"


@dataclasses.dataclass(frozen=True)
class IdMap:
    """A user namespace's map: the user is root inside, its subordinate range 1..count."""

    outer: int  # the user's uid (gid)
    start: int  # its subordinate range on the host
    count: int

    def newidmap_args(self) -> list[str]:
        return ["0", str(self.outer), "1", "1", str(self.start), str(self.count)]


def subordinate_range(text: str, name: str, number: int) -> tuple[int, int] | None:
    """The first range /etc/subuid (subgid) gives `name` (or its number): (start, count)."""
    for line in text.splitlines():
        fields = line.strip().split(":")
        if len(fields) == 3 and fields[0] in (name, str(number)) and fields[1].isdigit() and fields[2].isdigit():
            if int(fields[2]) > 0:
                return int(fields[1]), int(fields[2])
    return None


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


# The way out when the sandbox cannot be made here at all.
NO_SANDBOX = "or build with your own Bazel and ROCm, no sandbox: build/ci_build --host (docs/host-mode.md)"


def rootless() -> bool:
    """Whether this process lacks root: the sandbox then runs in a user namespace of its own."""
    return os.geteuid() != 0


def rootless_maps() -> tuple[IdMap, IdMap]:
    """The uid and gid maps of a rootless sandbox, or a SandboxError saying what is missing."""
    uid, gid = os.geteuid(), os.getegid()
    user = pwd.getpwuid(uid).pw_name
    group = grp.getgrgid(gid).gr_name
    if _read("/proc/sys/kernel/unprivileged_userns_clone").strip() == "0" or \
            _read("/proc/sys/user/max_user_namespaces").strip() == "0":
        raise SandboxError("sandbox without root needs unprivileged user namespaces, which this kernel "
                           "disables: an administrator enables them (sysctl kernel.unprivileged_userns_clone=1 "
                           "user.max_user_namespaces=15000); or run it as root, " + NO_SANDBOX)
    missing = [tool for tool in ("newuidmap", "newgidmap") if shutil.which(tool) is None]
    if missing:
        raise SandboxError(f"sandbox without root needs {' and '.join(missing)} (Debian/Ubuntu package "
                           "uidmap, Fedora shadow-utils): an administrator installs it once; or run it as root, " + NO_SANDBOX)
    uids = subordinate_range(_read("/etc/subuid"), user, uid)
    gids = subordinate_range(_read("/etc/subgid"), group, gid) or subordinate_range(_read("/etc/subgid"), user, uid)
    if uids is None or gids is None:
        raise SandboxError(f"sandbox without root maps the sandbox's own users (postgres, _apt) to {user}'s "
                           f"subordinate ids, and /etc/sub{'uid' if uids is None else 'gid'} gives {user} none: an "
                           f"administrator runs `usermod --add-subuids 100000-165535 --add-subgids 100000-165535 {user}`; "
                           "or run it as root, " + NO_SANDBOX)
    return IdMap(uid, *uids), IdMap(gid, *gids)


def _prepare_target(root: Path, bind: Bind) -> str:
    target = root / bind.target.lstrip("/")
    if bind.source.is_dir():
        if target.is_file() and target.stat().st_size == 0:
            target.unlink()  # a mount point an earlier run made when the source was a file or missing
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() and not target.is_symlink():
            target.touch()
        elif target.is_symlink():
            # A bind onto a symlink follows it; replace dangling links with files.
            if not target.exists():
                target.unlink()
                target.touch()
    return str(target)


def _from_terminal(sig: int) -> bool:
    """True when `sig` came from the controlling terminal to our whole group."""
    if sig not in (signal.SIGINT, signal.SIGQUIT):
        return False
    try:
        return os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        return False


# The signals that end a command at the user's (or its parent's) asking.
INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _supervise(child: int, reap_all: bool, received: list[int] | None = None) -> int:
    """Forward signals to `child`, wait for it; return its raw wait status. The signals that
    arrived meanwhile are appended to `received`."""

    def forward(sig: int, _frame: object) -> None:
        if received is not None:
            received.append(sig)
        if not _from_terminal(sig):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, sig)

    for sig in _FORWARDED_SIGNALS:
        signal.signal(sig, forward)
    while True:
        try:
            pid, status = os.waitpid(-1 if reap_all else child, 0)
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue
        if pid == child:
            return status


def _init_in_namespace(spec: Enter, status_fd: int) -> None:
    """PID 1 of the new namespace: mount /proc, start the command, reap, clean up."""
    if spec.root is not None:
        _mount("proc", str(spec.root / "proc"), "proc", 0)
    host_root = os.open("/", os.O_PATH | os.O_DIRECTORY) if spec.session else None
    pid = os.fork()
    if pid == 0:
        try:
            for sig in _FORWARDED_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            env = spec.env if spec.env is not None else dict(os.environ)
            if host_root is not None:
                os.set_inheritable(host_root, True)
                env = {**env, HOST_ROOT_FD_ENV: str(host_root)}
            if spec.stdout is not None:
                os.dup2(spec.stdout, 1)
            if spec.stderr is not None:
                os.dup2(spec.stderr, 2)
            if spec.root is not None:
                os.chroot(spec.root)
            try:
                os.chdir(spec.cwd)
            except OSError:
                os.chdir("/")
            os.execvpe(spec.argv[0], list(spec.argv), env)
        except FileNotFoundError:
            where = "inside the sandbox" if spec.root is not None else "on the host"
            print(f"sandbox: {spec.argv[0]}: command not found {where}", file=sys.stderr, flush=True)
            os._exit(127)
        except BaseException as e:  # noqa: BLE001 - report anything and leave the fork
            print(f"sandbox: cannot start {spec.argv[0]}: {e}", file=sys.stderr, flush=True)
            os._exit(126)
    status = _supervise(pid, reap_all=True)
    # Whatever the command left running (a Bazel server, say) ends with it.
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                time.sleep(0.05)
        except ChildProcessError:
            break
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signal.SIGKILL)
    if os.WIFSIGNALED(status):
        os.write(status_fd, str(os.WTERMSIG(status)).encode())
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


def _namespace_child(spec: Enter, status_fd: int, mapped: tuple[int, int] | None) -> None:
    """Host-PID-namespace child: make the mounts, then start PID 1. `mapped`: without root,
    the pipe ends on which it says it made its user namespace and hears that it was mapped."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if mapped is None:
        _check(_libc.unshare(_CLONE_NEWNS | _CLONE_NEWPID), "unshare(mount, pid)")
    else:
        ready, go = mapped
        parent = os.getppid()
        _check(_libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID), "unshare(user, mount, pid)")
        os.write(ready, b"u")
        if os.read(go, 1) != b"g":
            os._exit(125)  # the parent could not map us and said why
        # Our credentials changed with the new user namespace, which clears the death signal:
        # set it again, and leave now if the parent is already gone.
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(125)
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    if spec.root is not None:
        for bind in spec.binds:
            target = _prepare_target(spec.root, bind)
            _mount(str(bind.source), target, None, _MS_BIND | (_MS_REC if bind.recursive else 0))
            if bind.readonly:
                # Keep the flags the kernel may have locked (nosuid, nodev, ...).
                kept = os.statvfs(target).f_flag & _KEPT_MOUNT_FLAGS
                _mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | kept)
        for path in spec.tmpfs:
            target = spec.root / path.lstrip("/")
            target.mkdir(parents=True, exist_ok=True)
            _mount("tmpfs", str(target), "tmpfs", 0)  # gone with the namespace, whatever it holds
    pid = os.fork()
    if pid == 0:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        _init_in_namespace(spec, status_fd)
    os._exit(os.waitstatus_to_exitcode(_supervise(pid, reap_all=False)) & 0xFF)


def _map_user_namespace(child: int, maps: tuple[IdMap, IdMap], ready: int, go: int) -> None:
    """Once `child` has made its user namespace, map it with the setuid newuidmap/newgidmap
    (only they may map subordinate ids), then let it go on."""
    if os.read(ready, 1) != b"u":
        return  # it failed before unsharing and said why
    for tool, idmap in zip(("newuidmap", "newgidmap"), maps):
        result = subprocess.run([tool, str(child), *idmap.newidmap_args()], capture_output=True, text=True)
        if result.returncode != 0:
            os.write(go, b"!")
            reason = (result.stderr.strip().splitlines() or [f"exit {result.returncode}"])[-1]
            raise SandboxError(f"cannot map the sandbox's user namespace ({tool}: {reason}); check /etc/sub"
                               f"{tool[3:6]} and that {tool} is setuid root (package uidmap)")
    os.write(go, b"g")


def enter(spec: Enter, raise_on_interrupt: bool = False) -> int:
    """Run spec.argv in fresh mount and PID namespaces; return its exit code.

    A command killed by a signal returns -SIGNUM (as subprocess does). With raise_on_interrupt,
    a command that ended after an interrupt (INTERRUPTS) reached us raises KeyboardInterrupt
    instead: its failure is the interrupt's, not one to report (a step of `ensure`).
    """
    if spec.root is not None and not Path(spec.root, "proc").is_dir():
        raise SandboxError(f"sandbox root {spec.root} has no /proc: it is corrupted; run `python3 -m sandbox clean` then `ensure`")
    maps = rootless_maps() if rootless() else None
    read_fd, write_fd = os.pipe()
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        os.close(ready_r)
        os.close(go_w)
        try:
            _namespace_child(spec, write_fd, None if maps is None else (ready_w, go_r))
        except BaseException as e:  # noqa: BLE001
            print(f"sandbox: cannot set up the namespace: {e}", file=sys.stderr, flush=True)
            os._exit(125)
    for fd in (write_fd, ready_w, go_r):
        os.close(fd)
    try:
        if maps is not None:
            _map_user_namespace(pid, maps, ready_r, go_w)
    except BaseException:
        os.waitpid(pid, 0)
        os.close(read_fd)
        raise
    finally:
        os.close(ready_r)
        os.close(go_w)
    old = {sig: signal.getsignal(sig) for sig in _FORWARDED_SIGNALS}
    received: list[int] = []
    try:
        status = _supervise(pid, reap_all=False, received=received)
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    if raise_on_interrupt and set(received) & set(INTERRUPTS):
        os.close(read_fd)
        raise KeyboardInterrupt
    with os.fdopen(read_fd, "rb") as f:
        died_by = f.read().decode()
    if died_by:
        return -int(died_by)
    return os.waitstatus_to_exitcode(status)
