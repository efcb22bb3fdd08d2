"""ci_build under faults: killed mid-build, and two runs of one checkout at once.

Real processes, the real sandbox and Bazel: `ci_build doctor` starts a Bazel server in the
sandbox, which is what a SIGKILL used to leave running and a second run used to lose.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox import session
from tests.conftest import CHECKOUT, without_session

pytestmark = pytest.mark.bazel

DOCTOR = [sys.executable, str(CHECKOUT / "build" / "ci_build"), "doctor"]


@pytest.fixture(autouse=True)
def alone(sandbox_root):
    """ci_build as from a user's shell (without_session): its own sandbox session, which ends with
    it, not the worker's; whose server of this checkout is shut down first, as no user's shell
    would have it."""
    subprocess.run([sys.executable, "-m", "sandbox", "run", "--", "bazel", "shutdown"], cwd=CHECKOUT,
                   capture_output=True, check=True)


def working_folder(pid: str) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:  # gone, or not ours to read
        return None


def processes_of_this_checkout() -> list[str]:
    """Command lines of sandbox runs and Bazel processes started from this checkout."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        # The checkout as a whole path: /home/u/fresh must not match /home/u/fresh-cache/... . A
        # sandbox run (`python3 -m sandbox run`) need not name it: ci_build starts it there.
        names_checkout = re.search(re.escape(str(CHECKOUT)) + r"(/|\s|$)", cmdline) or working_folder(pid) == CHECKOUT
        # Bazel by its program name (the client `bazel`, the server `bazel(<workspace>)`), not by
        # the word anywhere: the pytest controller running tests/bazel/... from here is no Bazel.
        program = Path(cmdline.split(" ", 1)[0]).name
        is_bazel = program == "bazel" or program.startswith("bazel(")
        # ci_build's own session (sandbox/session.py), not this worker's.
        worker_session = os.environ.get(session.SESSION_ENV) or "-"
        sandbox = "-m sandbox run" in cmdline or ("-m sandbox serve" in cmdline and worker_session not in cmdline)
        if int(pid) != os.getpid() and (sandbox or is_bazel) and names_checkout:
            found.append(f"{pid}: {cmdline[:200]}")
    return found


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_sigkill_leaves_nothing_running_and_the_next_run_succeeds(sandbox_root):
    doctor = subprocess.Popen(DOCTOR, cwd=CHECKOUT, stdin=subprocess.DEVNULL, env=without_session(), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    # Bazel's server names itself bazel(<workspace>); warm, it then analyses for over 10 s more.
    assert wait_for(lambda: any("bazel(" in p for p in processes_of_this_checkout()), 120), "Bazel's server never started"
    doctor.send_signal(signal.SIGKILL)
    doctor.wait()
    # At once, not when the build would have ended anyway.
    assert wait_for(lambda: not processes_of_this_checkout(), 3), processes_of_this_checkout()
    again = subprocess.run(DOCTOR, cwd=CHECKOUT, stdin=subprocess.DEVNULL, env=without_session(),
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]


def test_two_runs_of_one_checkout_both_succeed_the_second_waiting(sandbox_root):
    first = subprocess.Popen(DOCTOR, cwd=CHECKOUT, stdin=subprocess.DEVNULL, env=without_session(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    second = subprocess.run(DOCTOR, cwd=CHECKOUT, stdin=subprocess.DEVNULL, env=without_session(),
                            capture_output=True, text=True, timeout=900)
    out, err = first.communicate(timeout=900)
    assert first.returncode == 0, err[-3000:]
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"ci_build: waiting for ci_build doctor (pid {first.pid}" in second.stderr


def test_an_interrupt_is_one_line_130_and_the_next_run_starts_at_once(sandbox_root):
    # A server still ending from the test before would be taken for this run's.
    assert wait_for(lambda: not processes_of_this_checkout(), 30), processes_of_this_checkout()
    # SIGINT as a terminal's Ctrl-C gives it, even where the suite itself was started in the
    # background by a shell without job control, whose children inherit SIGINT ignored (seen:
    # the doctor then finished with exit 0).
    doctor = subprocess.Popen(DOCTOR, cwd=CHECKOUT, stdin=subprocess.DEVNULL, env=without_session(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert wait_for(lambda: any("bazel(" in p for p in processes_of_this_checkout()), 120), "Bazel's server never started"
    doctor.send_signal(signal.SIGINT)  # no terminal: the signal reaches ci_build alone
    out, err = doctor.communicate(timeout=60)
    assert doctor.returncode == 130, err[-3000:]
    assert err.rstrip().splitlines()[-1] == "ci_build: interrupted; no partial wheel was written (run it again to go on)"
    assert "Traceback" not in err
    assert wait_for(lambda: not processes_of_this_checkout(), 10), processes_of_this_checkout()
    again = subprocess.run(DOCTOR, cwd=CHECKOUT, stdin=subprocess.DEVNULL, env=without_session(),
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]


def test_a_rocm_version_the_toolkit_is_not_fails_before_the_build_and_writes_nothing(sandbox_root, tmp_path):
    out = tmp_path / "dist"
    t0 = time.monotonic()
    result = subprocess.run([sys.executable, str(CHECKOUT / "build" / "ci_build"), "--sources=examples", "dist_wheels",
                             "--allow-stand-ins", "--rocm-version=7.9.9", f"--output-dir={out}"],
                            cwd=CHECKOUT, stdin=subprocess.DEVNULL, env=without_session(),
                           capture_output=True, text=True, timeout=600)
    assert result.returncode == 2, result.stderr[-3000:]
    assert "--rocm-version=7.9.9, but the toolkit at /usr is ROCm 7.2.4" in result.stderr
    assert "building the wheels with Bazel" not in result.stderr and not out.exists()
    assert time.monotonic() - t0 < 120


def processes_marked(marker: str) -> list[str]:
    """Processes whose environment holds `marker`: everything one test command started, the sandbox's
    session, its agent and the Bazel servers inside included (they inherit JAX_* variables)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            environ = open(f"/proc/{pid}/environ", "rb").read()
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker.encode() in environ:
            found.append(f"{pid}: {cmdline[:160]}")
    return found


def test_a_sigkill_of_the_test_command_leaves_nothing_and_the_next_run_passes(sandbox_root):
    """The README's test command (two workers, each with a sandbox session and Bazel servers in it),
    killed once a Bazel server runs: every process it started ends at once, and it runs again."""
    marker = f"JAX_ROCM_TEST_KILLED_RUN=m{os.getpid()}x{time.monotonic_ns()}"
    name, value = marker.split("=")
    env = {**without_session(), name: value, "JAX_ROCM_TEST_RESULTS": "off"}
    command = [sys.executable, "-m", "tests.run", "tests/bazel/test_configs.py"]
    run = subprocess.Popen(command, cwd=CHECKOUT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: any("bazel(" in p for p in processes_marked(marker)), 300), "no Bazel server started"
        run.send_signal(signal.SIGKILL)
        run.wait()
        assert wait_for(lambda: not processes_marked(marker), 10), processes_marked(marker)
    finally:
        run.kill()
    again = subprocess.run(command, cwd=CHECKOUT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=900)
    assert again.returncode == 0, again.stdout[-3000:]
    assert wait_for(lambda: not processes_marked(marker), 10), processes_marked(marker)


def group_members(pgid: int) -> list[str]:
    """The processes of process group `pgid` (a terminal's job), as `pid: command line`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{pid}/stat").read()
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[2]) == pgid:
            found.append(f"{pid}: {cmdline[:160]}")
    return found


# What building a root leaves in a temporary folder when it is killed: apt's batches of
# packages for dpkg, mmdebstrap's and debootstrap's own folders.
BUILD_LEFTOVERS = re.compile(r"^(apt-dpkg-install-|mmdebstrap\.|debootstrap\.)")


def leftovers_in_tmp(since: float) -> list[str]:
    return [p.name for p in Path("/tmp").iterdir()
            if BUILD_LEFTOVERS.match(p.name) and p.lstat().st_mtime >= since and p.lstat().st_uid == os.getuid()]


@pytest.mark.parametrize("how", ["Ctrl-C", "SIGTERM"])
def test_a_first_run_interrupted_while_the_sandbox_is_built_is_quiet_and_leaves_nothing(tmp_path, how):
    """The first dist_wheels on a fresh machine, interrupted while the sandbox's root is being
    bootstrapped: a terminal's Ctrl-C (SIGINT to the whole job: ci_build, the prefetch, the
    sandbox, apt) ends it with ci_build's one line and exit 130, nothing else said; a SIGTERM to
    ci_build alone (a CI runner's cancel) ends everything it started. Either way no process is
    left, and nothing in the host's /tmp (the bootstrap's temporary files are under the cache)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    started = time.time()
    run = subprocess.Popen([sys.executable, str(CHECKOUT / "build" / "ci_build"), "--sources=examples", "dist_wheels",
                            f"--output-dir={tmp_path / 'dist'}"], cwd=CHECKOUT, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                           env=without_session(dict(os.environ, XDG_CACHE_HOME=str(cache))),
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    sandbox_dir = cache / "jax-rocm-build" / "sandbox"
    assert wait_for(lambda: list(sandbox_dir.glob("root-*.partial")), 120), "the bootstrap never started"
    time.sleep(3)  # into the bootstrap: apt at work
    if how == "Ctrl-C":
        os.killpg(run.pid, signal.SIGINT)
    else:
        run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=120)
    if how == "Ctrl-C":
        assert run.returncode == 130, err[-3000:]
        assert err.rstrip().splitlines()[-1] == "ci_build: interrupted; no partial wheel was written (run it again to go on)"
        said = [line for line in err.splitlines() if re.search(r"Traceback|\berror\b|: interrupted|failed|^\s", line)]
        assert said == [err.rstrip().splitlines()[-1]], err[-3000:]
    else:
        assert run.returncode == -signal.SIGTERM, err[-3000:]
    assert wait_for(lambda: not group_members(run.pid), 20), group_members(run.pid)
    assert not leftovers_in_tmp(started)
    assert not [m for m in Path("/proc/mounts").read_text().splitlines() if str(tmp_path) in m]
    subprocess.run([sys.executable, "-m", "sandbox", "clean"], cwd=CHECKOUT, capture_output=True,
                   env=without_session(dict(os.environ, XDG_CACHE_HOME=str(cache))))
