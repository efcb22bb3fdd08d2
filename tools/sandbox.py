#!/usr/bin/env python3
"""Offline build sandbox: a Debian sid root with Bazel 7.7.1 and a real ROCm.

The host is Debian 12 (no modern Bazel, no ROCm). Debian sid packages
`bazel-bootstrap` 7.7.1 and experimental packages ROCm 7.2; both need sid's
libc, so they live in a root filesystem that this tool builds, keeps up to date
and enters:

  ensure [--rocm=minimal|full]   build or update the root (idempotent, atomic, locked)
  run [--] CMD...                run CMD inside it, with this checkout at the same path
  info                           Bazel / clang / HIP versions and the root's size
  clean [--all]                  remove the root (and with --all every cache)

Everything lives under ${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build/. The package
set is declared once, in LAYERS below; its hash names the root, so a change to
it rebuilds. A root is built beside the current one and swapped in with one
atomic symlink rename: an interrupted `ensure` never leaves a root that `run`
would use. Every command inside the root runs in private mount and PID
namespaces: no mount and no process (a Bazel server included) outlives it.

Stdlib only; runs on the host's Python 3.11 as root.
"""

from __future__ import annotations

import argparse
import configparser
import contextlib
import ctypes
import dataclasses
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

# --------------------------------------------------------------------------
# The package set: the one place that says what the root contains.
# --------------------------------------------------------------------------

# Bump when the way a root is set up changes (apt configuration, bazelrc, ...)
# so that existing roots are rebuilt.
ROOT_FORMAT = 1
SUITE = "sid"
DEFAULT_MIRROR = "http://deb.debian.org/debian"


@dataclasses.dataclass(frozen=True)
class Layer:
    """Packages installed in one apt transaction, from one target release."""

    name: str
    packages: tuple[str, ...]
    # apt's target release for this layer ("" = the default, sid).
    target_release: str = ""
    # Files (inside the root) that must exist once the layer is installed;
    # a missing one means the root is corrupted.
    probes: tuple[str, ...] = ()


# sid packages come first: installing ROCm from experimental upgrades libc6 to
# experimental's, after which some sid packages no longer resolve.
BASE = Layer(
    name="base",
    packages=(
        "bazel-bootstrap",  # 7.7.1; pulls Debian's rules_cc/java/python/proto, platforms, skylib
        "bazel-rules-shell",
        "bazel-rules-pkg",
        "python3",
        "python3-venv",
        "python3-dev",
        "git",
        "ca-certificates",
        "binutils",
        "file",
        "zstd",
        "xz-utils",
        # The loopback remote-execution cluster of the rbe test tier: BuildGrid
        # (from PyPI) keeps its state in PostgreSQL; buildbox is the worker side.
        "postgresql",
        "buildbox",
    ),
    probes=("usr/bin/bazel", "usr/bin/python3", "usr/bin/git", "usr/bin/gcc", "usr/bin/buildbox-casd", "usr/bin/buildbox-worker"),
)
ROCM_MINIMAL = Layer(
    name="rocm-minimal",
    target_release="experimental",
    packages=(
        "hipcc",
        "libamdhip64-dev",
        "librocm-core-dev",  # installs rocm-core/rocm_version.h
        "rocm-device-libs-22",
    ),
    probes=(
        "usr/bin/hipcc",
        "usr/include/hip/hip_version.h",
        "usr/include/rocm-core/rocm_version.h",
    ),
)
ROCM_FULL = Layer(
    name="rocm-full",
    target_release="experimental",
    packages=(
        "librocblas-dev",
        "libhipblas-dev",
        "libhipblaslt-dev",
        "libhipsolver-dev",
        "libhipsparse-dev",
        "libhipfft-dev",
        "libhiprand-dev",
        "librccl-dev",
        "libmiopen-dev",
        "librocprim-dev",
        "libhipcub-dev",
        "rocminfo",
    ),
    probes=("usr/include/rocblas/rocblas.h", "usr/bin/rocminfo"),
)
# What JAX's own FFI kernels compile against besides ROCm (jaxlib/rocm/BUILD.bazel):
# Eigen (header-only) and numpy's C headers for the sandbox's Python. Layers after
# rocm-full, so that a root without them is extended, not rebuilt.
JAX_KERNEL_DEPS = Layer(
    name="jax-kernel-deps",
    packages=("libeigen3-dev", "python3-numpy"),
    probes=("usr/include/eigen3/Eigen/Core",),
)
# rocSOLVER's headers at the release of the runtime rocm-full already installed
# (hipSOLVER depends on librocsolver0 7.2): JAX's gesdd calls rocSOLVER directly.
ROCM_SOLVER = Layer(
    name="rocm-solver",
    target_release="experimental",
    packages=("librocsolver-dev",),
    probes=("usr/include/rocsolver/rocsolver.h",),
)
PROFILES: dict[str, tuple[Layer, ...]] = {
    "minimal": (BASE, ROCM_MINIMAL),
    "full": (BASE, ROCM_MINIMAL, ROCM_FULL, JAX_KERNEL_DEPS, ROCM_SOLVER),
}
DEFAULT_PROFILE = "minimal"
# Free space an `ensure` needs before it starts (measured roots: 3.0 and 9.3 GB,
# plus the downloaded packages).
REQUIRED_FREE_GB = {"minimal": 5, "full": 14}

