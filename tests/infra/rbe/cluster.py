"""A throwaway remote-execution (REAPI) cluster on loopback, for --config=rocm_rbe.

    python3 -m sandbox run -- python3 -m tests.infra.rbe.cluster run -- sh -c \\
        'bazel build --config=rocm_rbe --remote_executor=$JAX_ROCM_RBE_EXECUTOR \\
                     --remote_instance_name=$JAX_ROCM_RBE_INSTANCE //tests/rocm/hip:libhip_kernels.so'
    python3 -m sandbox run -- python3 -m tests.infra.rbe.cluster up     # until Ctrl-C; prints the flags

Runs inside the sandbox root (it needs the root's `postgresql` and `buildbox`
packages), from the checkout, as a module of it. Started in this order, each waited
for with a time limit:

    PostgreSQL        BuildGrid's scheduler database (BuildGrid refuses SQLite)
    BuildGrid         REAPI server: Execution, ActionCache, CAS, ByteStream, Bots; instance "main"
    buildbox-casd     the worker's local CAS, a proxy of BuildGrid's
    buildbox-worker   runs each action with one of two runners (--runner):
        isolated      (default) buildbox-run-bubblewrap: the action sees only its input
                      root, the worker image (this root's /usr /lib /lib64 /bin /sbin /etc,
                      read-only, as a container image would give them), a private /tmp,
                      /proc and /dev; nothing of the checkout, Bazel's output base,
                      /var/tmp or the host. An action that reads an undeclared path fails
                      here as it would on a real cluster's worker.
        hosttools     buildbox-run-hosttools: on this root as is (the checkout, /tmp ...
                      all visible); faster to start, for tests that only need an endpoint
    Either way remote actions find ROCm (Debian's, under /usr) at the same absolute
    paths as local ones.

Everything listens on 127.0.0.1 only, on free ports chosen at start. Security: any
local user can reach those ports while the cluster runs, and the worker runs what it
is sent as the user running this tool; use it on a machine you do not share.
State (database, CAS, logs) lives in a temporary folder removed at the end unless
--keep. BuildGrid is pip-installed once into
${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build/venvs/buildgrid-<hash> and reused.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

BUILDGRID_REQUIREMENTS = ("buildgrid==0.9.1",)
INSTANCE = "main"
LOOPBACK = "127.0.0.1"
DB_USER = "bgd"
DB_NAME = "bgd"
WORKER_NAME = "jax-rocm-rbe-worker"
# PostgreSQL refuses to run as root; the Debian package creates this system user.
POSTGRES_SYSTEM_USER = "postgres"
# Seconds each step may take before the cluster is declared broken.
TIMEOUTS = {"venv": 600.0, "postgres": 60.0, "migrate": 120.0, "buildgrid": 90.0, "casd": 30.0, "worker": 60.0}
STOP_GRACE = 5.0
# BuildGrid's gRPC threads and concurrent RPCs (its config says why).
THREAD_POOL_SIZE = 200
MAX_CONCURRENT_RPCS = 1000
LOG_TAIL_LINES = 25


class ClusterError(Exception):
    pass


def log(msg: str) -> None:
    print(f"rbe_cluster: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Pure helpers: what to run, with which ports and paths
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Ports:
    postgres: int
    buildgrid: int
    casd: int


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where one cluster keeps its state: all below one folder."""

    state: Path

    @property
    def postgres(self) -> Path:
        return self.state / "postgres"

    @property
    def pg_data(self) -> Path:
        return self.postgres / "data"

    @property
    def pg_socket(self) -> Path:
        return self.postgres / "socket"

    @property
    def storage(self) -> Path:
        return self.state / "buildgrid-cas"

    @property
    def casd(self) -> Path:
        return self.state / "casd"

    @property
    def config(self) -> Path:
        return self.state / "buildgrid.yml"

    @property
    def logs(self) -> Path:
        return self.state / "logs"

    @property
    def bwrap_bin(self) -> Path:
        return self.state / "bin"

    @property
    def bwrap_mount(self) -> Path:
        return self.state / "bwrap-root"


