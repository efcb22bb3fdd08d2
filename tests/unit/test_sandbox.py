"""Unit tests of sandbox and sandbox/: planning, hashing, locks, clean-up and error paths.

No sandbox root is built here; the few tests that need root privileges or a
mount namespace use the host's own (this project's machines run as root).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from sandbox import SandboxError, build, cache, environment, layers, namespaces, output_bases
from tests.conftest import CHECKOUT, PRIVATE_MOUNTS, SANDBOX, sandbox, sandbox_environment, unreachable_by_nobody

# The sandbox's package, which the `nobody` of the tests below must be able to read.
SANDBOX_PACKAGE = CHECKOUT / "sandbox"

pytestmark = pytest.mark.unit


def test_layer_hash_chain_changes_from_the_changed_layer_up():
    base, minimal, full = layers.PROFILES["full"][:3]
    before = layers.layer_hashes([base, minimal, full])
    changed_full = dataclasses.replace(full, packages=full.packages + ("librocsolver-dev",))
    after = layers.layer_hashes([base, minimal, changed_full])
    assert after[:2] == before[:2]
    assert after[2] != before[2]
    changed_base = dataclasses.replace(base, packages=base.packages[:-1])
    assert all(a != b for a, b in zip(layers.layer_hashes([changed_base, minimal, full]), before))


def test_python_3_15_is_added_on_request_and_kept_by_the_profiles_ensure():
    """No profile holds it (a changed root starts a new action cache); `ensure --python=3.15`
    extends the root there is, full or minimal, and ci_build's `ensure --rocm=full` leaves it."""
    minimal, full = layers.PROFILES["minimal"], layers.PROFILES["full"]
    assert all(layers.PYTHON_315 not in profile for profile in layers.PROFILES.values())
    have_full = layers.stamp_for(full, 0)
    asked = layers.wanted_layers("minimal", ["3.15"], have_full)  # ensure's default profile, on a full root
    assert asked == (*full, layers.PYTHON_315)
    assert layers.plan(have_full, asked).action == "extend" and layers.plan(have_full, asked).todo == (layers.PYTHON_315,)
    with_315 = layers.stamp_for(asked, 0)
    for profile in ("minimal", "full"):
        assert layers.plan(with_315, layers.wanted_layers(profile, [], with_315)).action == "none"
        assert layers.plan(with_315, layers.wanted_layers(profile, ["3.15"], with_315)).action == "none"
    assert layers.wanted_layers("minimal", ["3.15"], None) == (*minimal, layers.PYTHON_315)
    assert layers.wanted_layers("full", ["3.15", "3.15"], layers.stamp_for(minimal, 0)) == (*full, layers.PYTHON_315)
    assert layers.wanted_layers("full", [], have_full) == full
    assert "python3.15-dev" in layers.PYTHON_315.packages and set(layers.OPTIONAL_PYTHONS) == {"3.15"}


def test_ensure_takes_python_and_refuses_one_it_cannot_add(capsys):
    from sandbox import cli
    parsed = cli.parser().parse_args(["ensure", "--rocm=full", "--python=3.15"])
    assert (parsed.rocm, parsed.python) == ("full", ["3.15"])
    assert cli.parser().parse_args(["ensure"]).python == []
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["ensure", "--python=3.16"])
    assert "invalid choice: '3.16'" in capsys.readouterr().err


def test_plan_none_extend_build():
    minimal, full = layers.PROFILES["minimal"], layers.PROFILES["full"]
    assert layers.plan(None, minimal).action == "build"
    have_min = layers.stamp_for(minimal, 0)
    have_full = layers.stamp_for(full, 0)
    assert layers.plan(have_min, minimal).action == "none"
    assert layers.plan(have_full, minimal).action == "none", "a full root satisfies minimal"
    ext = layers.plan(have_min, full)
    assert ext.action == "extend"
    assert [layer.name for layer in ext.todo] == ["rocm-full", "jax-kernel-deps", "rocm-solver", "wheel-tools",
                                                  "xla-runtime-deps", "python-3.13"]
    before_python_313 = layers.stamp_for(full[:-1], 0)
    added = layers.plan(before_python_313, full)
    assert added.action == "extend" and [layer.name for layer in added.todo] == ["python-3.13"], \
        "a root from before the python-3.13 layer is extended, not rebuilt"
    changed = dataclasses.replace(minimal[1], packages=("hipcc",))
    rebuilt = layers.plan(have_full, (minimal[0], changed))
    assert rebuilt.action == "build" and "rocm-minimal" in rebuilt.reason


