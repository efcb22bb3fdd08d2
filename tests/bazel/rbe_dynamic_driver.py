"""Driver of tests/bazel/test_rbe_dynamic.py: --config=rocm_rbe_dynamic on the loopback cluster.

    python3 -m sandbox run -- python3 -m tests.bazel.rbe_dynamic_driver [COPY]

(from the checkout: it runs as a module of it, inside the sandbox root.)

COPY: a copy of the checkout made beforehand (tests/infra/copy_workspace.py, on the host),
used and removed; without it the driver copies the checkout itself, which needs git
inside the sandbox to see the repository (in a git worktree it does not: the worktree's
.git points into the main checkout, which the sandbox does not mount).

Unlike rbe_driver.py it starts the cluster itself
(tests/infra/rbe/cluster.py's Cluster), because one phase stops it in the middle of a build.
Works in a copy of the checkout with one package of its own added (GATE_PACKAGE,
below) and prints one JSON object of results on stdout; Bazel's output goes to stderr.

    reference   --config=rocm, no cluster: the libraries, the tests, the gated library
    race        --config=rocm_rbe_dynamic --config=ci_single_gpu: the HIP library and
                tests; HipCompile may only run remotely, tests only locally (below)
    stop        --config=rocm_rbe_dynamic: a build that stops at a gate; the cluster is
                stopped while the gate holds, then the rest of the build runs
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bazel.rbe_driver import BAZEL_TIMEOUT, bazel, compare, disposable_workspace, processes_line, read_execution_log
from tests.infra.rbe.cluster import Cluster
from tools.digest import sha256_of

LIBRARY = "//tests/rocm/hip:libhip_kernels.so"
LIBRARY_OUTPUT = "bazel-bin/tests/rocm/hip/libhip_kernels.so"
TESTS = ["//tests/rocm/hip:host_calls_kernel_test", "//tests/rocm/hip:load_kernels_test",
         "//tests/rocm/gpu:slot_probe_test"]
PROBE_SHARDS = 8
SIMULATED_GPUS = 2
AMDGPU_TARGETS = "--//rocm:amdgpu_targets=gfx942"

# The driver's targets are appended to the HIP test package of its copy (they use its
# sources, which other packages may not see).
GATE_PACKAGE = "tests/rocm/hip"
GATED = f"//{GATE_PACKAGE}:libgated_kernels.so"
GATED_OUTPUT = f"bazel-bin/{GATE_PACKAGE}/libgated_kernels.so"
AFTER = f"//{GATE_PACKAGE}:after_gate"
# Local spawn runners Bazel 7.7 names (processwrapper-sandbox where linux-sandbox cannot
# run, as inside this chroot); remote ones.
LOCAL_RUNNERS = {"linux-sandbox", "processwrapper-sandbox", "sandboxed", "local", "standalone"}
REMOTE_RUNNERS = {"remote", "remote cache hit"}
# What the race phase makes certain (see test_rbe_dynamic.py): HIP compiles cannot run
# here, tests cannot run there. Every other action races and either side may win.
FORCE_SIDES = "--modify_execution_info=Hip(Device)?Compile=+no-local,TestRunner=+no-remote-exec"


def gate_build_file(gate_dir: Path) -> str:
    """The driver's targets: remote-only steps, a gate, and a HIP library built after it.

    remote_origin  tagged no-local: runs remotely only
    remote_step    tagged no-local, reads remote_origin's output (remotely: with
                   --remote_download_toplevel that output would then exist only there)
    gate           tagged no-remote-exec, after remote_step: runs here, says it started,
                   waits for `go`. While it waits the cluster is stopped.
    gated/*.hip    copies made after the gate, so the HIP compiles, the archive and the
                   link of libgated_kernels.so all run after the cluster is gone
    after_gate     after the gate, reads remote_origin's output, which this machine has
                   only if it was downloaded before the stop (--remote_download_all)
    """
    return f'''
# Appended by tests/bazel/rbe_dynamic_driver.py to its private copy of the checkout.
genrule(
    name = "remote_origin",
    srcs = [":libhip_kernels.so"],
    outs = ["remote_origin.txt"],
    cmd = "wc -c < $< > $@",
    tags = ["no-local"],
)

genrule(
    name = "remote_step",
    srcs = [":remote_origin.txt"],
    outs = ["remote_step.txt"],
    cmd = "cat $< $< > $@",
    tags = ["no-local"],
)

genrule(
    name = "gate",
    srcs = [":remote_step.txt"],
    outs = ["gate.txt"],
    cmd = "touch {gate_dir}/started && while [ ! -e {gate_dir}/go ]; do sleep 0.2; done && echo open > $@",
    tags = ["no-remote-exec", "no-cache"],
)

[genrule(
    name = "gated_" + f,
    srcs = [":gate.txt", f + ".hip"],
    outs = ["gated/" + f + ".hip"],
    cmd = "cp $(location " + f + ".hip) $@",
) for f in ("saxpy", "scale")]

rocm_library(
    name = "gated_kernels",
    srcs = ["gated/saxpy.hip", "gated/scale.hip"],
    hdrs = ["kernels.h"],
    alwayslink = True,
)

cc_binary(
    name = "libgated_kernels.so",
    linkshared = True,
    linkopts = ["-Wl,--no-undefined"],
    deps = [":gated_kernels"],
)

genrule(
    name = "after_gate",
    srcs = [":gate.txt", ":remote_origin.txt"],
    outs = ["after_gate.txt"],
    cmd = "cat $(location :remote_origin.txt) > $@",
)
'''


def spawns_by_output(spawns: list[dict]) -> list[dict]:
    """Each spawn as {mnemonic, runner, outputs} (execution log paths, for the test's messages)."""
    return [{"mnemonic": s.get("mnemonic", "?"), "runner": s.get("runner", "?"),
             "outputs": [o.get("path", "") for o in s.get("actualOutputs", [])]} for s in spawns]


def summary(stderr: str, log: Path) -> dict:
    return {"processes": processes_line(stderr), "spawns": spawns_by_output(read_execution_log(log))}


def wait_for(path: Path, bazel_proc: subprocess.Popen, what: str) -> None:
    """Waits until `path` exists; fails if Bazel ends first or nothing happens for BAZEL_TIMEOUT s."""
    deadline = time.monotonic() + BAZEL_TIMEOUT
    while not path.exists():
        if bazel_proc.poll() is not None:
            raise SystemExit(f"rbe_dynamic_driver: Bazel exited {bazel_proc.returncode} before {what} "
                             f"({path} never appeared; its output is above)")
        if time.monotonic() > deadline:
            raise SystemExit(f"rbe_dynamic_driver: {what} did not happen within {BAZEL_TIMEOUT} s ({path} never appeared)")
        time.sleep(0.2)


def probe_records(probe_dir: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(probe_dir.glob("*.json"))]


def main(argv: list[str]) -> int:
    given = Path(argv[0]).resolve() if argv else None
    # Below /var/tmp, which --config=ci_single_gpu makes writable in Bazel's sandbox.
    scratch = Path(tempfile.mkdtemp(prefix="jax-rocm-dyn-", dir="/var/tmp"))
    gate_dir, probe_dir, lock_dir = scratch / "gate", scratch / "probe", scratch / "locks"
    for d in (gate_dir, probe_dir, lock_dir):
        d.mkdir()
    results: dict = {}
    test_env = {**os.environ, "JAX_ROCM_GPU_COUNT": str(SIMULATED_GPUS), "JAX_ROCM_GPU_LOCK_DIR": str(lock_dir)}
    # --disk_cache=: no shared action cache (the sandbox's rc sets one) in any phase: its hits
    # ("disk cache hit") would replace the local and remote spawns and the test runs checked here.
    common = [AMDGPU_TARGETS, "--disk_cache=", f"--sandbox_writable_path={scratch}", "--test_env=JAX_ROCM_SLOT_PROBE_SECONDS=1",
              f"--test_env=JAX_ROCM_SLOT_PROBE_DIR={probe_dir}"]
    try:
        with disposable_workspace("jax-rocm-dyn", results, given) as (workspace, logs):
            with open(workspace / GATE_PACKAGE / "BUILD.bazel", "a") as build_file:
                build_file.write(gate_build_file(gate_dir))

            # Reference: a local build of everything (the gate already open).
            (gate_dir / "go").touch()
            log = logs / "reference.json"
            bazel(workspace, "test", "--config=rocm", "--config=ci_single_gpu", *common, f"--execution_log_json_file={log}",
                  LIBRARY, GATED, *TESTS, env=test_env)
            for name, output in (("reference", LIBRARY_OUTPUT), ("reference_gated", GATED_OUTPUT)):
                shutil.copy(workspace / output, logs / f"{name}.so")
            results["reference"] = {"sha256": sha256_of(logs / "reference.so"), "gated_sha256": sha256_of(logs / "reference_gated.so")}
            for p in [*probe_dir.iterdir(), gate_dir / "started"]:
                p.unlink()
            bazel(workspace, "clean")

            # hosttools: this test is about the race and a vanishing executor, which need an
            # endpoint, not isolation (tests/bazel/test_rbe_isolation.py is about that).
            with Cluster(jobs=os.cpu_count() or 1, runner="hosttools") as cluster:
                remote = ["--config=rocm_rbe_dynamic", f"--remote_executor={cluster.env['JAX_ROCM_RBE_EXECUTOR']}",
                          f"--remote_instance_name={cluster.env['JAX_ROCM_RBE_INSTANCE']}"]

                # Race: the HIP library and the tests, GPU tests under ci_single_gpu's slots.
                log = logs / "race.json"
                stderr = bazel(workspace, "test", *remote, "--config=ci_single_gpu", *common, FORCE_SIDES,
                               f"--execution_log_json_file={log}", LIBRARY, *TESTS, env=test_env)
                shutil.copy(workspace / LIBRARY_OUTPUT, logs / "race.so")
                results["race"] = {**summary(stderr, log), "sha256": sha256_of(logs / "race.so"),
                                   "probes": probe_records(probe_dir)}
                bazel(workspace, "clean")

                # Stop: the cluster goes away while the gate holds the build.
                (gate_dir / "go").unlink()
                log = logs / "stop.json"
                argv = ["bazel", "build", *remote, *common, f"--execution_log_json_file={log}", GATED, AFTER]
                print(f"rbe_dynamic_driver: {' '.join(argv)}", file=sys.stderr, flush=True)
                with open(logs / "stop.stderr", "w+") as err:
                    proc = subprocess.Popen(argv, cwd=workspace, stdout=subprocess.DEVNULL, stderr=err, env=test_env)
                    try:
                        wait_for(gate_dir / "started", proc, "the gate started")
                        print("rbe_dynamic_driver: the gate holds the build; stopping the cluster", file=sys.stderr, flush=True)
                        cluster.stop(failed=False)
                        (gate_dir / "go").touch()
                        rc = proc.wait(timeout=BAZEL_TIMEOUT)
                    finally:
                        if proc.poll() is None:
                            proc.kill()
                            proc.wait()
                    err.seek(0)
                    stderr = err.read()
                sys.stderr.write(stderr)
                results["stop"] = {"returncode": rc, **summary(stderr, log),
                                   "remote_errors": sorted({line.strip()[:300] for line in stderr.splitlines()
                                                            if "UNAVAILABLE" in line or "Connection refused" in line})[:10]}
                if rc == 0:
                    shutil.copy(workspace / GATED_OUTPUT, logs / "stop_gated.so")
                    results["stop"]["gated_sha256"] = sha256_of(logs / "stop_gated.so")
                    results["stop"]["after"] = (workspace / f"bazel-bin/{GATE_PACKAGE}/after_gate.txt").read_text().strip()

            differ = {}
            if results["race"]["sha256"] != results["reference"]["sha256"]:
                differ["race"] = compare(logs / "reference.so", logs / "race.so")
            if results["stop"].get("gated_sha256") not in (None, results["reference"]["gated_sha256"]):
                differ["stop"] = compare(logs / "reference_gated.so", logs / "stop_gated.so")
            if differ:
                results["difference"] = {"kept_in": str(logs), **differ}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