# The worker's runners (--runner); buildbox-run-bubblewrap needs bwrap (Debian's buildbox
# depends on bubblewrap, so the root has it).
RUNNERS = {
    "isolated": Path("/usr/bin/buildbox-run-bubblewrap"),
    "hosttools": Path("/usr/bin/buildbox-run-hosttools"),
}
DEFAULT_RUNNER = "isolated"
BWRAP = Path("/usr/bin/bwrap")
# The isolated worker's image: what a container image would provide, taken read-only
# from the root the worker runs in. Every other path an action reads must be one of
# its inputs.
WORKER_IMAGE = ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc")
# buildbox-run-bubblewrap calls `bwrap` from PATH: the isolated worker's PATH starts
# with a folder holding this as `bwrap` (its docstring says why the sandbox needs it).
BWRAP_IN_SANDBOX = Path(__file__).resolve().parent / "bwrap_in_sandbox.py"
BWRAP_MOUNT_ENV = "JAX_ROCM_RBE_BWRAP_MOUNT"


@dataclasses.dataclass(frozen=True)
class Tools:
    venv: Path
    pg_bin: Path
    casd: Path = Path("/usr/bin/buildbox-casd")
    worker: Path = Path("/usr/bin/buildbox-worker")
    runner: Path = RUNNERS["hosttools"]

    @property
    def bgd(self) -> Path:
        return self.venv / "bin" / "bgd"


@dataclasses.dataclass(frozen=True)
class Proc:
    """One command of the cluster; user=None runs it as the current user."""

    name: str
    argv: tuple[str, ...]
    user: str | None = None
    env: tuple[tuple[str, str], ...] = ()  # set on top of ours


def venv_dir(cache: Path, requirements: Sequence[str], python_version: str) -> Path:
    digest = hashlib.sha256("\n".join([*requirements, python_version]).encode()).hexdigest()[:12]
    return cache / "venvs" / f"buildgrid-{digest}"


def default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jax-rocm-build"


def free_ports(count: int) -> list[int]:
    """Ports free on loopback now; all held open together so that they differ."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(count)]
        for s in socks:
            s.bind((LOOPBACK, 0))
        return [s.getsockname()[1] for s in socks]


def find_pg_bin(root: Path = Path("/usr/lib/postgresql")) -> Path | None:
    """The newest installed PostgreSQL's bin folder (Debian keeps them per major version)."""
    found = sorted((d for d in root.glob("*/bin") if (d / "postgres").exists()), key=lambda d: int(d.parent.name))
    return found[-1] if found else None


def executor_url(ports: Ports) -> str:
    return f"grpc://{LOOPBACK}:{ports.buildgrid}"


def bazel_flags(ports: Ports) -> list[str]:
    return [f"--remote_executor={executor_url(ports)}", f"--remote_instance_name={INSTANCE}"]


def worker_image(paths: Sequence[str] = WORKER_IMAGE) -> tuple[tuple[str, str], ...]:
    """(path inside, real path here) of each image folder that exists. /bin, /lib ... are
    links into /usr in Debian sid; buildbox would pass bwrap the link's relative target
    (`usr/lib`), which bwrap reads from its own working folder, so the real path is given."""
    return tuple((p, os.path.realpath(p)) for p in paths if os.path.exists(p))


UID_MAP = Path("/proc/self/uid_map")


def in_user_namespace(uid_map: str) -> bool:
    """True unless `uid_map` (/proc/self/uid_map) is the initial namespace's identity map."""
    return uid_map.split() != ["0", "0", "4294967295"]


def runner_args(runner: str, image: Sequence[tuple[str, str]], user_namespace: bool) -> tuple[str, ...]:
    """What the worker passes its runner: for `isolated`, the worker image's read-only binds
    (buildbox-run-bubblewrap otherwise builds the action's root from its input root alone).
    In a user namespace (the sandbox run without root), inputs are staged by copies and hard
    links: the runner's default, FUSE, cannot mount there (its stager exits 2)."""
    staging = ("--runner-arg=--staging-mode=copy-or-link",) if user_namespace else ()
    if runner == "hosttools":
        return staging
    return staging + tuple(f"--runner-arg=--ro-bind-mount={real}:{inside}" for inside, real in image)


def worker_env(runner: str, layout: Layout, path: str) -> tuple[tuple[str, str], ...]:
    """The worker's own variables: for `isolated`, PATH finds bwrap_in_sandbox.py as `bwrap`."""
    if runner == "hosttools":
        return ()
    return (("PATH", f"{layout.bwrap_bin}:{path}"), (BWRAP_MOUNT_ENV, str(layout.bwrap_mount)))


