"""Test results kept, as `bazel test` keeps them: a `bazel` or `e2e` test that passed (or
skipped) is not run again while nothing it could depend on has changed.

What a result depends on is taken whole, never guessed per test: every file of the checkout
that git tracks or would track (edits included), the environment variables a test or the
sandbox reads, the user, the host's Python, and the sandbox root's exact packages. The
run's key is the digest of all of them; a run with the same key reports each kept result
as its test's outcome ("reused", with the run it came from) instead of running it. Any
change of any of them (an edited file, another ROCM_PATH, a rebuilt root) runs every test
again. The unit tier always runs: it takes seconds.

    python3 -m tests.run --rerun-kept        # run everything, kept results or not
    JAX_ROCM_TEST_RESULTS=off                      # the same, from the environment

Results live in ${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build/test-results/<key>.json.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox.action_cache import root_key
from sandbox.cache import Paths

KEPT_TIERS = ("bazel", "e2e")
SWITCH_ENV = "JAX_ROCM_TEST_RESULTS"
# What a test or the sandbox reads from the environment (sandbox/environment.py passes
# these prefixes in), and the few plain names that change what runs.
ENV_PREFIXES = ("JAX_", "JAXCI_", "ROCM_", "THEROCK_", "HIP_", "XLA_", "TF_", "PIP_", "BAZEL", "ML_WHEEL_", "PYTEST_")
ENV_NAMES = ("PATH", "HOME", "XDG_CACHE_HOME", "CI", "TMPDIR", "SOURCE_DATE_EPOCH", "http_proxy", "https_proxy")
# Set per run, whatever the inputs: never part of the key.
ENV_PER_RUN = ("JAX_ROCM_SANDBOX_SESSION", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID",
               "PYTEST_CURRENT_TEST", "JAX_ROCM_DIE_WITH_PARENT", SWITCH_ENV)


def checkout_files(checkout: Path) -> list[str]:
    """The files git tracks or would track (untracked ones not ignored), relative, sorted; never
    Python's bytecode, which the run itself writes where no .gitignore names it."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=checkout,
                         capture_output=True, check=True).stdout
    return sorted({name for name in out.decode().split("\0")
                   if name and "__pycache__/" not in name and not name.endswith(".pyc")})


def inputs_digest(checkout: Path, env: dict[str, str]) -> str:
    """The digest of what every kept result depends on but the sandbox root: the checkout's files
    (path, executable bit, content), the environment above, the user and the host's Python."""
    digest = hashlib.sha256()
    for name in checkout_files(checkout):
        path = checkout / name
        digest.update(name.encode() + b"\0")
        if path.is_symlink():
            digest.update(b"link:" + os.readlink(path).encode())
        elif path.is_file():
            digest.update(b"x" if os.access(path, os.X_OK) else b"-")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        else:
            digest.update(b"deleted")  # tracked, removed in the working tree
    for key in sorted(env):
        if key not in ENV_PER_RUN and (key in ENV_NAMES or key.startswith(ENV_PREFIXES)):
            digest.update(f"{key}={env[key]}\0".encode())
    digest.update(f"uid={os.geteuid()} python={sys.version}".encode())
    return digest.hexdigest()


def root_identity(paths: Paths) -> str | None:
    """The current sandbox root's exact packages (what names its action cache), None without one."""
    root = paths.current
    try:
        return root_key(root.resolve())
    except OSError:
        return None


def run_key(inputs: str, root: str | None) -> str | None:
    return None if root is None else hashlib.sha256(f"{inputs}:{root}".encode()).hexdigest()[:24]


@dataclasses.dataclass(frozen=True)
class Kept:
    outcome: str  # "passed" or "skipped"
    reason: str  # a skip's
    when: float  # the run that gave it (time.time())


class Store:
    """The kept results of one key: nodeid -> Kept."""

    def __init__(self, folder: Path):
        self.folder = folder

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def load(self, key: str) -> dict[str, Kept]:
        try:
            data = json.loads(self.path(key).read_text())
        except (OSError, ValueError):
            return {}
        return {nodeid: Kept(**kept) for nodeid, kept in data.items()}

    def update(self, key: str, results: dict[str, Kept | None]) -> None:
        """Adds the results given, removes those given as None (a failure), atomically; drops the
        files of other keys older than a week."""
        kept = self.load(key)
        for nodeid, result in results.items():
            if result is None:
                kept.pop(nodeid, None)
            else:
                kept[nodeid] = result
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.path(key).with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({n: dataclasses.asdict(k) for n, k in sorted(kept.items())}, indent=0))
        os.replace(tmp, self.path(key))
        week = time.time() - 7 * 86400
        for old in self.folder.glob("*.json"):
            if old != self.path(key) and old.stat().st_mtime < week:
                old.unlink(missing_ok=True)