STAMP = ".jax-rocm-sandbox.json"


def layer_hashes(layers: Sequence[Layer]) -> list[str]:
    """Chained hashes: a layer's hash covers itself and every layer below it."""
    digest = hashlib.sha256(json.dumps({"format": ROOT_FORMAT, "suite": SUITE}).encode()).hexdigest()
    out = []
    for layer in layers:
        spec = json.dumps(dataclasses.asdict(layer), sort_keys=True)
        digest = hashlib.sha256((digest + spec).encode()).hexdigest()
        out.append(digest)
    return out


@dataclasses.dataclass(frozen=True)
class Stamp:
    """What a finished root contains; written last, read to decide what to do."""

    layers: tuple[tuple[str, str], ...]  # (name, chained hash)
    created: float

    def to_json(self) -> str:
        return json.dumps({"format": ROOT_FORMAT, "layers": [list(x) for x in self.layers], "created": self.created}, indent=1)

    @staticmethod
    def parse(text: str) -> "Stamp":
        data = json.loads(text)
        return Stamp(layers=tuple((str(n), str(h)) for n, h in data["layers"]), created=float(data["created"]))


def stamp_for(layers: Sequence[Layer], created: float) -> Stamp:
    return Stamp(layers=tuple(zip((l.name for l in layers), layer_hashes(layers))), created=created)


@dataclasses.dataclass(frozen=True)
class Plan:
    """What `ensure` has to do to get from a root's stamp to the wanted layers."""

    action: str  # "none" | "extend" | "build"
    todo: tuple[Layer, ...]  # layers to install
    reason: str


def plan(current: Stamp | None, wanted: Sequence[Layer]) -> Plan:
    want = list(zip((l.name for l in wanted), layer_hashes(wanted)))
    if current is None:
        return Plan("build", tuple(wanted), "no sandbox root yet")
    have = list(current.layers)
    if have[: len(want)] == want:
        return Plan("none", (), "up to date")
    if want[: len(have)] == have:
        return Plan("extend", tuple(wanted[len(have):]), "adding " + ", ".join(l.name for l in wanted[len(have):]))
    # Neither is a prefix of the other, so they differ within the shorter one.
    changed = next(w[0] for w, h in zip(want, have) if w != h)
    return Plan("build", tuple(wanted), f"package set of layer '{changed}' changed")


def root_id(layers: Sequence[Layer]) -> str:
    return "root-" + layer_hashes(layers)[-1][:12]


# --------------------------------------------------------------------------
# Errors and progress
# --------------------------------------------------------------------------


class SandboxError(Exception):
    """A one-line, actionable failure; printed without a traceback."""


def log(msg: str) -> None:
    print(f"sandbox: {msg}", file=sys.stderr, flush=True)


def fmt_secs(s: float) -> str:
    return f"{s:.1f} s" if s < 120 else f"{int(s // 60)} min {int(s % 60)} s"


# --------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Paths:
    cache: Path  # ${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build

    @staticmethod
    def default() -> "Paths":
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Paths(Path(base).absolute() / "jax-rocm-build")

    @property
    def sandbox(self) -> Path:
        return self.cache / "sandbox"

    @property
    def current(self) -> Path:
        return self.sandbox / "current"

    @property
    def build_lock(self) -> Path:
        return self.sandbox / "build.lock"

    @property
    def use_lock(self) -> Path:
        return self.sandbox / "use.lock"

    @property
    def logs(self) -> Path:
        return self.sandbox / "logs"

    @property
    def apt_archives(self) -> Path:
        """Downloaded .deb files, kept across rebuilds so a rebuild downloads nothing."""
        return self.cache / "apt-archives"

    @property
    def bazel_user_root(self) -> Path:
        """Bazel's --output_user_root: outside the root so outputs survive a rebuild."""
        return self.cache / "bazel"

    @property
    def distdir(self) -> Path:
        """Bazel's --distdir: pinned archives fetched by ordinary clients (tools/prefetch.py)."""
        return self.cache / "distdir"


# --------------------------------------------------------------------------
# Locks
# --------------------------------------------------------------------------


