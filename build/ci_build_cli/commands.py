"""The subcommands that build no wheel: doctor (the sandbox and Bazel work offline; in host
mode, this machine's Bazel, ROCm and Pythons) and native (the PJRT plugin and the FFI modules)."""

from __future__ import annotations

import shlex
import sys
import time

from third_party.gpus import find_rocm_config as finder

from . import full, pythons, sandbox, sources, toolkit
from .paths import SANDBOX, SANDBOX_PROFILE
from .request import Request


def check_doctor(request: Request) -> Request:
    """doctor's inputs (before the lock, cli.main): in host mode, the toolkit it reports on."""
    return toolkit.check_inputs(request) if request.host else request


def check_native(request: Request) -> Request:
    """native's inputs (before the lock, cli.main): the toolkit, the source trees, full mode's
    (last but the pins: the registry's may ask the network), the pins."""
    request = toolkit.check_inputs(request)
    sources.check_local_sources(request)
    full.check_inputs(request)
    sources.check_pins_reachable(request)
    return request

NATIVE_TARGETS = ["//:xla_rocm_plugin", "//jaxlib/rocm:rocm_extensions"]
NATIVE_TESTS = ["//tests/native:all"]


def cmd_doctor(request: Request) -> int:
    """Provision the sandbox and show what it found; fail if Bazel cannot analyse this workspace offline.
    In host mode (--host): show this machine's Bazel, ROCm and Pythons, and fail if its Bazel cannot
    analyse this workspace."""
    if request.host:
        return host_doctor(request)
    t0 = time.monotonic()
    steps = [
        SANDBOX + ["ensure", f"--rocm={request.rocm}"],
        SANDBOX + ["info"],
        SANDBOX + ["run", "--", "bazel", "build", "--nobuild", "//..."],
    ]
    for cmd in steps:
        rc = sandbox.run(cmd, request.dry_run)
        if rc != 0:
            print(f"ci_build doctor: failed (exit {rc}) at: {shlex.join(cmd)}", file=sys.stderr)
            return rc
    if not request.dry_run:
        print(f"ci_build doctor: OK in {time.monotonic() - t0:.1f} s: Bazel resolves and analyses this workspace offline", file=sys.stderr)
    return 0


def host_doctor(request: Request) -> int:
    """Host mode's doctor: the user's Bazel (its version), the toolkit the finder finds here,
    the Pythons wheels would be built for, then an analysis of the workspace with the build's flags."""
    toolkit.announce_rocm_source(request)
    source = request.rocm_source
    path = source.repo_env.get("ROCM_PATH")
    bazel = sandbox.bazel(request)
    steps = [bazel + ["--version"]]
    if source.xla_name and not path:
        # A tarball or a merge the repository rule makes: nothing on disk for the finder yet.
        print(f"ci_build doctor: the toolkit comes from {source.xla_name}={source.repo_env.get(source.xla_name, '')}; "
              "the analysis below fetches it (what it is: rocm_config.json in @local_config_rocm)", file=sys.stderr)
    else:
        steps.append([sys.executable, finder.__file__, "--format=text", *(["--rocm-path", path] if path else [])])
    rc = sandbox.provision(request, SANDBOX_PROFILE) or sandbox.run_steps("doctor", steps, request.dry_run)
    if rc:
        return rc
    found = pythons.find_host_interpreters()
    print("ci_build doctor: Pythons with headers on PATH: " +
          (", ".join(f"{i.version} ({i.path})" for i in found) or "none"), file=sys.stderr)
    for line in pythons.left_out(found, sources.jax_pythons(request.source_dirs.get("jax")).pythons, host=True):
        print(f"ci_build doctor: {line}", file=sys.stderr)
    return sandbox.run_steps("doctor", [bazel + ["build", "--nobuild", *sandbox.bazel_flags(request), "//..."]], request.dry_run)


def cmd_native(request: Request) -> int:
    """Build the native artifacts: XLA's ROCm PJRT plugin (//:xla_rocm_plugin) and JAX's ROCm FFI modules."""
    toolkit.announce_rocm_source(request)
    if request.mode == "full":
        return sandbox.provision(request, SANDBOX_PROFILE) or full.prepare(request) or full.build_native(request, "native")
    return sandbox.provision(request, SANDBOX_PROFILE) or sandbox.run_steps("native", [
        sandbox.bazel(request) + ["build", *sandbox.bazel_flags(request), *NATIVE_TARGETS],
    ], request.dry_run)
