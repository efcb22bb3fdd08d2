"""Shared test setup: tier markers and the sandbox every `bazel`-tier test uses."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from sandbox import session
from sandbox.cache import Paths
from tests.infra import result_cache
from tests.infra.copy_workspace import copy_workspace, holds_clones, release_clones, remove_stale_clones, worker_checkout
from tools.modules import module_environment

SOURCE_CHECKOUT = Path(__file__).resolve().parent.parent
# The checkout this test process builds, runs and reads in. tests/run.py runs pytest-xdist
# workers: the first (or a run without xdist) takes this checkout; each other one a clone of it
# with the same working-tree files, made here before any test module is imported. Bazel servers
# of two `sandbox run`s sharing one output base would stop each other's (each dies with its
# run), and ci_build's checkout lock would serialise the workers.
CHECKOUT = worker_checkout(SOURCE_CHECKOUT, os.environ.get("PYTEST_XDIST_WORKER"),
                           os.environ.get("PYTEST_XDIST_TESTRUNUID"))
# The sandbox's command line, run as a module of this worker's checkout (sandbox_environment).
# -P (3.11+): the checkout on PYTHONPATH decides, not a scratch copy the command runs in.
SANDBOX = [sys.executable, *(["-P"] if sys.version_info >= (3, 11) else []), "-m", "sandbox"]
# JAX's modules are built in CI from examples/jax, this project's stand-in laid out like
# JAX's tree (the same //jaxlib/rocm BUILD path a real checkout takes, labelled stand-in).
EXAMPLES_JAX = CHECKOUT / "examples" / "jax"
# The gated tier: a real JAX tree (a checkout or an archive of one, e.g. jax-v0.10.2) to
# build JAX's own files from. Unset, the tests that need it skip, naming the variable.
JAX_TREE_ENV = "JAX_ROCM_TEST_JAX_TREE"
TIERS = ("unit", "bazel", "e2e")
# The ROCm set the bazel tier needs; `full` also satisfies tests written for `minimal`.
TEST_ROCM_PROFILE = os.environ.get("JAX_ROCM_TEST_PROFILE", "full")


def pytest_addoption(parser: pytest.Parser) -> None:
    result_cache.add_option(parser)


def pytest_configure(config: pytest.Config) -> None:
    result_cache.register(config, SOURCE_CHECKOUT)
    # A SIGKILL of the test command leaves nothing running: each xdist worker ends with the
    # controller, and ci_build and sandbox, started by a test, with whatever started them.
    os.environ[session.DIE_WITH_PARENT_ENV] = "1"
    if os.environ.get("PYTEST_XDIST_WORKER"):
        session.die_with_parent_if_asked()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        tiers = [t for t in TIERS if item.get_closest_marker(t)]
        if len(tiers) != 1:
            raise pytest.UsageError(f"{item.nodeid}: needs exactly one tier marker of {TIERS}, has {tiers}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item):
    result = yield
    # A test that lets go of this worker's hold on its clone lets the run's other worker, or
    # another suite on this machine, delete the clone under the tests still to run here.
    if CHECKOUT != SOURCE_CHECKOUT and not holds_clones():
        raise AssertionError(f"{item.nodeid} released this worker's lock on its clone {CHECKOUT}: "
                             "isolate tests.infra.copy_workspace._held_locks in the test")
    return result


# Seconds each test file took, setup and teardown included (module fixtures are most of it):
# where CI's time goes, printed at the end of the run. With xdist the reports reach the
# controller, which sums them.
FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = report.nodeid.split("::", 1)[0]
    FILE_SECONDS[path] = FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if not FILE_SECONDS:
        return
    listed = sorted(((s, p) for p, s in FILE_SECONDS.items() if s >= 10), reverse=True)
    terminalreporter.section("seconds per test file (10 s or more; setup and teardown included; a kept result is 0 s)")
    for seconds, path in listed:
        terminalreporter.write_line(f"{seconds:8.0f} s  {path}")
    rest = [s for p, s in FILE_SECONDS.items() if s < 10]
    terminalreporter.write_line(f"{sum(rest):8.0f} s  the other {len(rest)} files")
    terminalreporter.write_line(f"{sum(FILE_SECONDS.values()):8.0f} s  all {len(FILE_SECONDS)} files, summed over the workers")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if CHECKOUT != SOURCE_CHECKOUT:
        release_clones()
        remove_stale_clones()  # this run's clones once no worker holds them (and a killed run's)
        subprocess.run([*SANDBOX, "prune"], env=sandbox_environment(checkout=SOURCE_CHECKOUT), check=False,
                       capture_output=True)  # the clone's Bazel output base


# A private mount namespace for a test's mounts: as root, or as an ordinary user in a user
# namespace of its own (root inside, as the rootless sandbox is).
PRIVATE_MOUNTS = ("unshare", *(() if os.geteuid() == 0 else ("--map-root-user",)), "--mount", "--propagation", "private")


def jax_tree_from_env() -> Path | None:
    """The JAX tree JAX_ROCM_TEST_JAX_TREE names (absolute), or None when it is unset."""
    value = os.environ.get(JAX_TREE_ENV, "").strip()
    return Path(value).expanduser().resolve() if value else None


def require_jax_tree() -> Path:
    """The real JAX tree of the gated tests; skips the calling test when JAX_ROCM_TEST_JAX_TREE is unset."""
    tree = jax_tree_from_env()
    if tree is None:
        pytest.skip(f"{JAX_TREE_ENV} is unset: set it to a JAX checkout or archive (e.g. of jax-v0.10.2) to build "
                    "JAX's own files")
    if not tree.exists():
        pytest.fail(f"{JAX_TREE_ENV}={tree} does not exist")
    return tree


@pytest.fixture(scope="session")
def jax_tree() -> Path:
    """The real JAX tree (JAX_ROCM_TEST_JAX_TREE); the test skips without it."""
    return require_jax_tree()


def tracked(*patterns: str) -> list[str]:
    """The checkout's files git tracks (staged ones included) matching the pathspecs, relative."""
    out = subprocess.run(["git", "ls-files", "-z", "--", *patterns], cwd=CHECKOUT, capture_output=True, check=True)
    return list(filter(None, out.stdout.decode().split("\0")))