def client_env(ports: Ports) -> dict[str, str]:
    """What `run` exports to its command."""
    return {"JAX_ROCM_RBE_EXECUTOR": executor_url(ports), "JAX_ROCM_RBE_INSTANCE": INSTANCE}


def db_url(ports: Ports) -> str:
    # No password: the server only listens on loopback and trusts it (initdb --auth=trust).
    return f"postgresql://{DB_USER}@{LOOPBACK}:{ports.postgres}/{DB_NAME}"


def buildgrid_config(ports: Ports, layout: Layout) -> str:
    """BuildGrid's server YAML: one insecure loopback channel and one instance."""
    return f"""\
# Generated by tests/infra/rbe/cluster.py for one throwaway cluster.
# Bazel holds one Execute stream open per running action (rocm_rbe's --jobs=64) and
# uploads inputs alongside; BuildGrid's default (5 threads a CPU, as many RPCs) refuses
# the excess with RESOURCE_EXHAUSTED, failing the build.
thread-pool-size: {THREAD_POOL_SIZE}
maximum-concurrent-rpcs: {MAX_CONCURRENT_RPCS}

server:
  - !channel
    address: "{LOOPBACK}:{ports.buildgrid}"
    insecure-mode: true

connections:
  - !sql-connection &sql
    connection-string: {db_url(ports)}
    pool-size: 10
    max-overflow: 20

storages:
  - !disk-storage &storage
    path: {layout.storage}

caches:
  - !lru-action-cache &cache
    storage: *storage
    max-cached-refs: 100000
    allow-updates: true
    # Bazel must see a failed compile fail again, not a cached failure.
    cache-failed-actions: false

schedulers:
  - !sql-scheduler &scheduler
    sql: *sql
    storage: *storage
    action-cache: *cache

instances:
  - name: {INSTANCE}
    services:
      - !action-cache
        cache: *cache
      - !execution
        scheduler: *scheduler
        endpoints: [execution, operations]
      - !bots
        scheduler: *scheduler
      - !cas
        storage: *storage
      - !bytestream
        storage: *storage
"""


@dataclasses.dataclass(frozen=True)
class Plan:
    """The command lines of one cluster."""

    layout: Layout
    ports: Ports
    tools: Tools
    jobs: int
    postgres_user: str | None
    runner: str = "hosttools"
    image: tuple[tuple[str, str], ...] = ()
    path: str = "/usr/bin:/bin"  # the PATH the worker is started with

    def pg(self, program: str) -> str:
        return str(self.tools.pg_bin / program)

    def initdb(self) -> Proc:
        argv = (self.pg("initdb"), "-D", str(self.layout.pg_data), "-U", DB_USER, "--auth=trust",
                "--encoding=UTF8", "--locale=C", "--no-sync")
        return Proc("initdb", argv, self.postgres_user)

    def postgres(self) -> Proc:
        argv = (self.pg("postgres"), "-D", str(self.layout.pg_data), "-p", str(self.ports.postgres),
                "-c", f"listen_addresses={LOOPBACK}", "-c", f"unix_socket_directories={self.layout.pg_socket}",
                # A throwaway database: durability only costs time.
                "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
        return Proc("postgres", argv, self.postgres_user)

    def pg_isready(self) -> Proc:
        return Proc("pg_isready", (self.pg("pg_isready"), "-q", "-h", LOOPBACK, "-p", str(self.ports.postgres),
                                   "-U", DB_USER, "-d", "postgres"))

    def createdb(self) -> Proc:
        return Proc("createdb", (self.pg("createdb"), "-h", LOOPBACK, "-p", str(self.ports.postgres), "-U", DB_USER, DB_NAME))

    def registered_bots(self) -> Proc:
        query = f"SELECT count(*) FROM bots WHERE bot_id = '{WORKER_NAME}'"
        return Proc("psql", (self.pg("psql"), "-h", LOOPBACK, "-p", str(self.ports.postgres), "-U", DB_USER,
                             "-d", DB_NAME, "-tAc", query))

    def migrate(self) -> Proc:
        return Proc("migrate", (str(self.tools.bgd), "migrate", "apply", db_url(self.ports)))

    def buildgrid(self) -> Proc:
        return Proc("buildgrid", (str(self.tools.bgd), "server", "start", str(self.layout.config)))

    def casd(self) -> Proc:
        argv = (str(self.tools.casd), f"--cas-remote=http://{LOOPBACK}:{self.ports.buildgrid}",
                f"--cas-instance={INSTANCE}", f"--bind={LOOPBACK}:{self.ports.casd}", str(self.layout.casd))
        return Proc("casd", argv)

    def worker(self) -> Proc:
        # The worker stages inputs through casd's LocalCAS API, which BuildGrid does not
        # serve ("Method not found"); casd serves the empty instance name, hence no --cas-instance.
        argv = (str(self.tools.worker), f"--bots-remote=http://{LOOPBACK}:{self.ports.buildgrid}",
                f"--bots-instance={INSTANCE}", f"--cas-remote=http://{LOOPBACK}:{self.ports.casd}",
                f"--buildbox-run={self.tools.runner}", *runner_args(self.runner, self.image, in_user_namespace(UID_MAP.read_text())),
                "--platform", "OSFamily=linux", f"--concurrent-jobs={self.jobs}", WORKER_NAME)
        return Proc("worker", argv, env=worker_env(self.runner, self.layout, self.path))


# --------------------------------------------------------------------------
# Running it
# --------------------------------------------------------------------------


def port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)
        return s.connect_ex((LOOPBACK, port)) == 0


def tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no log)"


def run_logged(argv: Sequence[str], log_path: Path, timeout: float, **popen_args) -> None:
    """Runs a one-shot command with its output appended to `log_path`; raises if it fails."""
    with open(log_path, "a") as out:
        try:
            rc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                timeout=timeout, **popen_args).returncode
        except subprocess.TimeoutExpired:
            raise ClusterError(f"`{argv[0]}` took more than {timeout:.0f} s (its log is above)") from None
    if rc != 0:
        raise ClusterError(f"`{' '.join(argv)}` exited {rc} (its log is above)")


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def ensure_venv(venv: Path, log_path: Path) -> None:
    """Creates the BuildGrid venv once; concurrent callers wait for the first."""
    with locked(venv.with_name(venv.name + ".lock")):
        if (venv / ".complete").exists():
            return
        log(f"installing {' '.join(BUILDGRID_REQUIREMENTS)} into {venv} (once, about 25 s)")
        shutil.rmtree(venv, ignore_errors=True)
        try:
            run_logged([sys.executable, "-m", "venv", str(venv)], log_path, TIMEOUTS["venv"])
            run_logged([str(venv / "bin/python"), "-m", "pip", "install", *BUILDGRID_REQUIREMENTS], log_path, TIMEOUTS["venv"])
        except ClusterError as e:
            raise ClusterError(f"{e}; fix pip's access to PyPI (proxy, PIP_* settings) and run again") from None
        # Written last, so that an interrupted install is redone, not reused.
        (venv / ".complete").touch()


def find_tools(cache: Path, runner: str) -> Tools:
    pg_bin = find_pg_bin()
    needed = (Tools.casd, Tools.worker, RUNNERS[runner], *([BWRAP] if runner == "isolated" else []))
    missing = [p for p in needed if not Path(p).exists()]
    if pg_bin is None or missing:
        what = ", ".join([str(p) for p in missing] + (["/usr/lib/postgresql/*/bin/postgres"] if pg_bin is None else []))
        raise ClusterError(f"missing {what}: run this inside the sandbox root, from the checkout (python3 -m sandbox "
                           "run -- python3 -m tests.infra.rbe.cluster ...), whose packages `postgresql`, `buildbox` and "
                           "`bubblewrap` provide them")
    return Tools(venv=venv_dir(cache, BUILDGRID_REQUIREMENTS, sys.version), pg_bin=pg_bin, runner=RUNNERS[runner])


def postgres_user() -> str | None:
    return POSTGRES_SYSTEM_USER if os.geteuid() == 0 else None


