"""Driver of tests/bazel/test_rbe_isolation.py: genrules that read undeclared paths, on both runners.

Runs inside the sandbox root, from the checkout, as a module:

    python3 -m tests.bazel.rbe_isolation_driver WORKSPACE

WORKSPACE is a private copy of the checkout (made on the host: git inside the sandbox
cannot read a worktree's repository). The driver adds a package of genrules to it,
each `cat`ing one file: the same file declared as an input, and files it does not
declare by absolute path (in the checkout, in Bazel's exec root, in /var/tmp). It
builds them with --config=rocm_rbe and --keep_going on a loopback cluster with the
isolated runner, then with hosttools (after `bazel clean`, each cluster with its own
empty cache), and prints one JSON object: per runner, which targets failed, where each
spawn ran, and what `cat` said.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.bazel.rbe_driver import BAZEL_TIMEOUT, processes_line, read_execution_log
from tests.infra.rbe.cluster import Cluster

PACKAGE = "rbe_isolation_probe"
RUNNERS = ("isolated", "hosttools")


def probe_build_file(undeclared: dict[str, str]) -> str:
    """`declared` reads secret.txt as an input; each undeclared_NAME reads its path unasked."""
    rules = ['genrule(\n    name = "declared",\n    srcs = ["secret.txt"],\n    outs = ["declared.txt"],\n'
             '    cmd = "cat $(location secret.txt) > $@",\n)\n']
    for name, path in undeclared.items():
        rules.append(f'genrule(\n    name = "undeclared_{name}",\n    outs = ["undeclared_{name}.txt"],\n'
                     f'    cmd = "cat {path} > $@",\n)\n')
    return "# Written by tests/bazel/rbe_isolation_driver.py into its private copy of the checkout.\n\n" + "\n".join(rules)


def failed_targets(stderr: str) -> list[str]:
    return sorted(set(re.findall(rf"Executing genrule //{PACKAGE}:(\w+) failed", stderr)))


def cat_errors(stderr: str) -> list[str]:
    return sorted(set(re.findall(r"^cat: .*$", stderr, re.MULTILINE)))


def bazel(workspace: Path, *args: str) -> subprocess.CompletedProcess:
    print(f"rbe_isolation_driver: bazel {' '.join(args)}", file=sys.stderr, flush=True)
    result = subprocess.run(["bazel", *args], cwd=workspace, capture_output=True, text=True, timeout=BAZEL_TIMEOUT)
    sys.stderr.write(result.stderr)
    return result


def build_on(runner: str, workspace: Path, logs: Path) -> dict:
    with Cluster(jobs=os.cpu_count() or 1, runner=runner) as cluster:
        log = logs / f"{runner}.json"
        # --disk_cache=: each runner must run every genrule; a shared action cache hit (the sandbox's
        # rc sets one) from the other runner or an earlier run would stand in for the remote spawn.
        result = bazel(workspace, "build", "--config=rocm_rbe", "--disk_cache=",
                       f"--remote_executor={cluster.env['JAX_ROCM_RBE_EXECUTOR']}",
                       f"--remote_instance_name={cluster.env['JAX_ROCM_RBE_INSTANCE']}", "--keep_going",
                       f"--execution_log_json_file={log}", f"//{PACKAGE}:all")
    spawns = read_execution_log(log) if log.exists() else []
    return {
        "returncode": result.returncode,
        "processes": processes_line(result.stderr),
        "failed": failed_targets(result.stderr),
        "cat_errors": cat_errors(result.stderr),
        "spawn_runners": sorted({s.get("runner", "?") for s in spawns}),
        # What each target wrote (a failed genrule may leave an empty file behind).
        "outputs": {p.stem: p.read_text() for p in sorted((workspace / "bazel-bin" / PACKAGE).glob("*.txt"))},
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.exit(__doc__)
    workspace = Path(argv[0]).resolve()
    logs = workspace / ".rbe-isolation-logs"
    logs.mkdir(exist_ok=True)
    package = workspace / PACKAGE
    package.mkdir(exist_ok=True)
    (package / "secret.txt").write_text("declared input\n")
    output_base = bazel(workspace, "info", "output_base").stdout.strip()
    fd, var_tmp = tempfile.mkstemp(prefix="jax-rocm-rbe-isolation-", suffix=".txt", dir="/var/tmp")
    os.write(fd, b"undeclared, in /var/tmp\n")
    os.close(fd)
    undeclared = {
        "checkout": str(package / "secret.txt"),
        # The exec root links each top-level folder of the workspace (processwrapper-sandbox
        # and hosttools both see it): the path a toolchain wrapper baked in would use.
        "exec_root": f"{output_base}/execroot/_main/{PACKAGE}/secret.txt",
        "var_tmp": var_tmp,
    }
    (package / "BUILD.bazel").write_text(probe_build_file(undeclared))
    results: dict = {"undeclared": undeclared}
    try:
        for runner in RUNNERS:
            bazel(workspace, "clean")
            results[runner] = build_on(runner, workspace, logs)
    finally:
        os.unlink(var_tmp)
        # The copy is thrown away: so is its output base.
        subprocess.run(["bazel", "clean", "--expunge"], cwd=workspace, capture_output=True, timeout=BAZEL_TIMEOUT)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
