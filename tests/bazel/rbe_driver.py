"""Driver of tests/bazel/test_rbe.py: one HIP library built locally, remotely, and from the remote cache.

Runs inside the sandbox root, from the checkout, as a module under `tests.infra.rbe.cluster run`,
which exports JAX_ROCM_RBE_EXECUTOR and JAX_ROCM_RBE_INSTANCE. Works in a copy of the checkout
(so that its Bazel output base is private) and prints one JSON object of results
on stdout; Bazel's own output goes to stderr.

    python3 -m tests.infra.rbe.cluster run -- python3 -m tests.bazel.rbe_driver
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Iterator

from tests.infra.copy_workspace import copy_workspace
from tools.digest import sha256_of

CHECKOUT = Path(__file__).resolve().parent.parent.parent

TARGET = "//tests/rocm/hip:libhip_kernels.so"
OUTPUT = "bazel-bin/tests/rocm/hip/libhip_kernels.so"
AMDGPU_TARGETS = "--//rocm:amdgpu_targets=gfx90a,gfx942"
# One build takes well under a minute here; a hung executor must fail the test, not stall it.
BAZEL_TIMEOUT = 900


def bazel(workspace: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Runs Bazel in `workspace`; returns its stderr (where Bazel reports), echoed to ours."""
    argv = ["bazel", *args]
    print(f"rbe_driver: {' '.join(argv)}", file=sys.stderr, flush=True)
    result = subprocess.run(argv, cwd=workspace, capture_output=True, text=True, timeout=BAZEL_TIMEOUT, env=env)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        raise SystemExit(f"rbe_driver: `{' '.join(argv)}` exited {result.returncode} (its output is above)")
    return result.stderr


def processes_line(stderr: str) -> str:
    """Bazel's summary, e.g. "7 processes: 5 internal, 2 remote."."""
    found = re.findall(r"^INFO: (\d+ process.*)$", stderr, re.MULTILINE)
    return found[-1] if found else ""


def read_execution_log(path: Path) -> list[dict]:
    """--execution_log_json_file writes concatenated JSON objects, not one array."""
    text, decoder, spawns, pos = path.read_text(), json.JSONDecoder(), [], 0
    while (pos := _skip_space(text, pos)) < len(text):
        spawn, pos = decoder.raw_decode(text, pos)
        spawns.append(spawn)
    return spawns


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def runners_by_mnemonic(spawns: list[dict]) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter] = {}
    for spawn in spawns:
        counts.setdefault(spawn.get("mnemonic", "?"), Counter())[spawn.get("runner", "?")] += 1
    return {mnemonic: dict(c) for mnemonic, c in sorted(counts.items())}


def build(workspace: Path, config: list[str], logs: Path, name: str) -> dict:
    """One build; its execution log and library are kept in `logs` as NAME.json and NAME.so."""
    log = logs / f"{name}.json"
    # --disk_cache=: no shared action cache (the sandbox's rc sets one): its hits would replace the
    # local, remote and remote-cache-hit spawns this test must see, and make the comparison vacuous.
    stderr = bazel(workspace, "build", *config, AMDGPU_TARGETS, "--disk_cache=", f"--execution_log_json_file={log}", TARGET)
    shutil.copy(workspace / OUTPUT, logs / f"{name}.so")
    return {
        "processes": processes_line(stderr),
        "runners": runners_by_mnemonic(read_execution_log(log)),
        "sha256": sha256_of(logs / f"{name}.so"),
    }


def compare(local: Path, remote: Path) -> dict:
    """What differs between two builds of the library, for the test's failure message."""
    cmp = subprocess.run(["cmp", "-l", str(local), str(remote)], capture_output=True, text=True)
    differing = cmp.stdout.splitlines()
    return {"sizes": [local.stat().st_size, remote.stat().st_size], "differing_bytes": len(differing),
            "first_differences": differing[:20]}


@contextlib.contextmanager
def disposable_workspace(prefix: str, results: dict, given: Path | None = None) -> Iterator[tuple[Path, Path]]:
    """(workspace, logs): a copy of this checkout (or `given`, already a copy) and a folder for the
    outputs to compare. Afterwards the copy and its own output base are deleted, and the logs too
    unless `results` records a "difference", which keeps them for a look."""
    workspace = given or Path(tempfile.mkdtemp(prefix=f"{prefix}-ws-"))
    logs = Path(tempfile.mkdtemp(prefix=f"{prefix}-logs-"))
    try:
        if given is None:
            copy_workspace(workspace, CHECKOUT)
        yield workspace, logs
    finally:
        subprocess.run(["bazel", "clean", "--expunge"], cwd=workspace, capture_output=True, timeout=BAZEL_TIMEOUT)
        shutil.rmtree(workspace, ignore_errors=True)
        if "difference" not in results:
            shutil.rmtree(logs, ignore_errors=True)


def main() -> int:
    remote = ["--config=rocm_rbe", f"--remote_executor={os.environ['JAX_ROCM_RBE_EXECUTOR']}",
              f"--remote_instance_name={os.environ['JAX_ROCM_RBE_INSTANCE']}"]
    results: dict = {}
    with disposable_workspace("jax-rocm-rbe", results) as (workspace, logs):
        results["local"] = build(workspace, ["--config=rocm"], logs, "local")
        bazel(workspace, "clean")
        results["remote"] = build(workspace, remote, logs, "remote")
        bazel(workspace, "clean")
        results["cached"] = build(workspace, remote, logs, "cached")
        differ = [n for n in ("remote", "cached") if results[n]["sha256"] != results["local"]["sha256"]]
        if differ:
            results["difference"] = {"kept_in": str(logs),
                                     **{n: compare(logs / "local.so", logs / f"{n}.so") for n in differ}}
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