class Cluster:
    """Starts the cluster on enter, stops it (and removes its state) on exit."""

    def __init__(self, jobs: int, keep: bool = False, cache: Path | None = None, runner: str = DEFAULT_RUNNER):
        self.jobs = jobs
        self.runner = runner
        self.keep = keep
        self.cache = cache or default_cache()
        self.layout: Layout | None = None
        self.plan: Plan | None = None
        self.running: list[tuple[Proc, subprocess.Popen]] = []
        self.t0 = time.monotonic()

    def __enter__(self) -> "Cluster":
        try:
            self.start()
        except BaseException:
            self.stop(failed=True)
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop(failed=False)

    @property
    def env(self) -> dict[str, str]:
        return client_env(self.plan.ports)

    def progress(self, msg: str) -> None:
        log(f"[{time.monotonic() - self.t0:5.1f} s] {msg}")

    # ---- starting ----------------------------------------------------------

    def start(self) -> None:
        self.t0 = time.monotonic()
        tools = find_tools(self.cache, self.runner)
        self.layout = layout = Layout(Path(tempfile.mkdtemp(prefix="jax-rocm-rbe-")))
        layout.logs.mkdir()
        ensure_venv(tools.venv, layout.logs / "pip.log")
        self.progress(f"BuildGrid venv {tools.venv}")
        ports = Ports(*free_ports(3))
        self.plan = plan = Plan(layout, ports, tools, self.jobs, postgres_user(), self.runner, worker_image(),
                                os.environ.get("PATH", "/usr/bin:/bin"))
        self.prepare_dirs()
        self.start_postgres()
        self.run_once(plan.migrate(), TIMEOUTS["migrate"])
        self.progress("database schema migrated")
        layout.config.write_text(buildgrid_config(ports, layout))
        self.spawn_and_wait(plan.buildgrid(), lambda: port_open(ports.buildgrid), TIMEOUTS["buildgrid"])
        self.progress(f"BuildGrid serving instance {INSTANCE!r} on {executor_url(ports)}")
        self.spawn_and_wait(plan.casd(), lambda: port_open(ports.casd), TIMEOUTS["casd"])
        self.progress(f"buildbox-casd on {LOOPBACK}:{ports.casd}")
        self.spawn_and_wait(plan.worker(), self.worker_registered, TIMEOUTS["worker"])
        self.progress(f"buildbox-worker registered ({self.jobs} concurrent jobs, runner {self.runner}); cluster ready")

    def prepare_dirs(self) -> None:
        layout = self.layout
        for d in (layout.storage, layout.casd, layout.pg_socket, layout.bwrap_bin, layout.bwrap_mount):
            d.mkdir(parents=True)
        (layout.bwrap_bin / "bwrap").symlink_to(BWRAP_IN_SANDBOX)
        user = self.plan.postgres_user
        if user is not None:
            # mkdtemp's folder is 0700: let the postgres user reach its own subfolder.
            layout.state.chmod(0o711)
            for d in (layout.postgres, layout.pg_socket):
                shutil.chown(d, user, user)

    def start_postgres(self) -> None:
        plan = self.plan
        self.run_once(plan.initdb(), TIMEOUTS["postgres"])
        self.spawn_and_wait(plan.postgres(), lambda: self.quiet(plan.pg_isready()) == 0, TIMEOUTS["postgres"])
        self.run_once(plan.createdb(), TIMEOUTS["postgres"])
        self.progress(f"PostgreSQL on {LOOPBACK}:{plan.ports.postgres}")

    def worker_registered(self) -> bool:
        out = subprocess.run(self.plan.registered_bots().argv, capture_output=True, text=True, timeout=10)
        return out.returncode == 0 and out.stdout.strip() not in ("", "0")

    def log_path(self, proc: Proc) -> Path:
        return self.layout.logs / f"{proc.name}.log"

    def popen_args(self, proc: Proc) -> dict:
        env = {**os.environ, **dict(proc.env)} if proc.env else None
        if proc.user is None:
            return {"cwd": self.layout.state, "env": env}
        return {"cwd": self.layout.postgres, "env": env, "user": proc.user, "group": proc.user, "extra_groups": []}

    def quiet(self, proc: Proc) -> int:
        return subprocess.run(proc.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=10, **self.popen_args(proc)).returncode

    def run_once(self, proc: Proc, timeout: float) -> None:
        run_logged(proc.argv, self.log_path(proc), timeout, **self.popen_args(proc))

    def spawn_and_wait(self, proc: Proc, ready: Callable[[], bool], timeout: float) -> None:
        out = open(self.log_path(proc), "a")
        # A session of its own: the terminal's Ctrl-C goes to us only, and stop() can
        # signal the component's whole process group (postgres backends, runners).
        child = subprocess.Popen(proc.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, **self.popen_args(proc))
        out.close()
        self.running.append((proc, child))
        deadline = time.monotonic() + timeout
        while not ready():
            if child.poll() is not None:
                raise ClusterError(f"{proc.name} exited {child.returncode} while starting (its log is above)")
            if time.monotonic() > deadline:
                raise ClusterError(f"{proc.name} not ready after {timeout:.0f} s (its log is above)")
            time.sleep(0.2)

    # ---- watching and stopping --------------------------------------------

    def dead(self) -> list[str]:
        return [f"{proc.name} (exit {child.returncode})" for proc, child in self.running if child.poll() is not None]

    def stop(self, failed: bool) -> None:
        if failed or self.dead():
            self.print_logs()
        # Reverse order: clients go before the servers they use.
        for proc, child in reversed(self.running):
            terminate(proc, child)
        self.running.clear()
        if self.layout is None:
            return
        if self.keep:
            log(f"state and logs kept in {self.layout.state}")
            return
        shutil.rmtree(self.layout.state, ignore_errors=True)
        if failed:
            log("removed the cluster's state; run again with --keep to inspect it")

    def print_logs(self) -> None:
        if self.layout is None:
            return
        for path in sorted(self.layout.logs.glob("*.log"), key=lambda p: p.stat().st_mtime):
            log(f"---- last lines of {path} ----\n{tail(path)}")
        dead = self.dead()
        if dead:
            log(f"stopped unexpectedly: {', '.join(dead)}")