def bzl_constants(path: Path) -> dict:
    """The top-level NAME = <literal> assignments of a .bzl file (a table of test cases shared
    with Starlark), as Python values."""
    tree = ast.parse(path.read_text(), str(path))
    return {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper()}


def sandbox_binds(*paths: Path) -> list[str]:
    """`sandbox run` arguments mounting these trees (an archive: its folder); the sandbox leaves
    out those it mounts anyway (the checkout, /tmp)."""
    folders = dict.fromkeys(str(path if path.is_dir() else path.parent) for path in paths)
    return [a for folder in folders for a in ("--bind", folder)]


def sandbox_environment(env: dict[str, str] | None = None, checkout: Path = CHECKOUT) -> dict[str, str]:
    """`env` (default: this process's) for a program of `checkout` (default: this worker's) run as
    its module from any folder: tools.modules.module_environment."""
    return module_environment(env, checkout)


# A fake root for jax_plugins/rocm/gpus.py and its users: KFD topology nodes as
# (simd_count, unique_id), node 0 usually the CPU.
CPU_NODE = (0, 0)


def gpu_node(unique_id: int = 0) -> tuple[int, int]:
    return (304, unique_id)


def kfd_tree(root: Path, nodes: list[tuple[int, int]], dev_kfd: bool = True) -> Path:
    """A fake root with KFD topology nodes (simd_count, unique_id) and /dev/kfd."""
    for i, (simd, unique_id) in enumerate(nodes):
        node = root / "sys/class/kfd/kfd/topology/nodes" / str(i)
        node.mkdir(parents=True)
        (node / "properties").write_text(
            f"cpu_cores_count {0 if simd else 16}\nsimd_count {simd}\nunique_id {unique_id}\n"
            "gfx_target_version 90402\n")
    (root / "dev").mkdir(parents=True, exist_ok=True)
    if dev_kfd:
        (root / "dev/kfd").write_text("")
    return root


