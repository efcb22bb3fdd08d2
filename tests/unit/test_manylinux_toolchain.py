"""The manylinux_2_28 host toolchain as build/ci_build and tools/prefetch.py use it (no Bazel here;
tests/bazel/test_manylinux_toolchain.py builds with it)."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

from bench import bench_manylinux as bench
from ci_build_cli import cli, dist_wheels, wheels
from tests.conftest import CHECKOUT, DRY_RUN, bazel_build
from tests.infra import bullseye_root as bullseye
from toolchains.manylinux import extract_zig
from tools import prefetch

pytestmark = pytest.mark.unit


def test_dist_wheels_builds_with_the_manylinux_2_28_toolchain_by_default(recorded, capsys):
    assert cli.main(DRY_RUN) == 0
    cmd = bazel_build(recorded)
    assert cmd.index("--config=rocm_release") + 1 == cmd.index("--config=manylinux_2_28")  # after rocm's, to override it
    err = capsys.readouterr().err
    assert "--manylinux=manylinux_2_28" in err and "--@jax_rocm_build//wheel:platform_tag=manylinux_2_28_x86_64" in err


def test_host_toolchain_sandbox_keeps_the_sandbox_compiler_and_the_best_certified_tag(recorded, capsys):
    assert cli.main(DRY_RUN + ["--host-toolchain=sandbox"]) == 0
    cmd = bazel_build(recorded)
    assert [w for w in cmd if w.startswith("--config=")] == ["--config=rocm_release"]
    assert "--@jax_rocm_build//wheel:platform_tag=<the policy it certifies>" in capsys.readouterr().err


def test_required_policy_follows_manylinux_then_the_toolchain():
    parse = cli.parse_args
    # In either mode: full mode builds with the same toolchain config (full/.bazelrc imports it).
    assert parse(["dist_wheels"]).mode == "full" and wheels.required_policy(parse(["dist_wheels"])) == "manylinux_2_28"
    assert wheels.required_policy(parse(["--sources=examples", "dist_wheels"])) == "manylinux_2_28"
    assert wheels.required_policy(parse(["dist_wheels", "--manylinux=2_31"])) == "2_31"
    assert wheels.required_policy(parse(["dist_wheels", "--host-toolchain=sandbox"])) is None
    assert wheels.required_policy(parse(["--manylinux=manylinux_2_38", "dist_wheels", "--host-toolchain=sandbox"])) == "manylinux_2_38"
    assert [wheels.policy_name(p) for p in ("2_28", "manylinux_2_28", "manylinux_2_28_x86_64")] == ["manylinux_2_28"] * 3


def test_a_misspelt_policy_fails_before_anything_runs(recorded, capsys):
    """An input error: exit status 2 and one line naming the flag (wheel_audit's parser says why)."""
    assert cli.main(DRY_RUN + ["--manylinux=manylinux2014"]) == 2
    err = capsys.readouterr().err
    assert err == "ci_build: --manylinux=manylinux2014: 'manylinux2014' is not a manylinux policy such as manylinux_2_28 or 2_28\n"
    assert recorded == []


def fake_wheel(path):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("jax_rocm7_plugin/build_info.json", json.dumps({"rocm_version": "7.2.4", "artifacts": {}}))
    return path


def test_a_required_policy_that_is_met_is_the_tag_even_when_older_symbols_would_do(recorded, monkeypatch, tmp_path):
    """Zig's glibc 2.28 stubs often leave only GLIBC_2.17-era symbols: auditwheel's best tag is then
    manylinux_2_17, but the toolchain promises 2.28, and the wheels are tagged with what was required."""
    built = [fake_wheel(tmp_path / "jax_rocm7_pjrt-0.10.2-py3-none-linux_x86_64.whl"),
             fake_wheel(tmp_path / "jax_rocm7_plugin-0.10.2-cp314-cp314-linux_x86_64.whl")]
    audits = []
    monkeypatch.setattr(wheels, "built_wheels", lambda events: [wheels.read_wheel(w) for w in built])
    monkeypatch.setattr(dist_wheels, "CACHE", tmp_path)  # where the run keeps its wheels aside
    monkeypatch.setattr(wheels, "audit_wheels", lambda ws, policy: audits.append(policy) or {
        w.name: {"ok": True, "platform_tag": "manylinux_2_17_x86_64"} for w in ws})
    args = [a for a in DRY_RUN if a != "--dry-run"] + ["--allow-stand-ins", f"--output-dir={tmp_path / 'dist'}"]
    assert cli.main(args) == 0
    assert audits == ["manylinux_2_28"]
    builds = [cmd for cmd, _ in recorded if "//:jax_rocm_wheels" in cmd]
    assert "--@jax_rocm_build//wheel:platform_tag=manylinux_2_28_x86_64" in builds[-1] and builds[-1][-1] == "//:jax_rocm_wheels"
    assert sorted(p.name for p in (tmp_path / "dist").iterdir()) == sorted(w.name for w in built)


def test_a_wheel_that_fails_the_required_policy_stops_dist_wheels(recorded, monkeypatch, tmp_path, capsys):
    built = [fake_wheel(tmp_path / "jax_rocm7_pjrt-0.10.2-py3-none-linux_x86_64.whl")]
    monkeypatch.setattr(dist_wheels, "CACHE", tmp_path)
    monkeypatch.setattr(wheels, "built_wheels", lambda events: [wheels.read_wheel(w) for w in built])
    monkeypatch.setattr(wheels, "audit_wheels", lambda ws, policy: {
        w.name: {"ok": False, "platform_tag": "manylinux_2_38_x86_64"} for w in ws})
    assert cli.main([a for a in DRY_RUN if a != "--dry-run"] + ["--allow-stand-ins"]) == 1
    assert "1 wheel(s) failed the audit: jax_rocm7_pjrt-0.10.2-py3-none-linux_x86_64.whl" in capsys.readouterr().err
    assert not any("--@jax_rocm_build//wheel:platform_tag" in " ".join(cmd) for cmd, _ in recorded)


def test_prefetch_fetches_zigs_wheel_with_pip_by_its_first_platform_tag():
    pinned, _ = prefetch.pinned_wheels()
    zig = next(w for w in pinned if w.filename.startswith("ziglang-"))
    pin = json.loads((CHECKOUT / "third_party/zig/pin.json").read_text())
    assert zig.sha256 == pin["sha256"] and zig.requirement == f"ziglang=={pin['version']}"
    # pip takes one platform tag, and a py3 wheel fits pip's own Python (no --python-version).
    assert zig.pip_args() == ["--no-deps", "--only-binary=:all:", "ziglang==0.17.0",
                              "--platform", "manylinux_2_12_x86_64", "--abi", "none"]


def test_the_toolchain_config_is_imported_and_only_names_zig_sdk():
    assert "try-import %workspace%/toolchains/manylinux/manylinux.bazelrc" in (CHECKOUT / ".bazelrc").read_text()
    rc = (CHECKOUT / "toolchains/manylinux/manylinux.bazelrc").read_text()
    assert "common:manylinux_2_28 --@jax_rocm_build//toolchains/manylinux:glibc=2.28" in rc  # from either root module
    assert "import %workspace%/../toolchains/manylinux/manylinux.bazelrc" in (CHECKOUT / "full" / ".bazelrc").read_text()
    module = (CHECKOUT / "MODULE.bazel").read_text()
    assert 'register_toolchains("//toolchains/manylinux:cc_toolchain_x86_64_glibc_2_28")' in module


def test_bullseye_run_without_a_root_names_the_command_that_builds_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert bullseye.main(["run", "--", "true"]) == 1
    err = capsys.readouterr().err
    assert f"no bullseye root at {tmp_path}/jax-rocm-build/bullseye/root" in err
    assert "python3 -m tests.infra.bullseye_root ensure" in err


def test_bullseye_run_refuses_a_missing_file_and_a_missing_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "jax-rocm-build/bullseye/root/usr/bin").mkdir(parents=True)
    (tmp_path / "jax-rocm-build/bullseye/root/usr/bin/python3").touch()
    assert bullseye.main(["run", str(tmp_path / "nonesuch.so"), "--", "true"]) == 1
    assert f"{tmp_path / 'nonesuch.so'}: no such file to copy into the bullseye root" in capsys.readouterr().err
    assert bullseye.main(["run", str(tmp_path / "nonesuch.so")]) == 1
    assert "run needs a command after --" in capsys.readouterr().err