def test_stamp_round_trip_and_garbage(tmp_path):
    stamp = layers.stamp_for(layers.PROFILES["full"], 1234.5)
    assert layers.Stamp.parse(stamp.to_json()) == stamp
    (tmp_path / layers.STAMP).write_text("{not json")
    assert build.read_stamp(tmp_path) is None
    (tmp_path / layers.STAMP).write_text(json.dumps({"layers": "x"}))
    assert build.read_stamp(tmp_path) is None


def fake_root(paths, wanted, probes=True) -> Path:
    root = paths.sandbox / layers.root_id(wanted)
    (root / "proc").mkdir(parents=True)
    if probes:
        for layer in wanted:
            for probe in layer.probes:
                (root / probe).parent.mkdir(parents=True, exist_ok=True)
                (root / probe).touch()
    (root / layers.STAMP).write_text(layers.stamp_for(wanted, time.time()).to_json())
    paths.current.symlink_to(root.name)
    return root


def test_collect_garbage_removes_partial_and_superseded_roots(tmp_path):
    paths = cache.Paths(tmp_path)
    keep = fake_root(paths, layers.PROFILES["minimal"])
    partial = paths.sandbox / "root-abc.partial"
    (partial / "usr").mkdir(parents=True)
    old = paths.sandbox / "root-old"
    old.mkdir()
    build.collect_garbage(paths, keep=keep)
    assert keep.is_dir() and not partial.exists() and not old.exists()


def test_collect_garbage_keeps_roots_in_use(tmp_path):
    paths = cache.Paths(tmp_path)
    keep = fake_root(paths, layers.PROFILES["minimal"])
    old = paths.sandbox / "root-old"
    old.mkdir()
    # The shared lock a running sandbox command holds, taken on its own open file
    # description exactly as `run` takes it: flock(2) locks of two descriptions
    # conflict even within one process, and releasing it is synchronous (no
    # child process whose exit the test would have to wait for).
    with cache.flock(paths.use_lock, exclusive=False, waiting_msg="unexpected wait"):
        build.collect_garbage(paths, keep=keep)
        assert old.is_dir(), "a root a running command may use must survive"
    build.collect_garbage(paths, keep=keep)
    assert not old.exists()


def test_remove_tree_refuses_a_tree_with_a_mount_inside(tmp_path):
    victim = tmp_path / "root-x.partial"
    (victim / "proc").mkdir(parents=True)
    (victim / "keep.txt").write_text("data")
    script = textwrap.dedent(f"""
        from pathlib import Path
        from sandbox import SandboxError
        from sandbox.build import remove_tree
        try:
            remove_tree(Path({str(victim)!r}))
        except SandboxError as e:
            print("REFUSED:", e)
    """)
    out = subprocess.run(
        [*PRIVATE_MOUNTS, "sh", "-c",
         f"mount -t tmpfs none {victim}/proc && {sys.executable} -c \"$0\"", script],
        capture_output=True, text=True, check=True, env=sandbox_environment(),
    ).stdout
    assert out.startswith("REFUSED:") and f"{victim}/proc is mounted" in out
    assert (victim / "keep.txt").read_text() == "data"


def test_build_lock_serialises_two_processes(tmp_path):
    lock = tmp_path / "build.lock"
    script = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from sandbox.cache import flock
        with flock(Path({str(lock)!r}), True, "WAITING"):
            print("got", time.monotonic(), flush=True)
            time.sleep(1.0)
            print("released", time.monotonic(), flush=True)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=sandbox_environment()) for _ in range(2)]
    outs = [p.communicate(timeout=30) for p in procs]
    spans = sorted((float(o.split()[1]), float(o.split()[3])) for o, _ in outs)
    assert spans[0][1] <= spans[1][0], f"critical sections overlap: {spans}"
    assert sum("WAITING" in err for _, err in outs) == 1, "exactly one process waited and said so"


