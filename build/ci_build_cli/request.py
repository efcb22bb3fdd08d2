"""The Request: what one command line asks of ci_build, made once (cli.parse_args) and read by
every step. It holds every option's value (options.OPTIONS), checked, and what ci_build decides
from them and the environment: host mode, the mode, preflight's XLA, the local source trees and
the ROCm toolkit. Frozen: nothing changes it; a step that needs another value makes another
Request (dataclasses.replace: dist_wheels' kind of wheel, decided once its inputs are checked)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class RocmSource:
    """Which toolkit a build uses, decided once (toolkit.rocm_source): the variables the repository rule
    is given (ROCM_PATH, THEROCK_URL, THEROCK_SHA256, XLA's names; an empty value clears one), in
    order, the host folders to mount at their own paths, and one line for the user (None: nothing
    to say). They become Bazel flags at one edge (flags, for rocm_flags)."""
    variables: tuple[tuple[str, str], ...] = ()
    binds: tuple[str, ...] = ()
    note: str | None = None
    xla_name: str | None = None  # XLA's name (of the environment) that decides, when one does

    @property
    def repo_env(self) -> dict[str, str]:
        return dict(self.variables)

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(f"--repo_env={name}={value}" for name, value in self.variables)


@dataclasses.dataclass(frozen=True)
class Request:
    command: str  # doctor, dist_wheels, native or preflight
    # Every option, by its dest (options.OPTIONS), as parsed and checked (options.CHECKED_VALUES).
    dry_run: bool
    host: bool  # --host, else JAX_ROCM_HOST=1
    sources: str
    mode: str | None  # --mode, else what the sources decide (sources.decide_mode); None for doctor, which builds nothing
    registry: str | None
    distdir: str | None
    bazelrc: str | None
    names_only: bool
    xla_source_dir: str | None  # for preflight also $JAXCI_XLA_GIT_DIR, or the clone to make (clone_xla)
    jax_source_dir: str | None
    amdgpu_targets: tuple[str, ...] | None  # split and checked once (inputs.amdgpu_targets)
    rocm_path: str | None
    therock_path: str | None
    therock_sha256: str | None
    rocm_version: str | None
    rocm: str
    python_versions: str | None
    host_toolchain: str
    compiler: str
    wheel_version: str | None
    wheel_kind: str | None  # --wheel-kind; for dist_wheels, once checked, its choice (dist_wheels.choose_wheel_kind)
    wheel_date: str | None
    wheel_commit: str | None
    wheel_post_release: int
    no_rocm_version_extra: bool
    manylinux: str | None
    rbe: str
    allow_stand_ins: bool
    output_dir: str | None
    # Decided from the options and the environment.
    clone_xla: bool  # preflight first clones XLA's main branch into xla_source_dir (JAXCI_CLONE_MAIN_XLA=1)
    source_dirs: Mapping[str, Path]  # repository -> the local tree overriding its pin (sources.source_dirs), read-only
    rocm_source: RocmSource  # the toolkit (toolkit.rocm_source); the sandbox's own for the sandbox's doctor
    # What the checks decided that the user should hear, printed once every check has passed
    # (cli.main): a wrong input is answered in its one line, with no note before it.
    notes: tuple[str, ...] = ()
    # How the user gave what may come from a flag or from the environment, in their words, for
    # the messages about it: "host" (--host, or JAX_ROCM_HOST=1), "xla" and "jax" (a source-dir
    # flag, or preflight's JAXCI_XLA_GIT_DIR).
    given: Mapping[str, str] = dataclasses.field(default_factory=dict)