def test_bullseye_ensure_does_nothing_when_the_root_is_there(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "jax-rocm-build/bullseye/root/usr/bin").mkdir(parents=True)
    (tmp_path / "jax-rocm-build/bullseye/root/usr/bin/python3").touch()
    assert bullseye.main(["ensure"]) == 0
    assert "is ready (nothing to do)" in capsys.readouterr().out


def test_bench_reads_every_native_library_of_the_wheels_and_prints_ratios(tmp_path):
    wheel = tmp_path / "jax_rocm7_plugin-0.10.2-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("jax_rocm7_plugin/_prng.cpython-311-x86_64-linux-gnu.so", b"\x7fELF" + b"0" * 96)
        z.writestr("jax_rocm7_plugin/version.py", "x = 1\n")
    assert bench.native_sizes([wheel]) == {"jax_rocm7_plugin/_prng.cpython-311-x86_64-linux-gnu.so": 100}
    assert bench.ratio(150, 100) == "1.50x" and bench.ratio(1, 0) == "-"
    assert bench.TOOLCHAINS[0] == "sandbox"  # the baseline is the sandbox's own compiler


UNUSED = ["lib/libc/musl/*", "lib/libc/include/*musl*/*"]


def test_extract_zig_unpacks_the_prefix_minus_the_skipped_and_keeps_modes(tmp_path):
    wheel = tmp_path / "ziglang.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        exe = zipfile.ZipInfo("ziglang/zig")
        exe.external_attr = 0o755 << 16
        z.writestr(exe, b"\x7fELF")
        z.writestr("ziglang/lib/libcxx/include/string", "// libc++")
        z.writestr("ziglang/lib/libc/musl/src/x.c", "// musl")
        z.writestr("ziglang/lib/libc/include/x86_64-linux-musl/stdio.h", "// musl headers")
        z.writestr("ziglang/lib/libc/include/x86-linux-gnu/bits/a.h", "// glibc headers")
        z.writestr("ziglang-0.17.0.dist-info/METADATA", "Name: ziglang")
    into = tmp_path / "sdk"
    assert extract_zig.main([str(wheel), "--prefix", "ziglang/", "--into", str(into), *[a for g in UNUSED for a in ("--skip", g)]]) == 0
    got = sorted(str(p.relative_to(into)) for p in into.rglob("*") if p.is_file())
    assert got == ["lib/libc/include/x86-linux-gnu/bits/a.h", "lib/libcxx/include/string", "zig"]
    assert (into / "zig").stat().st_mode & 0o777 == 0o755