@contextlib.contextmanager
def flock(path: Path, exclusive: bool, waiting_msg: str) -> Iterator[int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            log(waiting_msg)
            fcntl.flock(fd, mode)
        yield fd
    finally:
        os.close(fd)


def try_flock_exclusive(path: Path) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except BlockingIOError:
        os.close(fd)
        return None


# --------------------------------------------------------------------------
# Namespaces: run a command with private mounts and PIDs
# --------------------------------------------------------------------------

_CLONE_NEWNS = 0x00020000
_CLONE_NEWPID = 0x20000000
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


def _supervise(child: int, reap_all: bool) -> int:
    """Forward signals to `child`, wait for it; return its raw wait status."""

    def forward(sig: int, _frame: object) -> None:
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
    pid = os.fork()
    if pid == 0:
        try:
            for sig in _FORWARDED_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
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
            env = spec.env if spec.env is not None else dict(os.environ)
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


def _namespace_child(spec: Enter, status_fd: int) -> None:
    """Host-PID-namespace child: make the mounts, then start PID 1."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _check(_libc.unshare(_CLONE_NEWNS | _CLONE_NEWPID), "unshare(mount, pid)")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    if spec.root is not None:
        for bind in spec.binds:
            target = _prepare_target(spec.root, bind)
            _mount(str(bind.source), target, None, _MS_BIND | (_MS_REC if bind.recursive else 0))
            if bind.readonly:
                # Keep the flags the kernel may have locked (nosuid, nodev, ...).
                kept = os.statvfs(target).f_flag & _KEPT_MOUNT_FLAGS
                _mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | kept)
    pid = os.fork()
    if pid == 0:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        _init_in_namespace(spec, status_fd)
    os._exit(os.waitstatus_to_exitcode(_supervise(pid, reap_all=False)) & 0xFF)


def enter(spec: Enter) -> int:
    """Run spec.argv in fresh mount and PID namespaces; return its exit code.

    A command killed by a signal returns -SIGNUM (as subprocess does).
    """
    if spec.root is not None and not Path(spec.root, "proc").is_dir():
        raise SandboxError(f"sandbox root {spec.root} has no /proc: it is corrupted; run `tools/sandbox.py clean` then `ensure`")
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            _namespace_child(spec, write_fd)
        except BaseException as e:  # noqa: BLE001
            print(f"sandbox: cannot set up the namespace: {e}", file=sys.stderr, flush=True)
            os._exit(125)
    os.close(write_fd)
    old = {sig: signal.getsignal(sig) for sig in _FORWARDED_SIGNALS}
    try:
        status = _supervise(pid, reap_all=False)
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    with os.fdopen(read_fd, "rb") as f:
        died_by = f.read().decode()
    if died_by:
        return -int(died_by)
    return os.waitstatus_to_exitcode(status)


# --------------------------------------------------------------------------
# What a command inside the root sees: mounts and environment
# --------------------------------------------------------------------------

CHECKOUT = Path(__file__).resolve().parent.parent
PASS_ENV = (
    "TERM", "COLORTERM", "NO_COLOR", "CI", "TZ", "SOURCE_DATE_EPOCH",
    "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
)
PASS_ENV_PREFIXES = ("PIP_", "JAX_", "JAXCI_", "ROCM_", "THEROCK_", "TF_", "XLA_", "HIP_", "ROCR_", "HSA_", "PYTEST_")
_PIP_PATH_KEYS = ("find-links", "extra-index-url", "index-url", "constraint", "requirement", "cert", "client-cert")


def host_ca_bundle() -> Path | None:
    for candidate in (os.environ.get("SSL_CERT_FILE"), "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def pip_config_files(env: dict[str, str]) -> list[Path]:
    candidates = [env.get("PIP_CONFIG_FILE", "")]
    for d in env.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":"):
        candidates.append(f"{d}/pip/pip.conf")
    candidates += ["/etc/pip.conf", str(Path.home() / ".config/pip/pip.conf"), str(Path.home() / ".pip/pip.conf")]
    return [Path(c) for c in dict.fromkeys(candidates) if c and Path(c).is_file()]


def local_paths_in(value: str) -> list[Path]:
    """Absolute local paths named by a pip setting (paths and file:// URLs)."""
    out = []
    for word in value.split():
        if word.startswith("file://"):
            word = word[len("file://"):]
        if word.startswith("/") and Path(word).exists():
            path = Path(word.rstrip("/"))
            # A local index's pages (.../simple/<name>/) may link to files beside
            # simple/ (../../files/x.whl): bind the index's whole folder.
            out.append(path.parent if path.name == "simple" else path)
    return out


def pip_binds(env: dict[str, str]) -> list[Bind]:
    """The host's pip settings, and the local folders they name, at the same paths."""
    paths: list[Path] = []
    for conf in pip_config_files(env):
        paths.append(conf)
        parser = configparser.RawConfigParser()
        with contextlib.suppress(configparser.Error, OSError):
            parser.read(conf)
            for section in parser.sections():
                for key, value in parser.items(section):
                    if key in _PIP_PATH_KEYS:
                        paths += local_paths_in(value)
    for key, value in env.items():
        if key.startswith("PIP_"):
            paths += local_paths_in(value)
    return [Bind(p, str(p), readonly=True) for p in dict.fromkeys(paths)]


def sandbox_env(extra: Iterable[str] = ()) -> dict[str, str]:
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/root",
        "USER": "root",
        "LANG": "C.UTF-8",
        "JAX_ROCM_SANDBOX": "1",
    }
    for key, value in os.environ.items():
        if key in PASS_ENV or key.startswith(PASS_ENV_PREFIXES):
            env[key] = value
    for item in extra:
        name, sep, value = item.partition("=")
        if sep:
            env[name] = value
        elif name in os.environ:
            env[name] = os.environ[name]
    return env


def standard_binds(paths: Paths) -> list[Bind]:
    paths.distdir.mkdir(parents=True, exist_ok=True)
    binds = [
        bazel_rc_bind(paths, CHECKOUT),
        bazel_launcher_bind(paths),
        Bind(Path("/dev"), "/dev", recursive=True),
        Bind(Path("/sys"), "/sys", readonly=True, recursive=True),
        Bind(Path("/tmp"), "/tmp"),
        Bind(paths.bazel_user_root, str(paths.bazel_user_root)),
        Bind(paths.distdir, str(paths.distdir), readonly=True),
    ]
    if Path("/etc/resolv.conf").exists():
        binds.append(Bind(Path("/etc/resolv.conf").resolve(), "/etc/resolv.conf", readonly=True))
    return binds


def run_binds(paths: Paths, extra: Sequence[Path], cwd: Path) -> list[Bind]:
    binds = standard_binds(paths)
    ca = host_ca_bundle()
    if ca is not None:
        binds.append(Bind(ca, "/etc/ssl/certs/ca-certificates.crt", readonly=True))
    binds += pip_binds(dict(os.environ))
    shared = CHECKOUT.parent / "shared"
    mounted = [CHECKOUT] + ([shared] if shared.is_dir() else []) + [p.resolve() for p in extra]
    if not any(cwd == m or m in cwd.parents for m in mounted + [Path("/tmp")]) and cwd != Path("/"):
        mounted.append(cwd)
    binds += [Bind(p, str(p)) for p in dict.fromkeys(mounted)]
    return binds


# --------------------------------------------------------------------------
# Building a root
# --------------------------------------------------------------------------


def read_stamp(root: Path) -> Stamp | None:
    try:
        return Stamp.parse((root / STAMP).read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return None


def current_root(paths: Paths) -> Path | None:
    try:
        target = os.readlink(paths.current)
    except OSError:
        return None
    return paths.sandbox / target


def missing_probes(root: Path, layers: Iterable[Layer]) -> list[str]:
    return [p for layer in layers for p in layer.probes if not (root / p).exists()]


def layers_of(stamp: Stamp) -> list[Layer]:
    by_name = {l.name: l for ls in PROFILES.values() for l in ls}
    return [by_name[n] for n, _ in stamp.layers if n in by_name]


class StepRunner:
    """Runs the numbered steps of one `ensure`, logging output to one file."""

    def __init__(self, paths: Paths, total: int):
        paths.logs.mkdir(parents=True, exist_ok=True)
        logs = sorted(paths.logs.glob("ensure-*.log"))
        for old in logs[:-9]:
            old.unlink(missing_ok=True)
        self.log_path = paths.logs / time.strftime("ensure-%Y%m%d-%H%M%S.log")
        self.log_file = open(self.log_path, "ab", buffering=0)
        self.total = total
        self.n = 0
        self.started = time.monotonic()

    def step(self, title: str, fn: Callable[[], None]) -> None:
        self.n += 1
        label = f"[{self.n}/{self.total}] {title}"
        log(f"{label} ...")
        self.log_file.write(f"\n===== {label}\n".encode())
        t0 = time.monotonic()
        done = threading.Event()

        def heartbeat() -> None:
            while not done.wait(30):
                log(f"{label}: still running ({fmt_secs(time.monotonic() - t0)}; log: {self.log_path})")

        thread = threading.Thread(target=heartbeat, daemon=True)
        thread.start()
        try:
            fn()
        finally:
            done.set()
        log(f"{label}: done in {fmt_secs(time.monotonic() - t0)}")

    def command(self, spec: Enter, what: str) -> None:
        rc = enter(dataclasses.replace(spec, stdout=self.log_file.fileno(), stderr=self.log_file.fileno()))
        if rc != 0:
            raise SandboxError(self.explain_failure(what, rc))

    def explain_failure(self, what: str, rc: int) -> str:
        try:
            tail = self.log_path.read_text(errors="replace").splitlines()[-200:]
        except OSError:
            tail = []
        text = "\n".join(tail)
        if "No space left on device" in text:
            return f"disk full while {what}: free space under {self.log_path.parents[2]} (or point XDG_CACHE_HOME at a larger disk), then re-run `tools/sandbox.py ensure`"
        if re.search(r"(Could not resolve|Failed to fetch|Temporary failure resolving|Connection (refused|timed out))", text):
            return f"network failure while {what}: the Debian mirror could not be reached; check connectivity/proxy and re-run (log: {self.log_path})"
        shown = "\n".join("    " + l for l in tail[-15:])
        return f"{what} failed (exit {rc}); last lines of {self.log_path}:\n{shown}"


def check_mirror(mirror: str) -> None:
    url = f"{mirror.rstrip('/')}/dists/{SUITE}/InRelease"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=20):
            pass
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise SandboxError(
            f"cannot reach the Debian mirror {mirror} ({reason}); the sandbox installs its packages from it: "
            "check the network or proxy, or pass --mirror=URL (or set JAX_ROCM_SANDBOX_MIRROR)"
        ) from None


def check_free_space(paths: Paths, profile: str) -> None:
    paths.cache.mkdir(parents=True, exist_ok=True)
    need = REQUIRED_FREE_GB[profile]
    free = shutil.disk_usage(paths.cache).free / 1e9
    if free < need:
        raise SandboxError(
            f"disk full: the '{profile}' sandbox needs about {need} GB free under {paths.cache}, {free:.1f} GB is; "
            "free space or point XDG_CACHE_HOME at a larger disk"
        )


def ensure_debootstrap() -> str:
    found = shutil.which("debootstrap") or (Path("/usr/sbin/debootstrap").exists() and "/usr/sbin/debootstrap")
    if found:
        return str(found)
    log("installing debootstrap on the host (apt-get install debootstrap)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "install", "-y", "-q", "debootstrap"], ["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "debootstrap"]):
        result = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if result.returncode == 0 and cmd[1] == "install":
            return shutil.which("debootstrap") or "/usr/sbin/debootstrap"
    raise SandboxError(f"could not install debootstrap on the host: {result.stderr.strip().splitlines()[-1:]}; install it with `apt-get install debootstrap`")


