"""The real sandbox root: Bazel builds offline, commands behave, nothing leaks."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, SANDBOX, TEST_ROCM_PROFILE, sandbox, sandbox_environment

pytestmark = pytest.mark.bazel


def host_mounts() -> list[str]:
    return Path("/proc/mounts").read_text().splitlines()


def test_second_ensure_does_nothing_and_says_so(sandbox_root):
    stamp = sandbox_root / ".jax-rocm-sandbox.json"
    before = stamp.stat().st_mtime_ns
    result = sandbox("ensure")
    assert "up to date, nothing to do" in result.stderr
    assert stamp.stat().st_mtime_ns == before
    assert (sandbox_root.parent / "current").resolve() == sandbox_root


def test_info_reports_real_versions(sandbox_root):
    out = sandbox("info").stdout
    assert re.search(r"^\s+bazel 7\.7\.1$", out, re.M), out
    assert re.search(r"clang version 22\.", out), out
    assert re.search(r"HIP version: 7\.2\.\d+", out), out
    assert re.search(r"ROCm 7\.2\.\d+", out), out
    assert re.search(r"^size:\s+\d", out, re.M), out


def test_bazel_builds_and_tests_offline(in_sandbox):
    # Every kind of target: cc_binary, shared library, py_binary, py_test.
    result = in_sandbox("bazel", "test", "//tests/smoke:all")
    assert "//tests/smoke:smoke_test" in result.stdout + result.stderr
    assert "1 test passes" in result.stdout + result.stderr
    built = in_sandbox("bazel", "build", "//...")
    assert "Build completed successfully" in built.stderr
    ran = in_sandbox("bazel", "run", "//tests/smoke:hello_cc", "--", "sandbox")
    assert re.search(r"^hello, sandbox \(\d+\.\d+", ran.stdout, re.M), ran.stdout
    ran = in_sandbox("bazel", "run", "//tests/smoke:hello_py", "--", "python")
    assert re.search(r"^hello, python \(\d+\.\d+", ran.stdout, re.M), ran.stdout


def test_bazel_never_reaches_a_registry(in_sandbox):
    # The generated rc points the registry at a path that does not exist: any
    # module that is not overridden fails at once instead of going online.
    result = in_sandbox("bazel", "mod", "graph", "--output=text")
    assert "jax_rocm_build" in result.stdout
    flags = in_sandbox("sh", "-c", "cat /etc/bazel.bazelrc").stdout
    assert "--registry=file:///nonexistent-offline-registry" in flags
    assert not re.search(r"https?://", flags)


def test_hipcc_compiles_device_code_without_a_gpu(in_sandbox, tmp_path):
    src = tmp_path / "k.hip"
    src.write_text("#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] *= 2; }\n")
    out = tmp_path / "libk.so"
    in_sandbox("hipcc", "-fPIC", "-shared", "--offload-arch=gfx90a", "--offload-arch=gfx1100", str(src), "-o", str(out))
    sections = in_sandbox("objdump", "-h", str(out)).stdout
    assert ".hip_fatbin" in sections


def test_the_pythons_ci_build_expects_before_a_root_exists_are_the_built_roots(sandbox_root):
    """ci_build answers --python-versions before a root is built from PROFILE_PYTHONS; the root
    built from the layers (read from its files) must have exactly those (sid's python3 moved on?)."""
    from ci_build_cli import pythons
    from sandbox.layers import PROFILE_PYTHONS

    assert pythons.sandbox_versions() == PROFILE_PYTHONS[TEST_ROCM_PROFILE]


def test_exit_status_stdin_and_signals_pass_through(sandbox_root):
    assert sandbox("run", "--", "sh", "-c", "exit 7", check=False).returncode == 7
    assert sandbox("run", "--", "sh", "-c", 'kill -TERM $$', check=False).returncode == -signal.SIGTERM
    assert sandbox("run", "--", "cat", input="through stdin\n").stdout == "through stdin\n"
    assert sandbox("run", "--", "no-such-command", check=False).returncode == 127
    proc = subprocess.Popen([*SANDBOX, "run", "--", "sh", "-c", "echo started; sleep 60"], env=sandbox_environment(),
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "started\n"
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == -signal.SIGTERM
    assert time.monotonic() - t0 < 10


def test_no_mount_and_no_process_outlive_a_run(sandbox_root, tmp_path):
    before = host_mounts()
    marker = f"sleep {300000 + os.getpid()}"
    # Inside: the root's own mounts exist; a daemon is left behind on purpose.
    inside = sandbox("run", "--", "sh", "-c", f"({marker} &) ; cat /proc/mounts").stdout
    assert f"{CHECKOUT} " in inside and " /proc proc " in inside
    assert host_mounts() == before
    assert str(sandbox_root) not in "\n".join(host_mounts())
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert marker not in ps


def test_a_bazel_server_leaves_nothing_in_the_hosts_tmp(in_sandbox):
    """The server unpacks its JNI library into a new java.io.tmpdir folder at every start and is
    killed with its run: the folder is in the run's own tmpfs, not in the shared /tmp."""
    listing = in_sandbox("sh", "-c", "bazel info server_pid >/dev/null && ls /run/jax-rocm-build/bazel-jvm-tmp").stdout.split()
    unpacked = [name for name in listing if name.startswith("bazel-jni.")]
    assert unpacked, f"the server unpacked its library elsewhere: {listing}"
    assert not [name for name in unpacked if Path("/tmp", name).exists()]


def test_checkout_tmp_and_cwd_are_at_the_same_paths(sandbox_root, tmp_path):
    (tmp_path / "note.txt").write_text("from the host")
    cli = CHECKOUT / "sandbox" / "cli.py"
    result = sandbox("run", "--", "sh", "-c", "pwd; cat note.txt; echo; ls $0", str(cli), cwd=tmp_path)
    assert result.stdout.splitlines() == [str(tmp_path), "from the host", str(cli)]


def test_pip_works_inside_as_on_the_host(in_sandbox, tmp_path):
    # The host's CA bundle and pip settings are carried in: a real download from PyPI.
    result = in_sandbox("sh", "-c", f"python3 -m venv {tmp_path}/v && "
                        f"{tmp_path}/v/bin/pip download -q --no-deps -d {tmp_path}/d six==1.16.0 && ls {tmp_path}/d")
    assert "six-1.16.0" in result.stdout


def test_apt_works_inside(in_sandbox, tmp_path):
    result = in_sandbox("sh", "-c", f"cd {tmp_path} && apt-get download -q hello && ls")
    assert re.search(r"^hello_.*\.deb$", result.stdout, re.M), result.stdout + result.stderr


# ---- an interrupted ensure, and two at once ---------------------------------

# A one-package profile that reuses the real root's downloaded packages: the
# same code paths as a real root, at a fraction of the time. Run with the checkout on PYTHONPATH.
DRIVER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from sandbox import cache, cli as sandbox, layers
    tiny = layers.Layer("base", ("hello",), probes=("usr/bin/hello",))
    layers.PROFILES.clear()
    layers.PROFILES["tiny"] = (tiny,)
    layers.REQUIRED_FREE_GB["tiny"] = 1
    sandbox.DEFAULT_PROFILE = "tiny"

    class SharedArchives(cache.Paths):
        @property
        def apt_archives(self):
            return Path({archives!r})

    real_default = cache.Paths.default
    cache.Paths.default = staticmethod(lambda: SharedArchives(real_default().cache))
    sys.exit(sandbox.main(sys.argv[1:]))
""")


@pytest.mark.slow  # a second sandbox root built and killed: the slow tier (docs/testing.md)
def test_killed_ensure_leaves_nothing_used_and_recovers(sandbox_root, tmp_path):
    archives = sandbox_root.parent.parent / "apt-archives"
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(archives=str(archives)))
    # TMPDIR too: a killed mmdebstrap leaves its temporary folder behind, here rather than in /tmp.
    (tmp_path / "tmp").mkdir()
    env = sandbox_environment(dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), TMPDIR=str(tmp_path / "tmp")))
    sandbox_dir = tmp_path / "cache" / "jax-rocm-build" / "sandbox"

    def start() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(driver), "ensure"], env=env, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)

    def kill_when(proc: subprocess.Popen, pattern: str, delay: float) -> str:
        seen = ""
        for line in proc.stderr:
            seen += line
            if re.search(pattern, line):
                time.sleep(delay)
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return seen
        raise AssertionError(f"never reached {pattern!r}:\n{seen}")

    try:
        for pattern, delay in ((r"\[1/4\] (debootstrap|mmdebstrap) .* \.\.\.$", 8), (r"\[3/4\] install base .* \.\.\.$", 1)):
            kill_when(start(), pattern, delay)
            assert not (sandbox_dir / "current").exists(), "a half-built root must never become current"
            assert list(sandbox_dir.glob("root-*.partial")), "the unfinished root is left for the next ensure"
            assert str(tmp_path) not in "\n".join(host_mounts()), "a mount outlived the killed ensure"

        first, second = start(), start()
        errs = [p.communicate(timeout=600)[1] for p in (first, second)]
        assert [p.returncode for p in (first, second)] == [0, 0], errs
        builder = [e for e in errs if "removing unfinished root" in e]
        waiter = [e for e in errs if "another `ensure` is building the sandbox; waiting" in e]
        assert len(builder) == 1 and len(waiter) == 1, errs
        assert "up to date, nothing to do" in waiter[0]
        assert not list(sandbox_dir.glob("root-*.partial"))
        hello = subprocess.run([sys.executable, str(driver), "run", "--", "hello"], env=env, capture_output=True, text=True)
        assert hello.stdout == "Hello, world!\n", hello.stderr
    finally:
        # The root's own users' files (apt's lists, ...) belong to subordinate ids, which pytest
        # cannot remove: `clean` removes the roots (not --all: the archives are the real root's).
        subprocess.run([sys.executable, str(driver), "clean"], env=env, capture_output=True, check=False)
    foreign = [str(p) for p in tmp_path.rglob("*") if p.lstat().st_uid != os.getuid()]
    assert not foreign, f"left for the user to remove, owned by others: {foreign[:5]}"


def test_a_copy_of_the_checkout_takes_results_from_the_shared_action_cache(sandbox_root, scratch_checkout):
    """The sandbox's rc gives every workspace one disk cache: after `bazel clean` the copy's
    build is answered from it; with JAX_ROCM_ACTION_CACHE=off it executes. The build's actions
    run in the run's private tmpfs (--sandbox_base), which nothing outside sees."""
    build = "bazel build --config=gfx942 //tests/rocm/hip:libhip_kernels.so"
    # An intermediate output (an object of the HIP library) is written on a hit as on a build.
    objects = "ls bazel-bin/tests/rocm/hip/_objs/kernels/ | grep -c '[.]o$'"
    script = (f"{build} && bazel clean && {build} && {objects} && "
              "mount | grep -c ' /run/jax-rocm-build/bazel-sandbox type tmpfs'")
    result = sandbox("run", "--", "sh", "-c", script, cwd=scratch_checkout)
    summaries = re.findall(r"INFO: (\d+ processes: .*)", result.stderr)
    assert len(summaries) == 2, result.stderr[-3000:]
    hits = re.search(r"(\d+) disk cache hit", summaries[1])
    assert hits and int(hits.group(1)) >= 3 and "sandbox" not in summaries[1], summaries
    objects_found, tmpfs_mounts = result.stdout.split()
    assert int(objects_found) >= 2, "a cache hit must write intermediate outputs too"
    assert tmpfs_mounts == "1", "the action sandboxes' tmpfs is mounted in the run"
    off = sandbox("run", "--", "sh", "-c", f"bazel clean && {build}", cwd=scratch_checkout,
                  env=dict(os.environ, JAX_ROCM_ACTION_CACHE="off"))
    (summary,) = re.findall(r"INFO: (\d+ processes: .*)", off.stderr)
    assert "disk cache hit" not in summary and "processwrapper-sandbox" in summary, summary
    info = sandbox("info").stdout
    assert re.search(r"^actions: .*/jax-rocm-build/actions/[0-9a-f]{16} \(\d+\.\d GB\)$", info, re.M), info