def enabled(config: pytest.Config) -> bool:
    return not config.getoption("rerun_kept") and os.environ.get(SWITCH_ENV, "").strip().lower() != "off"


def kept_tier(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(tier) for tier in KEPT_TIERS)


# ---- the pytest plugin (tests/conftest.py registers it) ----------------------------------------

def add_option(parser: pytest.Parser) -> None:
    parser.addoption("--rerun-kept", action="store_true", dest="rerun_kept",
                     help="run the bazel and e2e tests whose results an earlier run of the same files, environment and "
                          "sandbox root kept (tests/infra/result_cache.py); also JAX_ROCM_TEST_RESULTS=off")


class ResultCache:
    def __init__(self, config: pytest.Config, checkout: Path):
        self.config = config
        self.checkout = checkout
        self.store = Store(Paths.default().cache / "test-results")
        workerinput = getattr(config, "workerinput", None)
        # The inputs as they were when the run began: tests may write files (full/jax_patches) as they go.
        self.inputs = workerinput["result_cache_inputs"] if workerinput else inputs_digest(checkout, dict(os.environ))
        self._kept: dict[str, Kept] | None = None
        self.reused: list[str] = []
        self.phases: dict[str, list[tuple[str, str, str]]] = {}

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:  # xdist, in the controller: the workers take its digest
        node.workerinput["result_cache_inputs"] = self.inputs

    def kept(self) -> dict[str, Kept]:
        if self._kept is None:
            key = run_key(self.inputs, root_identity(Paths.default()))
            self._kept = self.store.load(key) if key and enabled(self.config) else {}
        return self._kept

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        if not kept_tier(item):
            return None
        kept = self.kept().get(item.nodeid)
        if kept is None:
            return None
        from _pytest.reports import TestReport  # the report type pytest's own runner makes

        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        note = [("kept result", f"reused: {kept.outcome} in the run of {time.strftime('%Y-%m-%d %H:%M', time.localtime(kept.when))} "
                                "with the same files, environment and sandbox root")]
        phases = ["setup", "call", "teardown"] if kept.outcome == "passed" else ["setup", "teardown"]
        for when in phases:
            skipped = kept.outcome == "skipped" and when == "setup"
            longrepr = (str(item.path), (item.location[1] or 0) + 1, f"Skipped: {kept.reason}") if skipped else None
            report = TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords}, "skipped" if skipped else "passed",
                                longrepr, when, sections=note if when == "call" or skipped else [], duration=0.0,
                                user_properties=[("kept_result", True)])
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        # What the last item that ran set up and the next does not need, torn down as its own
        # teardown would have (module fixtures of a file whose last tests were kept).
        item.session._setupstate.teardown_exact(nextitem)
        return True

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if ("kept_result", True) in report.user_properties:
            if report.when == "setup":
                self.reused.append(report.nodeid)
            return
        if not any(tier in report.keywords for tier in KEPT_TIERS):  # the report's markers: xdist's controller has no items
            return
        reason = report.longrepr[2].removeprefix("Skipped: ") if report.skipped and isinstance(report.longrepr, tuple) else ""
        self.phases.setdefault(report.nodeid, []).append((report.when, report.outcome, reason))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if getattr(self.config, "workerinput", None) is not None:
            return  # the controller keeps what every worker reported
        results: dict[str, Kept | None] = {}
        for nodeid, phases in self.phases.items():
            failed = any(outcome == "failed" for _, outcome, _ in phases)
            skipped = [reason for _, outcome, reason in phases if outcome == "skipped"]
            complete = {when for when, _, _ in phases} >= ({"setup", "teardown"} if skipped else {"setup", "call", "teardown"})
            results[nodeid] = None if failed or not complete else Kept("skipped" if skipped else "passed",
                                                                     skipped[0] if skipped else "", time.time())
        key = run_key(self.inputs, root_identity(Paths.default()))
        if key and results:
            self.store.update(key, results)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.reused:
            files = {nodeid.split("::", 1)[0] for nodeid in self.reused}
            terminalreporter.write_line(
                f"kept results: {len(self.reused)} bazel/e2e tests of {len(files)} files reused from an earlier run of these "
                f"same files, environment and sandbox root (tests/infra/result_cache.py); --rerun-kept runs them again")


def register(config: pytest.Config, checkout: Path) -> None:
    config.pluginmanager.register(ResultCache(config, checkout), "result_cache")
