"""Driver of tests/bazel/test_rbe_wheels.py: `ci_build dist_wheels` on the isolated loopback cluster.

Runs on the host, from the checkout (ci_build starts the sandbox itself):

    python3 -m tests.bazel.rbe_wheels_driver WORKDIR [--runner=isolated|hosttools] [CI_BUILD_ARGS...]

Starts tests.infra.rbe.cluster (isolated runner unless --runner says otherwise) in the sandbox, makes copies of
this checkout at different paths under WORKDIR (each its own Bazel output base), points
their user.bazelrc at the cluster, and runs `ci_build ... dist_wheels` in them:

    remote    copy a/: --rbe=remote on a cold cache
    cached    copy b-second-path/: --rbe=remote again, a clean build from another checkout
    dynamic   copy b-second-path/ after `bazel clean`: --rbe=dynamic
    local     copy c/: no remote execution, the reference wheels

It stops at the first phase that fails. Prints one JSON object: per phase its exit
status, Bazel's process summaries, the first error, the wheels' sha256 and, per wheel,
the build-machine paths (copies, output bases, the cluster's staging) found in its
files. CI_BUILD_ARGS are added to every ci_build (e.g. --host-toolchain=sandbox).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from tests.infra.bazel_processes import process_counts
from tests.infra.copy_workspace import copy_workspace
from tools.digest import sha256_of
from tools.modules import SANDBOX, module_environment

CHECKOUT = Path(__file__).resolve().parent.parent.parent
# One interpreter (the sandbox's own): a second plugin wheel would double the JAX
# module compiles and prove nothing more.
CI_BUILD_ARGS = ("--sources=examples", "dist_wheels", "--allow-stand-ins", "--python-versions=3.14")
CLUSTER_START_TIMEOUT = 600  # BuildGrid's venv may be installed first (about 25 s)
CI_BUILD_TIMEOUT = 1800
# Bazel's output bases (the sandbox's Bazel output user root) and the cluster's state folders.
OUTPUT_ROOT = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jax-rocm-build" / "bazel"
CLUSTER_STATE_PREFIX = "/tmp/jax-rocm-rbe-"


def log(msg: str) -> None:
    print(f"rbe_wheels_driver: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Reading what a build said and made
# --------------------------------------------------------------------------


def summaries(output: str) -> list[str]:
    """Bazel's "N processes: ..." lines, in order (ci_build runs Bazel twice: build, then tag)."""
    return re.findall(r"^INFO: (\d+ process.*)$", output, re.MULTILINE)


def hit_ratio(summary: str) -> float | None:
    """Remote cache hits over the spawns that were not internal."""
    c = process_counts(summary)
    executed = sum(n for runner, n in c.items() if runner != "internal")
    return c.get("remote cache hit", 0) / executed if executed else None


def first_error(output: str, lines: int = 4) -> str:
    """The first `ERROR:` line of Bazel's output and what follows it (the action's own message)."""
    text = output.splitlines()
    for i, line in enumerate(text):
        if line.startswith("ERROR:"):
            return "\n".join(text[i:i + lines])
    return ""


def missing_paths(output: str) -> list[str]:
    """Absolute paths an action looked for and did not find (`sh`'s and `cat`'s wording), first
    seen first: on the isolated worker, the undeclared ones."""
    found = re.findall(r"(/[^\s:'\"]+): (?:not found|No such file or directory)", output)
    return list(dict.fromkeys(found))


def leaked_paths(wheel: Path, markers: Sequence[str]) -> dict[str, list[str]]:
    """{member: [marker, ...]} for each file of the wheel holding a build-machine path
    (bytes anywhere in it: `strings` and readelf's .comment are subsets of this)."""
    found = {}
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            data = z.read(name)
            hits = [m for m in markers if m.encode() in data]
            if hits:
                found[name] = hits
    return found


def build_info(wheel: Path) -> dict:
    with zipfile.ZipFile(wheel) as z:
        return json.loads(z.read(next(n for n in z.namelist() if n.endswith("/build_info.json"))))


# --------------------------------------------------------------------------
# Running it
# --------------------------------------------------------------------------