def terminate(proc: Proc, child: subprocess.Popen) -> None:
    # PostgreSQL waits for its clients on SIGTERM; SIGINT is its "fast" shutdown.
    sig = signal.SIGINT if proc.name == "postgres" else signal.SIGTERM
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, sig)
    try:
        child.wait(timeout=STOP_GRACE)
    except subprocess.TimeoutExpired:
        log(f"{proc.name} ignored {sig.name} for {STOP_GRACE:.0f} s; killing it")
    # Also reaps what the component left in its group (runners, backends).
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def cmd_run(cluster: Cluster, argv: list[str]) -> int:
    log("running: " + " ".join(argv))
    child = subprocess.Popen(argv, env={**os.environ, **cluster.env})
    try:
        rc = child.wait()
    except BaseException:
        child.terminate()
        child.wait()
        raise
    return 128 - rc if rc < 0 else rc


def cmd_up(cluster: Cluster, ready_file: Path | None = None) -> int:
    if ready_file is not None:
        # Written whole, then renamed: a program polling for it never reads half of it.
        partial = ready_file.with_name(ready_file.name + ".partial")
        partial.write_text(json.dumps(cluster.env))
        partial.rename(ready_file)
    log("ready; use with:\n    bazel build --config=rocm_rbe " + " ".join(bazel_flags(cluster.plan.ports)) +
        " TARGETS...\nCtrl-C stops the cluster.")
    while not cluster.dead():
        time.sleep(1.0)
    return 1


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 -m tests.infra.rbe.cluster", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n", 1)[1],
    )
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="actions the worker runs at once (default: CPU count)")
    p.add_argument("--keep", action="store_true", help="keep the state folder (database, CAS, logs) at the end")
    p.add_argument("--runner", choices=sorted(RUNNERS), default=DEFAULT_RUNNER,
                   help="how the worker runs an action: isolated (only its inputs and the worker image; default) "
                        "or hosttools (on this root as is)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="start the cluster, run CMD with JAX_ROCM_RBE_EXECUTOR and JAX_ROCM_RBE_INSTANCE "
                                     "set, stop the cluster; exit with CMD's status")
    run.add_argument("cmd", nargs=argparse.REMAINDER, metavar="[--] CMD...")
    up = sub.add_parser("up", help="start the cluster and keep it up until Ctrl-C (or SIGTERM); prints the Bazel "
                                   "flags to use")
    up.add_argument("--ready-file", type=Path, metavar="FILE",
                    help="once ready, write JAX_ROCM_RBE_EXECUTOR and JAX_ROCM_RBE_INSTANCE there as a JSON object "
                         "(for a program that drives builds from outside the sandbox)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    cmd = getattr(args, "cmd", [])
    cmd = cmd[1:] if cmd[:1] == ["--"] else cmd
    if args.command == "run" and not cmd:
        parser().error("run: no command given; usage: python3 -m tests.infra.rbe.cluster run -- CMD [ARGS...]")
    # SIGTERM (from `timeout`, a CI runner ...) unwinds like Ctrl-C, so the cluster is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        with Cluster(jobs=args.jobs, keep=args.keep, runner=args.runner) as cluster:
            return cmd_run(cluster, cmd) if args.command == "run" else cmd_up(cluster, args.ready_file)
    except ClusterError as e:
        log(f"error: {e}")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