def test_pip_binds_carry_config_and_named_folders(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    conf = tmp_path / "pip.conf"
    conf.write_text(f"[global]\nfind-links = {wheels}\nextra-index-url = file://{tmp_path}/nowhere https://pypi.example/simple\n")
    binds = environment.pip_binds({"PIP_CONFIG_FILE": str(conf), "XDG_CONFIG_DIRS": str(tmp_path / "none")})
    targets = {b.target for b in binds}
    assert str(conf) in targets and str(wheels) in targets
    assert not any("nowhere" in t or "example" in t for t in targets)
    assert all(b.readonly for b in binds)


def test_a_local_index_is_bound_with_the_files_its_pages_link_to(tmp_path):
    # PEP 503 pages under simple/ may link to ../../files/x.whl beside simple/.
    (tmp_path / "pypi" / "simple").mkdir(parents=True)
    (tmp_path / "pypi" / "files").mkdir()
    conf = tmp_path / "pip.conf"
    conf.write_text(f"[global]\nextra-index-url = file://{tmp_path}/pypi/simple\n")
    targets = {b.target for b in environment.pip_binds({"PIP_CONFIG_FILE": str(conf), "XDG_CONFIG_DIRS": str(tmp_path / "none")})}
    assert str(tmp_path / "pypi") in targets and str(tmp_path / "pypi" / "simple") not in targets


def test_sandbox_env_passes_only_what_is_declared(monkeypatch):
    monkeypatch.setenv("ROCM_PATH", "/opt/rocm")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/host/lib")
    monkeypatch.setenv("SOME_SECRET", "x")
    env = environment.sandbox_env(["EXTRA=1", "SOME_SECRET"])
    assert env["ROCM_PATH"] == "/opt/rocm" and env["EXTRA"] == "1" and env["SOME_SECRET"] == "x"
    assert "LD_LIBRARY_PATH" not in env
    assert env["PATH"].startswith("/usr/local/sbin") and env["HOME"] == "/root"
    assert "SOME_SECRET" not in environment.sandbox_env()


def test_generated_bazelrc_resolves_offline_from_this_checkout(tmp_path):
    paths = cache.Paths(tmp_path)
    text = environment.bazel_system_rc(paths, environment.CHECKOUT)
    assert f"startup --output_user_root={tmp_path}/bazel" in text
    assert "%workspace%" not in text
    for module in ("zlib", "protobuf", "buildozer", "apple_support"):
        line = f"--override_module={module}={environment.CHECKOUT}/tools/offline/modules/{module}"
        assert line in text
        assert (environment.CHECKOUT / f"tools/offline/modules/{module}/MODULE.bazel").read_text().count(f'name = "{module}"') == 1


# ---- error paths of the command line, as a user meets them ----------------


def cli(tmp_path, *args, user=None, extra_env=None, prefix=()):
    # PYTHONPATH names the checkout: `-m sandbox` finds it from any folder, as any user.
    env = sandbox_environment(dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), **(extra_env or {})))
    cmd = [*prefix, *SANDBOX, *args]
    if user:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def one_error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return lines[0]


def test_too_little_disk_is_said_by_the_check_before_anything_is_made(monkeypatch, tmp_path):
    """`ensure --check` (what ci_build and the test runner run first) names the disk a root needs
    when there is too little of it; a built root needs none."""
    import collections
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "rootless", lambda: False)
    monkeypatch.setattr(build, "require_privileges", lambda: None)
    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(build.shutil, "disk_usage", lambda path: usage(100e9, 94e9, 6e9))
    paths = cache.Paths.default()
    with pytest.raises(SandboxError) as e:
        build.check_prerequisites(paths, "full")
    assert f"needs about {build.REQUIRED_FREE_GB['full']} GB free" in str(e.value) and "6.0 GB is" in str(e.value)
    assert "\n" not in str(e.value)
    monkeypatch.setattr(build, "up_to_date", lambda paths, profile, pythons=(): True)
    build.check_prerequisites(paths, "full")


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming a user without subordinate ids (nobody) needs root")
@pytest.mark.skipif(bool(unreachable_by_nobody(SANDBOX_PACKAGE)), reason=unreachable_by_nobody(SANDBOX_PACKAGE) or "-")
def test_a_user_without_subordinate_ids_is_told_how_to_get_them(tmp_path):
    tmp_path.chmod(0o777)
    # newuidmap and newgidmap are looked for first: stand-ins on PATH (found, never run), so that
    # this machine's uidmap package, or its absence, does not decide which error comes.
    with tempfile.TemporaryDirectory(dir="/tmp") as tools:
        os.chmod(tools, 0o755)  # nobody reaches it (pytest's tmp_path lies in root's 0700 folder)
        for name in ("newuidmap", "newgidmap"):
            (Path(tools) / name).write_text("#!/bin/sh\nexit 1\n")
            (Path(tools) / name).chmod(0o755)
        result = cli(tmp_path, "ensure", user="65534", extra_env={"PATH": f"{tools}:{os.environ['PATH']}"})
    assert result.returncode == 1
    line = one_error_line(result)
    assert "/etc/subuid gives nobody none" in line and "usermod --add-subuids" in line and "as root" in line