APT_CONF = """\
// Written by tools/sandbox.py. The mirror may be a dated snapshot.
Acquire::Check-Valid-Until "false";
Acquire::Retries "3";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
"""
DPKG_CONF = """\
# Written by tools/sandbox.py: a throwaway root needs no fsync and no docs.
force-unsafe-io
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
"""


def apt_sources(mirror: str) -> str:
    return (
        "# Written by tools/sandbox.py\n"
        f"Types: deb\nURIs: {mirror}\nSuites: {SUITE} experimental\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    )


def bazel_system_rc(paths: Paths, checkout: Path) -> str:
    """The root's /etc/bazel.bazelrc (Debian's /etc/bazel/bazelrc try-imports it).

    Generated for each `run` so that every workspace inside the sandbox (this
    checkout, a test's scratch workspace, an XLA checkout) resolves modules
    offline through this checkout's stand-ins, and keeps its outputs outside
    the root so that they survive a rebuild of it.
    """
    offline = (checkout / "tools/offline/offline.bazelrc").read_text()
    return (
        "# Generated by tools/sandbox.py for this `run`.\n"
        f"startup --output_user_root={paths.bazel_user_root}\n"
        # Pinned archives that tools/prefetch.py fetched with pip: Bazel takes a file
        # from here when its name and sha256 match, without touching the network.
        f"common --distdir={paths.distdir}\n"
        + offline.replace("%workspace%", str(checkout))
    )


def bazel_rc_bind(paths: Paths, checkout: Path) -> Bind:
    text = bazel_system_rc(paths, checkout)
    path = paths.sandbox / "generated" / f"bazel-{hashlib.sha256(text.encode()).hexdigest()[:12]}.bazelrc"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.rename(tmp, path)
    return Bind(path, "/etc/bazel.bazelrc", readonly=True)


# /usr/local/bin/bazel in the root: like bazelisk, run the workspace's tools/bazel if
# it has one (with BAZEL_REAL set), else Debian's Bazel.
BAZEL_LAUNCHER = """\
#!/bin/sh
# Written by tools/sandbox.py: runs <workspace>/tools/bazel when present, as bazelisk does.
dir=$PWD
while [ "$dir" != / ]; do
  for marker in MODULE.bazel REPO.bazel WORKSPACE WORKSPACE.bazel; do
    if [ -f "$dir/$marker" ]; then
      if [ -x "$dir/tools/bazel" ]; then BAZEL_REAL=/usr/bin/bazel exec "$dir/tools/bazel" "$@"; fi
      exec /usr/bin/bazel "$@"
    fi
  done
  dir=$(dirname "$dir")
done
exec /usr/bin/bazel "$@"
"""


def bazel_launcher_bind(paths: Paths) -> Bind:
    path = paths.sandbox / "generated" / f"bazel-launcher-{hashlib.sha256(BAZEL_LAUNCHER.encode()).hexdigest()[:12]}.sh"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(BAZEL_LAUNCHER)
        tmp.chmod(0o755)
        os.rename(tmp, path)
    return Bind(path, "/usr/local/bin/bazel", readonly=True)


def configure_root(root: Path, paths: Paths, mirror: str) -> None:
    (root / "etc/apt/sources.list").unlink(missing_ok=True)
    (root / "etc/apt/sources.list.d").mkdir(parents=True, exist_ok=True)
    (root / "etc/apt/sources.list.d/debian.sources").write_text(apt_sources(mirror))
    (root / "etc/apt/apt.conf.d/90jax-rocm-sandbox").write_text(APT_CONF)
    (root / "etc/dpkg/dpkg.cfg.d").mkdir(parents=True, exist_ok=True)
    (root / "etc/dpkg/dpkg.cfg.d/90jax-rocm-sandbox").write_text(DPKG_CONF)
    # Packages with services (postgresql) must not start them while installing.
    policy = root / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\n# Written by tools/sandbox.py: never start services in the sandbox root.\nexit 101\n")
    policy.chmod(0o755)


def install_spec(root: Path, paths: Paths, layer: Layer) -> Enter:
    release = ["-t", layer.target_release] if layer.target_release else []
    script = (
        "set -e; apt-get update -q; "
        f"apt-get install -y -q {' '.join(release)} {' '.join(layer.packages)}"
    )
    env = sandbox_env()
    env["DEBIAN_FRONTEND"] = "noninteractive"
    binds = standard_binds(paths) + [Bind(paths.apt_archives, "/var/cache/apt/archives")]
    return Enter(("/bin/sh", "-c", script), root, tuple(binds), env)


def remove_tree(path: Path) -> None:
    if not path.exists() and not path.is_symlink():
        return
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    below = [m for m in mounts if m == str(path) or m.startswith(str(path) + "/")]
    if below:
        raise SandboxError(f"refusing to delete {path}: {below[0]} is mounted inside it; unmount it first (umount -R {below[0]})")
    subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=True)


