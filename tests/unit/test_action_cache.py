"""Unit tests of sandbox/action_cache.py: which root a cache belongs to, its bound,
least-recently-used trimming, and Bazel's garbage-collection lock."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from bench import action_counts
from sandbox import action_cache, cache, environment
from tests import run as run_tests
from tests.conftest import sandbox

pytestmark = pytest.mark.unit

NOW = 1_800_000_000.0


def blob(root, store, name, size, age):
    path = root / store / name[:2] / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    os.utime(path, (NOW - age, NOW - age))
    return path


def fake_root(tmp_path, status: str):
    root = tmp_path / "root"
    (root / "var/lib/dpkg").mkdir(parents=True, exist_ok=True)
    (root / "var/lib/dpkg/status").write_text(status)
    return root


def test_a_roots_cache_is_named_by_its_exact_packages(tmp_path):
    root = fake_root(tmp_path, "Package: gcc-15\nVersion: 15.2.0-1\n")
    first = action_cache.root_key(root)
    assert first == action_cache.root_key(root)
    (root / "var/lib/dpkg/status").write_text("Package: gcc-15\nVersion: 15.2.0-2\n")
    assert action_cache.root_key(root) != first, "a changed compiler package must not reuse results"


def test_switch_and_bound_from_the_environment():
    assert action_cache.enabled({}) and action_cache.enabled({"JAX_ROCM_ACTION_CACHE": "on"})
    assert not action_cache.enabled({"JAX_ROCM_ACTION_CACHE": "off"})
    assert not action_cache.enabled({"JAX_ROCM_ACTION_CACHE": " OFF "})
    assert action_cache.bound_bytes({}) == 20 * 10**9
    assert action_cache.bound_bytes({"JAX_ROCM_ACTION_CACHE_GB": "2.5"}) == 2_500_000_000
    for bad in ("0", "-3", "lots"):
        with pytest.raises(ValueError, match="JAX_ROCM_ACTION_CACHE_GB=.* is not a size in GB"):
            action_cache.bound_bytes({"JAX_ROCM_ACTION_CACHE_GB": bad})


def test_nothing_is_trimmed_while_the_cache_fits(tmp_path):
    blob(tmp_path, "cas", "aa01", 400, age=9000)
    blob(tmp_path, "ac", "bb01", 100, age=9000)
    result = action_cache.trim(tmp_path, bound=500, now=NOW)
    assert (result.entries, result.size, result.deleted) == (2, 500, 0)


def test_trimming_removes_the_least_recently_used_down_to_the_target(tmp_path):
    oldest = blob(tmp_path, "cas", "aa01", 300, age=50_000)
    older = blob(tmp_path, "ac", "bb01", 300, age=40_000)
    recent = blob(tmp_path, "cas", "cc01", 300, age=30_000)
    newest = blob(tmp_path, "ac", "dd01", 300, age=20_000)
    kept_tmp = tmp_path / "tmp" / "partial-upload"  # Bazel's tmp/ is not an entry
    kept_tmp.parent.mkdir()
    kept_tmp.write_bytes(b"y" * 5000)
    # 1200 bytes over a bound of 1000: trim to 80 %, i.e. 800 -> the two oldest go.
    result = action_cache.trim(tmp_path, bound=1000, now=NOW)
    assert (result.deleted, result.freed) == (2, 600)
    assert not oldest.exists() and not older.exists() and recent.exists() and newest.exists() and kept_tmp.exists()


def test_entries_used_in_the_last_ten_minutes_are_never_trimmed(tmp_path):
    old = blob(tmp_path, "cas", "aa01", 500, age=7200)
    in_use = [blob(tmp_path, "cas", f"bb0{i}", 500, age=60) for i in range(3)]
    result = action_cache.trim(tmp_path, bound=1000, now=NOW)
    assert result.deleted == 1 and not old.exists()
    assert all(p.exists() for p in in_use), "a running build may be about to read these"


def test_a_second_collector_skips_instead_of_racing(tmp_path):
    """Bazel's own collector takes gc/lock with an fcntl lock (Java's FileChannel.tryLock);
    while another process holds it, trim deletes nothing."""
    blob(tmp_path, "cas", "aa01", 2000, age=9000)
    (tmp_path / "gc").mkdir()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import fcntl, os, sys, time
        fd = os.open({str(tmp_path / 'gc' / 'lock')!r}, os.O_RDWR | os.O_CREAT)
        fcntl.lockf(fd, fcntl.LOCK_EX)
        print("locked", flush=True)
        time.sleep(30)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        result = action_cache.trim(tmp_path, bound=1000, now=NOW)
        assert result.skipped and result.deleted == 0
        assert (tmp_path / "cas/aa/aa01").exists()
    finally:
        holder.kill()
        holder.wait()
    assert action_cache.trim(tmp_path, bound=1000, now=NOW).deleted == 1


def test_trim_is_due_hourly(tmp_path):
    assert action_cache.due(tmp_path, now=NOW)
    action_cache.mark_trimmed(tmp_path)
    stamp = tmp_path / "gc" / "trimmed"
    os.utime(stamp, (NOW - 60, NOW - 60))
    assert not action_cache.due(tmp_path, now=NOW)
    os.utime(stamp, (NOW - 3700, NOW - 3700))
    assert action_cache.due(tmp_path, now=NOW)


def test_the_generated_bazelrc_shares_the_cache_and_none_when_off(tmp_path):
    paths = cache.Paths(tmp_path)
    shared = tmp_path / "actions" / "0123"
    text = environment.bazel_system_rc(paths, environment.CHECKOUT, shared)
    assert f"build --disk_cache={shared}\nbuild --remote_download_all\n" in text, "a hit must write every output"
    off = environment.bazel_system_rc(paths, environment.CHECKOUT, None)
    assert "--disk_cache" not in off and "--remote_download" not in off
    binds = {b.target: b for b in environment.standard_binds(paths, shared)}
    assert str(shared) in binds and shared.is_dir(), "the cache must be mounted read-write at its own path"
    assert not binds[str(shared)].readonly


def test_prune_removes_superseded_caches_and_clean_action_cache_removes_them_all(tmp_path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    actions = tmp_path / "jax-rocm-build" / "actions"
    stale = actions / "0000000000000000"
    blob(stale, "cas", "aa01", 10, age=10)
    result = sandbox("prune", env=env)
    assert not stale.exists(), result.stderr
    assert "removing the action cache 0000000000000000: no current root has exactly its packages" in result.stderr
    blob(actions / "1111111111111111", "ac", "bb01", 10, age=10)
    result = sandbox("clean", "--action-cache", env=env)
    assert not actions.exists(), result.stderr


def test_a_bad_bound_is_one_line_before_anything_runs(tmp_path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), JAX_ROCM_ACTION_CACHE_GB="lots")
    result = sandbox("prune", env=env, check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "sandbox: error: JAX_ROCM_ACTION_CACHE_GB='lots' is not a size in GB; give a positive number such as 20, or unset it")
    assert "Traceback" not in result.stderr


def launcher_argv(tmp_path, *args: str, events: str | None = None) -> list[str]:
    """What the sandbox's bazel launcher would exec for `bazel ARGS` (from a non-workspace folder)."""
    script = environment.BAZEL_LAUNCHER.replace('exec /usr/bin/bazel "$@"', 'printf "%s\\n" "$@"; exit 0')
    env = {"PATH": os.environ["PATH"], **({"JAX_ROCM_BAZEL_EVENTS": events} if events else {})}
    out = subprocess.run(["sh", "-c", script, "bazel", *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_the_launcher_writes_build_events_only_when_asked_and_only_for_build_like_commands(tmp_path):
    events = tmp_path / "events"
    argv = ["--output_base=/ob", "build", "--config=rocm", "//a b"]
    assert launcher_argv(tmp_path, *argv) == argv
    got = launcher_argv(tmp_path, *argv, events=str(events))
    assert got[:2] == argv[:2] and got[3:] == argv[2:], got
    assert got[2].startswith(f"--build_event_json_file={events}/") and got[2].endswith(".json")
    assert events.is_dir()
    assert launcher_argv(tmp_path, "info", "output_base", events=str(events)) == ["info", "output_base"]
    assert launcher_argv(tmp_path, "shutdown", events=str(events)) == ["shutdown"]
    test = launcher_argv(tmp_path, "test", "//x:y", events=str(events))
    assert test[0] == "test" and test[1].startswith("--build_event_json_file=") and test[2] == "//x:y"


def test_action_counts_sums_the_runners_of_each_commands_build_metrics(tmp_path, capsys):
    def command(name: str, runners: dict[str, int] | None) -> None:
        lines = [json.dumps({"id": {"started": {}}, "started": {"command": "build"}})]
        if runners is not None:
            metrics = {"actionSummary": {"runnerCount": [{"name": n, "count": str(c)} for n, c in runners.items()]}}
            lines.append(json.dumps({"id": {"buildMetrics": {}}, "buildMetrics": metrics}))
        (tmp_path / f"{name}.json").write_text("\n".join(lines) + "\n")

    command("1", {"disk cache hit": 303, "internal": 36})
    command("2", {"processwrapper-sandbox": 5, "remote cache hit": 2, "internal": 4})
    command("3", None)  # interrupted: no BuildMetrics
    assert action_counts.main([str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["commands"], summary["unfinished"]) == (2, 1)
    assert (summary["executed"], summary["cached"], summary["internal"]) == (5, 305, 40)


@pytest.mark.parametrize("argv, unit_only", [
    (["-m", "unit"], True),
    (["-m=unit", "-q"], True),
    (["-munit"], True),
    (["tests/unit/test_sandbox.py", "-x"], True),
    (["tests/unit/test_sandbox.py::test_not_root_is_one_line"], True),
    ([], False),
    (["-m", "bazel"], False),
    (["-m", "unit or bazel"], False),
    (["tests/unit/test_sandbox.py", "tests/bazel/test_hermetic.py"], False),
    (["-k", "smoke"], False),
])
def test_run_tests_builds_the_sandbox_in_the_background_unless_only_unit_tests_run(argv, unit_only):
    assert run_tests.only_unit_tests(argv) is unit_only


def test_the_events_folder_is_made_absolute_and_mounted(tmp_path, monkeypatch):
    outside = Path(tempfile.mkdtemp(dir="/var/tmp"))  # not under a folder the sandbox mounts anyway
    try:
        monkeypatch.chdir(outside)
        monkeypatch.setenv("JAX_ROCM_BAZEL_EVENTS", "events")
        assert environment.sandbox_env()["JAX_ROCM_BAZEL_EVENTS"] == str(outside / "events")
        binds = environment.run_binds(cache.Paths(tmp_path), [], tmp_path)
        assert any(b.target == str(outside / "events") and not b.readonly for b in binds), binds
        assert (outside / "events").is_dir()
    finally:
        shutil.rmtree(outside)