def test_extract_zig_refuses_a_member_that_leaves_the_folder(tmp_path, capsys):
    wheel = tmp_path / "evil.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("ziglang/../../outside", "x")
    assert extract_zig.main([str(wheel), "--prefix", "ziglang/", "--into", str(tmp_path / "sdk")]) == 1
    assert "outside the archive's folder" in capsys.readouterr().err
    assert not (tmp_path.parent / "outside").exists()
    assert extract_zig.main([str(wheel), "--prefix", "nothing/", "--into", str(tmp_path / "sdk")]) == 1
    assert "has no member under 'nothing/'" in capsys.readouterr().err


def rendered_compiler(folder: Path) -> Path:
    """@zig_sdk's bin/cc as extensions.bzl writes it, over a stand-in `sdk/zig` that records its
    arguments (one line per call) and writes the -o file, as a compile would."""
    text = (CHECKOUT / "toolchains" / "manylinux" / "extensions.bzl").read_text()
    wrapper, cc_run = (re.search(rf'{name} = """(.*?)"""\n', text, re.S).group(1) for name in ("_WRAPPER", "_CC_RUN"))
    command = "c++ -target x86_64-linux-gnu.2.28"
    (folder / "bin").mkdir(parents=True)
    (folder / "sdk").mkdir()
    cc = folder / "bin" / "cc"
    cc.write_text(wrapper.format(what="test", version="0", sha256="0", target="t", run=cc_run.format(command=command)))
    zig = folder / "sdk" / "zig"
    zig.write_text('#!/bin/sh\necho "$*" >> "$CALLS"\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && : > "$2"; shift; done\n')
    for path in (cc, zig):
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return cc


def test_a_bitcode_compile_gets_its_output_and_its_dependency_file(tmp_path):
    """Zig 0.17 writes no -o file for -emit-llvm when asked for -MD -MF (XLA's cc_ir_header):
    the wrapper compiles without them, then writes the dependency file with -M; other compiles
    pass through untouched."""
    cc = rendered_compiler(tmp_path / "zig_sdk")
    calls = tmp_path / "calls"
    env = {"PATH": "/usr/bin:/bin", "CALLS": str(calls), "TMPDIR": str(tmp_path)}
    bitcode = ["-MD", "-MF", "o/x.d", "-fPIC", "-c", "-emit-llvm", "x.cc", "-o", "o/x.o"]
    (tmp_path / "o").mkdir()
    assert subprocess.run([str(cc), *bitcode], cwd=tmp_path, env=env).returncode == 0
    compile_, deps = calls.read_text().splitlines()
    assert compile_ == "c++ -target x86_64-linux-gnu.2.28 -fPIC -c -emit-llvm x.cc -o o/x.o"
    assert deps == "c++ -target x86_64-linux-gnu.2.28 -fPIC x.cc -M -MF o/x.d -MT o/x.o"
    calls.unlink()
    plain = ["-MD", "-MF", "o/y.d", "-c", "y.cc", "-o", "o/y.o"]
    assert subprocess.run([str(cc), *plain], cwd=tmp_path, env=env).returncode == 0
    assert calls.read_text().splitlines() == ["c++ -target x86_64-linux-gnu.2.28 " + " ".join(plain)]
    assert not list(tmp_path.glob("zig-cache.*"))  # each call's private cache is gone with it