def collect_garbage(paths: Paths, keep: Path | None) -> None:
    """Delete partial roots and superseded roots no running command uses."""
    for partial in paths.sandbox.glob("root-*.partial"):
        log(f"removing unfinished root {partial.name} left by an interrupted ensure")
        remove_tree(partial)
    old = [p for p in paths.sandbox.glob("root-*") if p != keep and not p.name.endswith(".partial")]
    if not old:
        return
    fd = try_flock_exclusive(paths.use_lock)
    if fd is None:
        log(f"keeping {len(old)} old root(s) while sandbox commands still use them; the next ensure removes them")
        return
    try:
        for p in old:
            log(f"removing superseded root {p.name}")
            remove_tree(p)
    finally:
        os.close(fd)


def build_root(paths: Paths, wanted: Sequence[Layer], plan_: Plan, base_root: Path | None, mirror: str) -> Path:
    final = paths.sandbox / root_id(wanted)
    partial = final.with_name(final.name + ".partial")
    remove_tree(partial)
    paths.apt_archives.mkdir(parents=True, exist_ok=True)
    paths.bazel_user_root.mkdir(parents=True, exist_ok=True)
    paths.distdir.mkdir(parents=True, exist_ok=True)
    fresh = plan_.action == "build"
    steps = (2 if fresh else 1) + len(plan_.todo) + 1
    runner = StepRunner(paths, steps)
    log(f"log: {runner.log_path}")
    if fresh:
        debootstrap = ensure_debootstrap()

        def bootstrap() -> None:
            runner.command(
                Enter(
                    (debootstrap, "--variant=minbase", "--include=ca-certificates",
                     f"--cache-dir={paths.apt_archives}", SUITE, str(partial), mirror),
                    None,
                ),
                f"debootstrap {SUITE}",
            )

        runner.step(f"debootstrap {SUITE} (minbase) into {partial.name}", bootstrap)
        runner.step("configure apt (sid + experimental), dpkg and bazel", lambda: configure_root(partial, paths, mirror))
    else:
        assert base_root is not None

        def copy() -> None:
            subprocess.run(["cp", "-a", "--reflink=auto", str(base_root), str(partial)], check=True)
            configure_root(partial, paths, mirror)

        runner.step(f"copy {base_root.name} to extend it atomically", copy)
    for layer in plan_.todo:
        release = layer.target_release or SUITE
        runner.step(
            f"install {layer.name} from {release}: {' '.join(layer.packages)}",
            lambda layer=layer: runner.command(install_spec(partial, paths, layer), f"installing {layer.name}"),
        )

    def finish() -> None:
        missing = missing_probes(partial, wanted)
        if missing:
            raise SandboxError(f"packages installed but {missing[0]} is missing from the root; the package set in tools/sandbox.py LAYERS is wrong")
        (partial / STAMP).write_text(stamp_for(wanted, time.time()).to_json())
        remove_tree(final)
        os.rename(partial, final)
        link = paths.current.with_name("current.new")
        link.unlink(missing_ok=True)
        link.symlink_to(final.name)
        os.rename(link, paths.current)  # atomic swap

    runner.step(f"activate {final.name}", finish)
    log(f"ready in {fmt_secs(time.monotonic() - runner.started)}: {final}")
    return final


