"""The subcommands that build no wheel: doctor (the sandbox and Bazel work offline) and
native (the PJRT plugin and the FFI modules)."""

from __future__ import annotations

import argparse
import shlex
import sys
import time

from . import sandbox, sources, toolkit
from .paths import SANDBOX

NATIVE_TARGETS = ["//:xla_rocm_plugin", "//jaxlib/rocm:rocm_extensions"]
NATIVE_TESTS = ["//tests/native:all"]


def cmd_doctor(args: argparse.Namespace) -> int:
    """Provision the sandbox and show what it found; fail if Bazel cannot analyse this workspace offline."""
    t0 = time.monotonic()
    steps = [
        SANDBOX + ["ensure", f"--rocm={args.rocm}"],
        SANDBOX + ["info"],
        SANDBOX + ["run", "--", "bazel", "build", "--nobuild", "//..."],
    ]
    for cmd in steps:
        rc = sandbox.run(cmd, args.dry_run)
        if rc != 0:
            print(f"ci_build doctor: failed (exit {rc}) at: {shlex.join(cmd)}", file=sys.stderr)
            return rc
    if not args.dry_run:
        print(f"ci_build doctor: OK in {time.monotonic() - t0:.1f} s: Bazel resolves and analyses this workspace offline", file=sys.stderr)
    return 0


def cmd_native(args: argparse.Namespace) -> int:
    """Build the native artifacts: XLA's ROCm PJRT plugin (//:xla_rocm_plugin) and JAX's ROCm FFI modules."""
    toolkit.check_inputs(args)
    rc = sources.check_sources(args)
    if rc:
        return rc
    toolkit.announce_rocm_source(args)
    return sandbox.provision("full", args.dry_run) or sandbox.run_steps("native", [
        sandbox.sandbox_run(args) + ["bazel", "build", *sandbox.bazel_flags(args), *NATIVE_TARGETS],
    ], args.dry_run)