@contextlib.contextmanager
def cluster(workdir: Path, runner: str) -> Iterator[dict[str, str]]:
    """The loopback cluster, up in the sandbox while the block runs."""
    ready = workdir / "cluster.json"
    with open(workdir / "cluster.log", "w") as out:
        proc = subprocess.Popen([*SANDBOX, "run", "--", "python3", "-m", "tests.infra.rbe.cluster",
                                 f"--runner={runner}", "up", f"--ready-file={ready}"],
                                cwd=CHECKOUT, env=module_environment(), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + CLUSTER_START_TIMEOUT
        while not ready.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"rbe_wheels_driver: the cluster did not start; its log:\n"
                                 f"{(workdir / 'cluster.log').read_text()[-5000:]}")
            time.sleep(0.5)
        env = json.loads(ready.read_text())
        log(f"cluster ready at {env['JAX_ROCM_RBE_EXECUTOR']}")
        yield env
    finally:
        # sandbox passes SIGTERM on; the cluster stops itself, and the sandbox's PID
        # namespace takes whatever is left with it.
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def make_copy(path: Path, env: dict[str, str]) -> Path:
    copy_workspace(path, CHECKOUT)
    # `build:` lines, not `common:`, which rocm.bazelrc's placeholder executor would override.
    (path / "user.bazelrc").write_text(f"build:rocm_rbe --remote_executor={env['JAX_ROCM_RBE_EXECUTOR']}\n"
                                       f"build:rocm_rbe --remote_instance_name={env['JAX_ROCM_RBE_INSTANCE']}\n")
    return path


def in_sandbox(copy: Path, *argv: str) -> None:
    subprocess.run([*SANDBOX, "run", "--", *argv], cwd=copy, env=module_environment(), capture_output=True,
                   timeout=CI_BUILD_TIMEOUT)


def ci_build(copy: Path, rbe: str, extra: Sequence[str], markers: Sequence[str]) -> dict:
    dist = copy / "dist"
    argv = [sys.executable, str(copy / "build" / "ci_build"), *CI_BUILD_ARGS, f"--rbe={rbe}", f"--output-dir={dist}", *extra]
    log(f"{copy}: {' '.join(argv[1:])}")
    t0 = time.monotonic()
    # No shared action cache (sandbox gives one to every run unless this says off): its
    # hits would show as "disk cache hit" instead of the remote spawns and remote cache hits checked
    # here, and the local reference wheels could come from the remote phases' results.
    env = dict(os.environ, JAX_ROCM_ACTION_CACHE="off")
    result = subprocess.run(argv, cwd=copy, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=CI_BUILD_TIMEOUT, env=env)
    output = result.stdout + result.stderr
    (copy.parent / f"ci_build-{rbe}.log").write_text(output)
    wheels = sorted(dist.glob("*.whl")) if result.returncode == 0 else []
    return {
        "returncode": result.returncode,
        "seconds": round(time.monotonic() - t0, 1),
        "summaries": summaries(output),
        "first_error": first_error(output),
        "missing_paths": missing_paths(output)[:10],
        "tail": output.splitlines()[-8:],
        "wheels": {w.name: sha256_of(w) for w in wheels},
        "leaks": {w.name: leaked_paths(w, markers) for w in wheels},
        "toolkits": {w.name: {k: build_info(w).get(k) for k in ("amdgpu_targets", "rocm_layout", "rocm_therock_family")}
                     for w in wheels},
    }


def main(argv: Sequence[str]) -> int:
    if not argv:
        sys.exit(__doc__)
    runner = next((a.split("=", 1)[1] for a in argv[1:] if a.startswith("--runner=")), "isolated")
    workdir, extra = Path(argv[0]).resolve(), [a for a in argv[1:] if not a.startswith("--runner=")]
    workdir.mkdir(parents=True, exist_ok=True)
    paths = {"a": workdir / "a" / "checkout", "b": workdir / "b-second-path" / "checkout", "c": workdir / "c" / "checkout"}
    markers = [*(str(p) for p in paths.values()), str(OUTPUT_ROOT), "/execroot/", CLUSTER_STATE_PREFIX]
    results: dict = {"runner": runner, "markers": markers}
    copies: list[Path] = []
    try:
        with cluster(workdir, runner) as env:
            copies = [make_copy(p, env) for p in paths.values()]
            phases = (("remote", paths["a"], "remote"), ("cached", paths["b"], "remote"),
                      ("dynamic", paths["b"], "dynamic"), ("local", paths["c"], "off"))
            for name, copy, rbe in phases:
                if name == "dynamic":
                    in_sandbox(copy, "bazel", "clean")
                results[name] = ci_build(copy, rbe, extra, markers)
                (workdir / "results.json").write_text(json.dumps(results))  # what a timeout would lose
                if results[name]["returncode"] != 0:
                    results["stopped_after"] = name
                    break
    finally:
        for copy in copies:
            in_sandbox(copy, "bazel", "clean", "--expunge")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