def require_root_user() -> None:
    if os.geteuid() != 0:
        raise SandboxError("tools/sandbox.py must run as root (it runs debootstrap, mount and chroot): use sudo")


def ensure(paths: Paths, profile: str, mirror: str) -> Path:
    require_root_user()
    wanted = PROFILES[profile]
    root = current_root(paths)
    stamp = read_stamp(root) if root else None
    p = plan(stamp, wanted)
    if p.action == "none" and root is not None and not missing_probes(root, layers_of(stamp)):
        log(f"up to date, nothing to do ({root.name}: {', '.join(n for n, _ in stamp.layers)})")
        return root
    with flock(paths.build_lock, exclusive=True, waiting_msg="another `ensure` is building the sandbox; waiting for it"):
        root = current_root(paths)
        stamp = read_stamp(root) if root else None
        if root is not None and stamp is not None:
            broken = missing_probes(root, layers_of(stamp))
            if broken:
                log(f"root {root.name} is corrupted ({broken[0]} is missing); rebuilding it")
                stamp = None
        elif root is not None:
            log(f"root {root.name} has no valid stamp; rebuilding it")
        p = plan(stamp, wanted)
        if p.action == "none":
            assert root is not None
            log(f"up to date, nothing to do ({root.name})")
            collect_garbage(paths, keep=root)
            return root
        log(f"{p.reason}: building the '{profile}' root")
        check_free_space(paths, profile)
        check_mirror(mirror)
        collect_garbage(paths, keep=root)
        try:
            new_root = build_root(paths, wanted, p, root, mirror)
        except OSError as e:
            if e.errno == errno.ENOSPC:
                raise SandboxError(f"disk full while building the sandbox under {paths.sandbox}: free space or point XDG_CACHE_HOME at a larger disk") from None
            raise
        collect_garbage(paths, keep=new_root)
        return new_root