SUBUID = """\
# comment
alice:100000:65536
1002:200000:65536
empty:300000:0
"""


def test_subordinate_ranges_are_found_by_name_or_number():
    assert namespaces.subordinate_range(SUBUID, "alice", 1001) == (100000, 65536)
    assert namespaces.subordinate_range(SUBUID, "bob", 1002) == (200000, 65536)
    assert namespaces.subordinate_range(SUBUID, "empty", 1003) is None, "a zero-length range maps nobody"
    assert namespaces.subordinate_range(SUBUID, "carol", 1004) is None


def test_the_user_is_root_inside_and_its_range_the_other_users():
    assert namespaces.IdMap(1001, 100000, 65536).newidmap_args() == ["0", "1001", "1", "1", "100000", "65536"]


@pytest.mark.parametrize(("files", "which", "expected"), [
    ({"/proc/sys/kernel/unprivileged_userns_clone": "0\n"}, True, "disables: an administrator enables them"),
    ({"/proc/sys/user/max_user_namespaces": "0\n"}, True, "sysctl kernel.unprivileged_userns_clone=1"),
    ({}, False, "needs newuidmap and newgidmap (Debian/Ubuntu package uidmap"),
    ({"/etc/subuid": "", "/etc/subgid": "someone:1:2\n"}, True, "/etc/subuid gives"),
    ({"/etc/subuid": SUBUID.replace("alice", "{user}"), "/etc/subgid": ""}, True, "/etc/subgid gives"),
])
def test_what_a_rootless_sandbox_lacks_is_one_sentence(monkeypatch, files, which, expected):
    import pwd
    user = pwd.getpwuid(os.geteuid()).pw_name
    present = {"/etc/subuid": f"{user}:100000:65536\n", "/etc/subgid": f"{user}:100000:65536\n",
               **{k: v.replace("{user}", user) for k, v in files.items()}}
    monkeypatch.setattr(namespaces, "_read", lambda path: present.get(path, ""))
    monkeypatch.setattr(namespaces.shutil, "which", lambda tool: f"/usr/bin/{tool}" if which else None)
    with pytest.raises(SandboxError) as e:
        namespaces.rootless_maps()
    assert expected in str(e.value) and "\n" not in str(e.value)
    assert "as root" in str(e.value) and "build/ci_build --host" in str(e.value), "and the ways around it"


