"""tests/infra/isolated_replay.py's reading of execution logs and its scan for forbidden paths
(the replay itself needs root and namespaces: tests/bazel/test_hermetic.py)."""

from __future__ import annotations

import json

import pytest

from tests.infra import isolated_replay as replay

pytestmark = pytest.mark.unit

OUTPUT_BASE = "/root/.cache/jax-rocm-build/bazel/0123abcd"


def spawn(args, env=None, inputs=()):
    return {"commandArgs": args, "environmentVariables": [{"name": k, "value": v} for k, v in (env or {}).items()],
            "inputs": [{"path": p} for p in inputs], "mnemonic": "CppLink"}


def test_reads_a_stream_of_pretty_printed_spawns(tmp_path):
    log = tmp_path / "exec.json"
    log.write_text(json.dumps(spawn(["a"]), indent=2) + "\n" + json.dumps(spawn(["b"]), indent=2) + "\n")
    assert [s["commandArgs"] for s in replay.read_log(log)] == [["a"], ["b"]]


def test_a_hermetic_spawn_has_no_leaks(tmp_path):
    ok = spawn(["external/_main~zig~zig_sdk/bin/cc", "-isystem", "external/_main~zig~zig_sdk/sdk/lib/libcxx/include"],
               {"PATH": "/bin:/usr/bin", "ZIG_RUNTIME_CACHE": "bazel-out/k8-opt/bin/external/_main~zig~zig_sdk/runtime_opt"})
    assert replay.leaks(ok, tmp_path, [OUTPUT_BASE, "/home/me/checkout", "/var/tmp"]) == []


def test_the_former_absolute_header_paths_and_cache_are_caught(tmp_path):
    """What HIP compiles and the wrappers named before: the output base, /var/tmp."""
    old = spawn(["clang", "-stdlib++-isystem", f"{OUTPUT_BASE}/external/_main~zig~zig_sdk/sdk/lib/libcxx/include"],
                {"ZIG_GLOBAL_CACHE_DIR": "/var/tmp/jax-rocm-build/zig-cache"})
    found = replay.leaks(old, tmp_path, [OUTPUT_BASE, "/var/tmp"])
    assert len(found) == 2 and found[0].startswith("argument: ") and found[1].startswith("environment: ZIG_GLOBAL")


def test_param_files_are_scanned(tmp_path):
    params = tmp_path / "bazel-out/k8-opt/bin/lib.so-2.params"
    params.parent.mkdir(parents=True)
    params.write_text(f"-shared\n-L{OUTPUT_BASE}/external/x\n")
    found = replay.leaks(spawn(["cc", "@bazel-out/k8-opt/bin/lib.so-2.params"], inputs=["bazel-out/k8-opt/bin/lib.so-2.params"]),
                         tmp_path, [OUTPUT_BASE])
    assert found == [f"param file bazel-out/k8-opt/bin/lib.so-2.params: -L{OUTPUT_BASE}/external/x"]