def ready_root(paths: Paths) -> Path | None:
    root = current_root(paths)
    if root is None:
        return None
    stamp = read_stamp(root)
    if stamp is None or missing_probes(root, layers_of(stamp)):
        return None
    return root


# --------------------------------------------------------------------------
# Subcommands
# --------------------------------------------------------------------------


def cmd_ensure(args: argparse.Namespace, paths: Paths) -> int:
    ensure(paths, args.rocm, args.mirror)
    return 0


def cmd_run(args: argparse.Namespace, paths: Paths) -> int:
    require_root_user()
    argv = list(args.cmd)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise SandboxError("run: no command given; usage: tools/sandbox.py run [--] CMD [ARGS...]")
    if ready_root(paths) is None:
        ensure(paths, args.rocm or DEFAULT_PROFILE, args.mirror)
    elif args.rocm:
        ensure(paths, args.rocm, args.mirror)
    cwd = Path.cwd()
    with flock(paths.use_lock, exclusive=False, waiting_msg="waiting for the sandbox to be swapped or cleaned"):
        root = ready_root(paths)
        if root is None:
            raise SandboxError(f"sandbox root under {paths.sandbox} is corrupted or was removed; run `tools/sandbox.py ensure`")
        spec = Enter(
            tuple(argv), root, tuple(run_binds(paths, [Path(b) for b in args.bind], cwd)),
            sandbox_env(args.env), str(cwd),
        )
        rc = enter(spec)
    if rc < 0:  # died by a signal: die by the same one
        signal.signal(-rc, signal.SIG_DFL)
        os.kill(os.getpid(), -rc)
    return rc


def capture(root: Path, paths: Paths, argv: Sequence[str]) -> str:
    read_fd, write_fd = os.pipe()
    result: list[bytes] = []

    def read_all() -> None:
        while chunk := os.read(read_fd, 1 << 16):
            result.append(chunk)

    reader = threading.Thread(target=read_all)
    reader.start()
    try:
        enter(Enter(tuple(argv), root, tuple(standard_binds(paths)), sandbox_env(), "/", stdout=write_fd, stderr=write_fd))
    finally:
        os.close(write_fd)
        reader.join()
        os.close(read_fd)
    return b"".join(result).decode(errors="replace")