def test_without_mmdebstrap_the_check_says_so_before_anything_is_made(monkeypatch, tmp_path):
    """`ensure --check` (what ci_build runs before any download): an ordinary user whose machine
    lacks mmdebstrap is told so in one line, exit 2; with the root already built nothing is needed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "rootless", lambda: True)
    monkeypatch.setattr(build, "rootless_maps", lambda: None)  # uidmap and subordinate ids present
    monkeypatch.setattr(build.shutil, "which", lambda tool: None if tool == "mmdebstrap" else f"/usr/bin/{tool}")
    paths = cache.Paths.default()
    with pytest.raises(SandboxError) as e:
        build.check_prerequisites(paths, "minimal")
    assert "needs mmdebstrap" in str(e.value) and "apt-get install mmdebstrap uidmap" in str(e.value)
    assert "\n" not in str(e.value) and "as root" in str(e.value)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("root-*")), "nothing built"
    monkeypatch.setattr(build, "up_to_date", lambda paths, profile, pythons=(): True)
    build.check_prerequisites(paths, "minimal")  # a built root needs no mmdebstrap


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming a user without subordinate ids (nobody) needs root")
@pytest.mark.skipif(bool(unreachable_by_nobody(SANDBOX_PACKAGE)), reason=unreachable_by_nobody(SANDBOX_PACKAGE) or "-")
def test_the_check_is_exit_2_and_one_line_and_root_passes_it(tmp_path):
    tmp_path.chmod(0o777)
    with tempfile.TemporaryDirectory(dir="/tmp") as tools:
        os.chmod(tools, 0o755)
        for name in ("newuidmap", "newgidmap"):
            (Path(tools) / name).write_text("#!/bin/sh\nexit 1\n")
            (Path(tools) / name).chmod(0o755)
        result = cli(tmp_path, "ensure", "--check", user="65534", extra_env={"PATH": f"{tools}:{os.environ['PATH']}"})
    assert result.returncode == 2, result.stderr
    assert "/etc/subuid gives nobody none" in one_error_line(result)
    assert cli(tmp_path, "ensure", "--check").returncode == 0  # root builds with debootstrap, which it installs itself


def test_a_rootless_sandbox_with_its_ids_maps_them(monkeypatch):
    import grp
    import pwd
    user, group = pwd.getpwuid(os.geteuid()).pw_name, grp.getgrgid(os.getegid()).gr_name
    present = {"/etc/subuid": f"{user}:100000:65536\n", "/etc/subgid": f"{group}:300000:1000\n"}
    monkeypatch.setattr(namespaces, "_read", lambda path: present.get(path, ""))
    monkeypatch.setattr(namespaces.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    assert namespaces.rootless_maps() == (namespaces.IdMap(os.geteuid(), 100000, 65536),
                                          namespaces.IdMap(os.getegid(), 300000, 1000))


def test_unreachable_mirror_is_one_line(tmp_path):
    result = cli(tmp_path, "--mirror=http://127.0.0.1:9/debian", "ensure")
    assert result.returncode == 1
    line = one_error_line(result)
    assert "cannot reach the Debian mirror http://127.0.0.1:9/debian" in line and "--mirror" in line


def test_disk_full_is_one_line(tmp_path):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    # A 64 MB file system as the cache: far too small for any root.
    result = cli(tmp_path, "ensure", prefix=(
        *PRIVATE_MOUNTS, "sh", "-c", f'mount -t tmpfs -o size=64m none {cache_dir} && exec "$@"', "sh"))
    assert result.returncode == 1
    line = one_error_line(result)
    assert "disk full" in line and "GB free" in line and "XDG_CACHE_HOME" in line


def test_corrupted_root_is_detected_and_rebuilt(tmp_path):
    paths = cache.Paths(tmp_path / "cache" / "jax-rocm-build")
    fake_root(paths, layers.PROFILES["minimal"], probes=False)
    info = cli(tmp_path, "info")
    assert info.returncode == 1 and "run `python3 -m sandbox ensure`" in one_error_line(info)
    # ensure notices the damage and starts a rebuild (which fails here on the unreachable mirror).
    result = cli(tmp_path, "--mirror=http://127.0.0.1:9/debian", "ensure")
    assert "is corrupted (usr/bin/bazel is missing); rebuilding it" in result.stderr
    assert result.returncode == 1


def test_run_without_command_is_an_error(tmp_path):
    result = cli(tmp_path, "run", "--")
    assert result.returncode == 125 and "no command given" in one_error_line(result)


def test_help_teaches_every_subcommand():
    out = sandbox("--help").stdout
    for word in ("ensure", "run", "info", "clean", "prune", "XDG_CACHE_HOME", "--mirror", "125"):
        assert word in out


def test_an_ambient_rocm_path_is_mounted_only_when_it_is_a_host_folder_of_its_own(tmp_path):
    rocm = tmp_path / "rocm-7.2.4"
    rocm.mkdir()
    assert environment.rocm_path_binds({"ROCM_PATH": str(rocm)}) == [rocm]
    assert environment.rocm_path_binds({"ROCM_PATH": str(tmp_path / "missing")}) == []
    assert environment.rocm_path_binds({"ROCM_PATH": "/usr"}) == []  # the root's own /usr: Debian's ROCm inside
    assert environment.rocm_path_binds({"ROCM_PATH": "relative/rocm"}) == []
    assert environment.rocm_path_binds({}) == []


def test_an_extra_folder_behind_a_link_is_mounted_at_the_link_and_at_its_target(tmp_path, monkeypatch):
    monkeypatch.delenv("ROCM_PATH", raising=False)
    real = Path("/var/tmp") / f"sandbox-test-{os.getpid()}" / "rocm-7.2.4"
    real.mkdir(parents=True, exist_ok=True)
    link = real.parent / "rocm"
    link.symlink_to(real.name)
    try:
        binds = environment.run_binds(cache.Paths.default(), [link], Path("/"))
    finally:
        link.unlink()
        real.rmdir()
        real.parent.rmdir()
    extra = [(b.source, b.target) for b in binds if b.source == real]
    assert extra == [(real, str(link)), (real, str(real))]


def test_a_folder_the_sandbox_mounts_anyway_is_not_mounted_again(tmp_path, monkeypatch):
    """Callers pass every folder a command needs; run_binds leaves out those below the checkout
    and /tmp, which every run mounts (and mounts nothing of the checkout's parent)."""
    monkeypatch.delenv("ROCM_PATH", raising=False)
    below_tmp = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        binds = environment.run_binds(cache.Paths.default(), [below_tmp, environment.CHECKOUT / "examples"], Path("/"))
    finally:
        below_tmp.rmdir()
    targets = [b.target for b in binds]
    assert str(below_tmp) not in targets and str(environment.CHECKOUT / "examples") not in targets
    assert targets.count("/tmp") == 1 and targets.count(str(environment.CHECKOUT)) == 1
    assert str(environment.CHECKOUT.parent / "shared") not in targets


# ---- output bases of deleted checkouts ----------------


def fake_output_base(user_root: Path, workspace: Path, name: str | None = None) -> Path:
    base = user_root / (name or output_bases.default_name(workspace))
    (base / "execroot" / "_main").mkdir(parents=True)
    (base / "execroot" / "_main" / "big.o").write_bytes(b"\0" * 4096)
    (base / "README").write_text(f"WORKSPACE: {workspace}\n\nThe first line of this file is intentionally easy to parse\n")
    return base


def test_only_output_bases_of_checkouts_that_are_gone_are_orphans(tmp_path):
    user_root = tmp_path / "bazel"
    alive = tmp_path / "alive"
    alive.mkdir()
    kept = fake_output_base(user_root, alive)
    gone = fake_output_base(user_root, tmp_path / "deleted-checkout")
    # --output_base=... chose this folder: the README's workspace is not what names it.
    renamed = fake_output_base(user_root, tmp_path / "deleted-too", name="chosen-by-hand")
    (user_root / "cache" / "repos").mkdir(parents=True)  # the repository cache: no README
    found = output_bases.output_bases(user_root)
    assert {b.path for b in found} == {kept, gone, renamed}
    assert [b.path for b in output_bases.orphans(found)] == [gone]


def test_prune_deletes_orphans_and_says_what_it_freed(tmp_path):
    user_root = cache.Paths(tmp_path / "cache" / "jax-rocm-build").bazel_user_root
    alive = tmp_path / "alive"
    alive.mkdir()
    kept = fake_output_base(user_root, alive)
    gone = fake_output_base(user_root, tmp_path / "deleted-checkout")
    (gone / "execroot" / "_main").chmod(0o555)  # Bazel's outputs are read-only
    result = cli(tmp_path, "prune")
    assert result.returncode == 0, result.stderr
    assert kept.is_dir() and not gone.exists()
    assert f"its checkout {tmp_path / 'deleted-checkout'} no longer exists" in result.stderr
    assert "pruned 1 output base(s)" in result.stderr
    again = cli(tmp_path, "prune")
    assert "pruned 0 output base(s)" in again.stderr and kept.is_dir()


def test_a_layers_commands_run_after_its_packages_and_stop_at_the_first_failure(tmp_path, monkeypatch):
    paths = cache.Paths(tmp_path)
    spec = build.install_spec(tmp_path / "root", paths, layers.PYTHON_313)
    script = spec.argv[-1]
    assert script.startswith("set -e; ") and script.index("apt-get install") < script.index("--require-hashes")
    assert "python3.13-dev" in script and layers.NUMPY_313 in script
    # pip trusts the host's CA bundle (a TLS-inspecting proxy), apt the root's own; a host
    # without a bundle gives pip none. Both cases, whatever this host has.
    monkeypatch.delenv("PIP_CERT", raising=False)  # sandbox_env passes PIP_* through
    ca = tmp_path / "ca.crt"
    ca.write_text("")
    monkeypatch.setattr(build, "host_ca_bundle", lambda: ca)
    spec = build.install_spec(tmp_path / "root", paths, layers.PYTHON_313)
    assert spec.env["PIP_CERT"] == build.HOST_CA and any(b.source == ca and b.target == build.HOST_CA for b in spec.binds)
    assert build.install_spec(tmp_path / "root", paths, layers.BASE).env.get("PIP_CERT") != build.HOST_CA
    monkeypatch.setattr(build, "host_ca_bundle", lambda: None)
    assert "PIP_CERT" not in build.install_spec(tmp_path / "root", paths, layers.PYTHON_313).env