def sandbox(*args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """Runs `python3 -m sandbox` with the host's Python, as a user would (from any folder)."""
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs["env"] = sandbox_environment(kwargs.get("env"))
    result = subprocess.run([*SANDBOX, *args], **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"sandbox {' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(scope="session")
def sandbox_root(request: pytest.FixtureRequest) -> Iterator[Path]:
    """The real sandbox root (built on first use: about 2 minutes cold), and this worker's
    session in it (sandbox/session.py): every `sandbox run` of the worker's tests,
    ci_build's included, runs in one PID namespace, so a workspace's Bazel server serves its
    next command instead of each paying a start and a new analysis. A test of how a command
    ends on its own runs it with without_session()."""
    # Let ensure's progress lines reach the terminal: a cold build is long.
    with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        sandbox("ensure", f"--rocm={TEST_ROCM_PROFILE}", capture_output=False)
        # Pinned PyPI archives (nanobind, XLA's FFI headers) into Bazel's distdir.
        subprocess.run([sys.executable, "-m", "tools.prefetch"], cwd=CHECKOUT, check=True)
    root = Paths.default().current.resolve()
    assert root.is_dir(), f"ensure succeeded but {root} is missing"
    with session.opened(CHECKOUT, env=sandbox_environment()):
        yield root


def without_session(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) without the worker's sandbox session: the command opens
    its own, or runs without one, as from a user's shell."""
    return {k: v for k, v in (os.environ if env is None else env).items() if k != session.SESSION_ENV}


@pytest.fixture
def in_sandbox(sandbox_root):
    """Runs a command inside the sandbox from the checkout; returns CompletedProcess."""

    def run(*cmd: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
        kwargs.setdefault("cwd", CHECKOUT)
        return sandbox("run", "--", *cmd, check=check, **kwargs)

    return run


@contextlib.contextmanager
def scratch_copy(dest: Path) -> Iterator[Path]:
    """A copy of this checkout at `dest` (under /tmp: visible in the sandbox), with a private
    Bazel output base. Afterwards both are deleted: an output base outlives its checkout
    (0.1-4 GB each) and caches are reused across CI runs."""
    # Copied here, on the host: git inside the sandbox cannot read a worktree's repository.
    copy = copy_workspace(dest, CHECKOUT)
    try:
        yield copy
    finally:
        shutil.rmtree(copy, ignore_errors=True)
        sandbox("prune", check=False)  # the output bases of checkouts that no longer exist


@pytest.fixture
def scratch_checkout(tmp_path) -> Iterator[Path]:
    """A copy of this checkout under /tmp with a private Bazel output base, deleted afterwards."""
    with scratch_copy(tmp_path / "checkout") as copy:
        yield copy


# Below pytest-timeout's 1800 s, so that a hung cluster fails with its output. Killing
# the sandbox ends its PID namespace, and with it every process of the cluster and Bazel.
DRIVER_TIMEOUT = 1500


def run_driver(*command: str) -> dict:
    """Runs a driver program in the sandbox from the checkout (the RBE tiers' cluster and
    builds); returns the JSON object its last line prints, or fails with its output."""
    try:
        result = sandbox("run", "--", *command, cwd=CHECKOUT, timeout=DRIVER_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        stderr = (e.stderr or b"").decode(errors="replace")  # bytes even with text=True
        pytest.fail(f"cluster + builds took over {DRIVER_TIMEOUT} s; last output:\n{stderr[-5000:]}")
    return json.loads(result.stdout.splitlines()[-1])



# --- ci_build's dist_wheels as a dry run: what the unit tests of build/ci_build share --------
# The checkout of the ci_build imported (pytest's rootdir), which may differ from a worker's
# CHECKOUT above.
from ci_build_cli.paths import CHECKOUT as CI_BUILD_CHECKOUT  # noqa: E402
from ci_build_cli.sandbox import HOST_ENV  # noqa: E402
from third_party.gpus import toolkit_sources  # noqa: E402

# What of this machine's environment would steer a ci_build run the unit tests plan: a toolkit
# (ROCM_PATH, XLA's ROCM_DISTRO_* ...; the tests set them where they matter) and host mode.
MACHINE_BUILD_ENV = frozenset({*toolkit_sources.NAMES, HOST_ENV})

DRY_RUN = ["--sources=examples", f"--jax-source-dir={CI_BUILD_CHECKOUT / 'examples' / 'jax'}", "--dry-run", "dist_wheels",
           "--wheel-kind=nightly", "--wheel-date=20261123"]


@pytest.fixture
def recorded(monkeypatch):
    """Commands ci_build would run (sandbox.run's and sandbox.run_bazel's, which succeed); the
    interpreters it would find."""
    from ci_build_cli import pythons, sandbox as ci_sandbox, sources

    commands = []

    def run(cmd, dry_run):
        commands.append((list(cmd), dry_run))
        return 0

    monkeypatch.setattr(ci_sandbox, "run", run)
    # Bazel's builds, whose output ci_build keeps (a real run_bazel prints the command first).
    monkeypatch.setattr(ci_sandbox, "run_bazel", lambda cmd, dry_run: (run(cmd, dry_run), ""))
    monkeypatch.setattr(pythons, "find_interpreters",
                        lambda **_: [pythons.Interpreter("3.14", "/usr/bin/python3.14", None)])
    monkeypatch.setattr(sources.urllib.request, "urlopen", lambda *a, **k: pytest.fail("urlopen called"))
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    for name in MACHINE_BUILD_ENV:
        monkeypatch.delenv(name, raising=False)
    return commands



def unreachable_by_nobody(path: Path) -> str:
    """Why an ordinary user (nobody) cannot run a program at `path` ("" when it can): a folder on
    the way it may not enter (a checkout under root's 0700 home), or a file it may not read."""
    import stat
    for folder in [*reversed(path.parents)]:
        if not folder.stat().st_mode & stat.S_IXOTH:
            mode = stat.S_IMODE(folder.stat().st_mode)
            return f"{folder} is closed to other users (mode {mode:o}): clone the checkout where they may read it"
    return "" if path.stat().st_mode & stat.S_IROTH else f"{path} is not readable by other users"


def bazel_build(commands) -> list[str]:
    """The one `bazel build` among the commands `recorded` holds."""
    builds = [cmd for cmd, _ in commands if "build" in cmd and any(w == "bazel" or w.endswith("/tools/bazel") for w in cmd)]
    assert len(builds) == 1, commands
    return builds[0]
