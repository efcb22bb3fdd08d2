"""Full mode: upstream's module graph in full/ (XLA and rules_ml_toolchain as Bazel modules,
this project's ROCm injected), run by Debian's Bazel in the sandbox."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from . import inputs, sandbox, toolkit
from .paths import CACHE, CHECKOUT
from .pythons import Interpreter

# The root module of upstream's graph (full/MODULE.bazel), and how Debian's Bazel in the
# sandbox runs it: without the sandbox's kernels-mode stand-in modules (full/debian.bazelrc).
FULL = CHECKOUT / "full"
FULL_BAZEL = ["/usr/bin/bazel", "--nosystem_rc", "--bazelrc=debian.bazelrc", f"--output_user_root={CACHE / 'bazel'}"]
# What each module of the full graph must call local_config_rocm (and rules_ml_toolchain,
# config_rocm_hipcc): this project's repository.
OUR_ROCM = "jax_rocm_build~~rocm~local_config_rocm"


def in_this_module(flags: list[str]) -> list[str]:
    """Kernels-mode flags of this project's settings (--//rocm:..., --//wheel:...) as full/'s root
    module names them: this project is the module jax_rocm_build there."""
    return [re.sub(r"^--(no)?//", r"--\1@jax_rocm_build//", f) for f in flags]


def one_python(versions: list[str]) -> str:
    return (f"full mode builds for one Python per run (XLA's hermetic Python), not {', '.join(versions) or 'none'}; "
            "pass --python-versions=3.X")


def check_inputs(args: argparse.Namespace) -> None:
    """--mode=full with several --python-versions fails before anything runs (InputError)."""
    versions = args.python_versions.split(",") if args.python_versions else []
    if args.mode == "full" and len(versions) > 1:
        raise inputs.InputError(f"--mode=full and --python-versions={args.python_versions}: {one_python(versions)}")


def full_python(interpreters: list[Interpreter]) -> list[str]:
    """Full mode builds JAX's modules for one Python, XLA's hermetic one, as JAX's build does:
    the flags that make it and @local_config_python the same (full/jaxlib/rocm/defs.bzl checks)."""
    if len(interpreters) != 1:
        raise SystemExit(f"ci_build: {one_python([i.version for i in interpreters])}")
    python = interpreters[0]
    return [f"--repo_env=HERMETIC_PYTHON_VERSION={python.version}", f"--repo_env=JAX_ROCM_PYTHON={python.path}"]


def full_flags(args: argparse.Namespace) -> list[str]:
    """Flags of a full-mode command: the XLA checkout as the xla module, where modules resolve from."""
    flags = in_this_module(toolkit.rocm_flags(args))
    if args.xla_source_dir:
        xla = Path(args.xla_source_dir).expanduser().resolve()
        flags += [f"--override_module=xla={xla}", f"--override_repository=xla={xla}"]
    if args.registry:
        flags.append(f"--registry={args.registry if '://' in args.registry else Path(args.registry).resolve().as_uri()}")
    if args.distdir:
        flags.append(f"--distdir={Path(args.distdir).resolve()}")
    if args.jax_source_dir:
        flags.append(f"--repo_env=JAX_SOURCE_DIR={Path(args.jax_source_dir).expanduser().resolve()}")
    return flags


def full_binds(args: argparse.Namespace) -> list[str]:
    paths = [p for p in (args.xla_source_dir, args.registry if args.registry and "://" not in args.registry else None,
                         args.distdir, args.jax_source_dir) if p]
    return [str(Path(p).expanduser().resolve()) for p in paths]


def full_bazel(args: argparse.Namespace, binds: list[str] = ()) -> list[str]:
    """Debian's Bazel in the sandbox, in full/ (full/debian.bazelrc), with the full-mode inputs mounted."""
    return sandbox.sandbox_run(args, [*full_binds(args), *binds]) + ["sh", "-c", 'cd "$0" && exec "$@"', str(FULL), *FULL_BAZEL]