def cmd_info(args: argparse.Namespace, paths: Paths) -> int:
    require_root_user()
    root = ready_root(paths)
    if root is None:
        raise SandboxError(f"no usable sandbox under {paths.sandbox}: run `tools/sandbox.py ensure`")
    stamp = read_stamp(root)
    assert stamp is not None
    out = capture(root, paths, ["/bin/sh", "-c",
                                "bazel --version; clang=$(ls -d /usr/lib/llvm-*/bin/clang 2>/dev/null | sort -V | tail -1); "
                                "[ -n \"$clang\" ] && $clang --version | head -1; command -v hipcc >/dev/null && hipcc --version 2>/dev/null | grep -i 'HIP version'; "
                                "grep -h 'define ROCM_VERSION_\\(MAJOR\\|MINOR\\|PATCH\\)' /usr/include/rocm-core/rocm_version.h 2>/dev/null | awk '{printf \"%s%s\", sep, $3; sep=\".\"} END {if (NR) print \"\"}' | sed 's/^/ROCm /'; "
                                "python3 --version"])
    size = subprocess.run(["du", "-sxh", str(root)], capture_output=True, text=True).stdout.split("\t")[0]
    print(f"root:    {root}")
    print(f"layers:  {', '.join(n for n, _ in stamp.layers)}")
    print(f"created: {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(stamp.created))}")
    print(f"size:    {size}")
    for line in filter(None, map(str.strip, out.splitlines())):
        print(f"         {line}")
    return 0


def cmd_clean(args: argparse.Namespace, paths: Paths) -> int:
    require_root_user()
    with flock(paths.build_lock, exclusive=True, waiting_msg="waiting for a running `ensure` to finish"), \
         flock(paths.use_lock, exclusive=True, waiting_msg="waiting for running sandbox commands to finish"):
        paths.current.unlink(missing_ok=True)
        for p in sorted(paths.sandbox.glob("root-*")):
            log(f"removing {p}")
            remove_tree(p)
        if args.all:
            for p in (paths.apt_archives, paths.bazel_user_root):
                log(f"removing {p}")
                remove_tree(p)
    log("clean")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tools/sandbox.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  tools/sandbox.py ensure --rocm=full          # Bazel + the whole ROCm library set\n"
            "  tools/sandbox.py run -- bazel build //...    # build this checkout offline\n"
            "  tools/sandbox.py run --bind /srv/src -- make -C /srv/src   # another host folder\n"
            "  tools/sandbox.py info\n\n"
            f"Caches live under ${{XDG_CACHE_HOME:-~/.cache}}/jax-rocm-build (now {Paths.default().cache}).\n"
            "Inside `run`: this checkout, ../shared, /tmp and the current directory at their own paths;\n"
            "the host's CA bundle, resolv.conf and pip settings; environment: " + ", ".join(PASS_ENV[:6]) +
            ", proxies and " + " ".join(p + "*" for p in PASS_ENV_PREFIXES) + ".\n"
            "Exit status of `run` is the command's; 125 means the sandbox itself failed."
        ),
    )
    p.add_argument("--mirror", default=os.environ.get("JAX_ROCM_SANDBOX_MIRROR", DEFAULT_MIRROR),
                   help="Debian mirror (default: %(default)s; env JAX_ROCM_SANDBOX_MIRROR)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    e = sub.add_parser("ensure", help="create or update the root (a no-op when up to date)")
    e.add_argument("--rocm", choices=sorted(PROFILES), default=DEFAULT_PROFILE,
                   help="minimal: hipcc, HIP runtime and headers, rocm-core, device libs; "
                        "full: also rocBLAS, hipBLAS(Lt), hipSOLVER, hipSPARSE, hipFFT, hipRAND, RCCL, MIOpen, rocPRIM, hipCUB, rocminfo "
                        "(default: %(default)s; a full root satisfies minimal)")
    e.set_defaults(fn=cmd_ensure)
    r = sub.add_parser("run", help="run a command inside the root (ensures it first if there is none)")
    r.add_argument("--rocm", choices=sorted(PROFILES), default=None, help="ensure this profile first")
    r.add_argument("--bind", action="append", default=[], metavar="PATH", help="also mount this host path at the same path (repeatable)")
    r.add_argument("--env", "-e", action="append", default=[], metavar="NAME[=VALUE]", help="pass or set an environment variable (repeatable)")
    r.add_argument("cmd", nargs=argparse.REMAINDER, metavar="[--] CMD...")
    r.set_defaults(fn=cmd_run)
    i = sub.add_parser("info", help="print Bazel, clang, HIP and ROCm versions and the root's size")
    i.set_defaults(fn=cmd_info)
    c = sub.add_parser("clean", help="remove the root (keeps downloaded packages and Bazel's cache)")
    c.add_argument("--all", action="store_true", help="also remove downloaded packages and Bazel's output root")
    c.set_defaults(fn=cmd_clean)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.fn(args, Paths.default())
    except SandboxError as e:
        log(f"error: {e}")
        return 125 if args.command == "run" else 1
    except KeyboardInterrupt:
        log("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
