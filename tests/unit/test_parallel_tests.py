"""The test command's two workers: their arguments, their checkouts, and the shared venvs they wait for."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from tests import run as run_tests
from tests.infra.copy_workspace import release_clones, remove_stale_clones, worker_checkout
from tools import venvs

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("argv", "added"), [
    ([], list(run_tests.DEFAULT_WORKERS)),
    (["-m", "bazel", "-k", "smoke"], list(run_tests.DEFAULT_WORKERS)),
    (["-m", "unit"], []),
    (["tests/unit/test_pins.py"], []),
    (["-n", "0"], []),
    (["-n4"], []),
    (["--numprocesses=3"], []),
    (["--dist=load"], []),
    (["-p", "no:xdist"], []),
])
def test_two_workers_by_default_unless_the_arguments_choose(argv, added):
    assert run_tests.parallel_args(argv) == added


@pytest.fixture(autouse=True)
def own_locks(monkeypatch):
    """Each test's clone locks are its own: releasing the worker's (release_clones) would let
    this run's other worker, or another suite on this machine, delete the clone this worker
    runs in (remove_stale_clones): the second worker's tests then failed with "can't open file"."""
    monkeypatch.setattr("tests.infra.copy_workspace._held_locks", [])


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def edited_checkout(tmp_path) -> Path:
    """A git checkout with a commit, then an edit, a new untracked file and a deletion."""
    repo = tmp_path / "main"
    repo.mkdir()
    git(repo, "init", "-q")
    for name, text in {"kept.txt": "committed\n", "edited.txt": "committed\n", "deleted.txt": "gone soon\n",
                       ".gitignore": "ignored.txt\n"}.items():
        (repo / name).write_text(text)
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first")
    (repo / "edited.txt").write_text("edited in the work tree\n")
    (repo / "new.txt").write_text("untracked\n")
    (repo / "ignored.txt").write_text("ignored\n")
    (repo / "deleted.txt").unlink()
    return repo


def test_the_first_worker_and_a_run_without_workers_use_the_checkout_itself(edited_checkout):
    assert worker_checkout(edited_checkout, None, None) == edited_checkout
    assert worker_checkout(edited_checkout, "gw0", "run1") == edited_checkout


def test_another_worker_gets_a_clone_with_the_work_trees_files(edited_checkout, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    clone = worker_checkout(edited_checkout, "gw1", "run1")
    try:
        assert clone.name == edited_checkout.name and clone != edited_checkout
        assert (clone / "edited.txt").read_text() == "edited in the work tree\n"
        assert (clone / "new.txt").read_text() == "untracked\n"
        assert not (clone / "deleted.txt").exists() and not (clone / "ignored.txt").exists()
        # A repository of its own at the checkout's commit, showing the same changes.
        assert git(clone, "rev-parse", "HEAD") == git(edited_checkout, "rev-parse", "HEAD")
        assert git(clone, "status", "--porcelain") == git(edited_checkout, "status", "--porcelain")
        # Made once per worker and run: the same path again, the files not copied twice.
        (clone / "marker").write_text("")
        assert worker_checkout(edited_checkout, "gw1", "run1") == clone and (clone / "marker").exists()
        assert worker_checkout(edited_checkout, "gw2", "run1") != clone
    finally:
        release_clones()
        subprocess.run(["rm", "-rf", str(tmp_path / "tmp")], check=True)


def test_concurrent_callers_build_a_venv_once(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("pytest\n")
    built = []
    started = threading.Barrier(3)

    def fake_build(venv: Path, *_):
        built.append(venv)
        (venv / "bin").mkdir(parents=True)
        (venv / ".complete").touch()

    monkeypatch.setattr(venvs, "build_venv", fake_build)

    def call(results: list):
        started.wait()
        results.append(venvs.ensure_venv("t", requirements, "test"))

    results: list = []
    threads = [threading.Thread(target=call, args=(results,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and len(set(results)) == 1 and results[0] == built[0] / "bin" / "python"


def test_a_killed_runs_clones_are_removed_and_a_running_ones_kept(edited_checkout, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    running = worker_checkout(edited_checkout, "gw1", "running")  # this process holds its lock
    killed = tmp_path / "tmp" / "jax-rocm-tests-killed"
    (killed / "gw1" / "main").mkdir(parents=True)  # a run whose workers are gone: nobody holds it
    unrelated = tmp_path / "tmp" / "someone-elses"
    unrelated.mkdir()
    assert remove_stale_clones() == [killed]
    assert running.exists() and unrelated.exists() and not killed.exists()
    release_clones()  # this "worker" ends its session: its run is now removable
    assert remove_stale_clones() == [running.parent.parent] and not running.exists()


def test_a_machine_that_cannot_build_the_sandbox_stops_the_run_once(monkeypatch, capsys):
    """A missing prerequisite (here too little disk) is said once, before any test that needs the
    sandbox: the unit tier runs, nothing else is collected, and the run fails (exit 2) instead of
    every bazel and e2e fixture meeting the same line (226 errors, once)."""
    line = "sandbox: error: disk full: the 'full' sandbox needs about 14 GB free under /x, 6.0 GB is; free space"
    ran = []
    monkeypatch.setattr(run_tests, "missing_prerequisite", lambda profile: line)
    monkeypatch.setattr(run_tests, "ensure_venv", lambda *a: "/venv/bin/python")
    monkeypatch.setattr(run_tests.subprocess, "run", lambda cmd, **kw: ran.append(cmd))
    monkeypatch.setattr(run_tests.subprocess, "Popen", lambda *a, **kw: pytest.fail("the sandbox is not built"))
    monkeypatch.setattr(run_tests.os, "execv", lambda *a: pytest.fail("no pytest of every tier"))
    assert run_tests.main(["-x"]) == 2
    pytest_run = [cmd for cmd in ran if "pytest" in cmd]
    assert pytest_run == [["/venv/bin/python", "-m", "pytest", "-x", "-m", "unit"]]
    err = capsys.readouterr().err
    assert err.count(line) == 2 and err.splitlines()[-1] == f"run_tests: stopped: {line}"
