"""What tools/bazel, the Bazel launcher hook, runs: bazelisk (and the sandbox's bazel) run that
file instead of Bazel itself, and it runs this module.

It makes `--override_repository=xla=DIR` mean what users type. @xla, @nanobind,
@xla_ffi_headers and @com_google_absl come from this module's `sources` extension, and
Bazel 7 silently ignores an override by their apparent name (only the canonical name,
`_main~sources~xla`, takes effect; `+sources+xla` with --incompatible_use_plus_in_repo_names,
which Bazel 8 made the default and which rocm.bazelrc's --config=bazel9 sets). Here the
apparent spelling (also `@xla`, `@@xla`) becomes the canonical one (on Bazel 7 both of its
spellings: an override of a name no repository has is ignored, and which one this build uses
is decided by flags in rc files), relative paths become absolute, and a path that is not a
directory fails at once.

@jax is JAX's source tree under this project's own BUILD file (JAX's BUILD files would
load XLA's whole build graph), so a plain override, which would use the checkout's
BUILD files, is not what a user means: `--override_repository=jax=PATH` becomes
`--repo_env=JAX_SOURCE_DIR=PATH` (a checkout or an archive of one), which the
repository rule lays out. An XLA override also sets `--repo_env=XLA_SOURCE_DIR=DIR`, for
@xla_python_headers. Everything else passes through unchanged to $BAZEL_REAL.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from third_party.gpus import extract_archive  # one definition of what counts as an archive of a source tree
from tools.modules import restore_caller_pythonpath

EXTENSION = "sources"
# The repositories of //third_party:extensions.bzl `sources` (its PINS).
SOURCE_REPOSITORIES = ("xla", "jax", "nanobind", "xla_ffi_headers", "com_google_absl")
FLAG = "--override_repository"
# Source trees laid out by a repository rule of this project, named by --repo_env.
LAID_OUT = {"jax": "JAX_SOURCE_DIR"}
# Overridden trees that other repository rules also read files from, named by --repo_env:
# @xla_python_headers takes XLA's numpy.h and safe_static_init.h from an XLA tree.
ALSO_NAMED = {"xla": "XLA_SOURCE_DIR"}


class OverrideError(Exception):
    pass


def canonical_names(repository: str, bazel_major: int) -> list[str]:
    plus = f"+{EXTENSION}+{repository}"
    return [f"_main~{EXTENSION}~{repository}", plus] if bazel_major < 8 else [plus]


def _translate_value(value: str, bazel_major: int, cwd: Path) -> list[str]:
    """The flags one override value becomes."""
    name, sep, path = value.partition("=")
    if not sep or not name or not path:
        raise OverrideError(f"{FLAG}={value}: expected NAME=PATH, e.g. {FLAG}=xla=/src/xla")
    bare = name.lstrip("@")
    if bare not in SOURCE_REPOSITORIES:
        return [f"{FLAG}={value}"]  # some other repository, or already canonical: Bazel's business
    resolved = (cwd / os.path.expanduser(path)).resolve()
    if bare in LAID_OUT:
        if not (resolved.is_dir() or extract_archive.is_archive(resolved)):
            raise OverrideError(f"{FLAG}={value}: {resolved} is neither a directory nor an archive "
                                f"(give a {bare} checkout or an archive of one)")
        return [f"--repo_env={LAID_OUT[bare]}={resolved}"]
    if not resolved.is_dir():
        raise OverrideError(f"{FLAG}={value}: {resolved} is not a directory (give the root of a {bare} source tree)")
    flags = [f"{FLAG}={canonical}={resolved}" for canonical in canonical_names(bare, bazel_major)]
    if bare in ALSO_NAMED:  # repository rules that take files from the same tree
        flags.append(f"--repo_env={ALSO_NAMED[bare]}={resolved}")
    return flags


# Commands that take build settings: they also get the record of the overrides (below).
BUILD_COMMANDS = frozenset({"build", "test", "run", "coverage", "cquery", "aquery", "print_action"})
# What build_info.json records of replaced pinned sources (wheel/BUILD.bazel); ci_build sets it.
RECORD = "--@jax_rocm_build//wheel:source_overrides"


def translate(args: list[str], bazel_major: int, cwd: Path) -> list[str]:
    """The same command line with every override of a source repository spelled canonically,
    and, for a build, recorded in the wheels' build_info.json as ci_build records it (unless the
    command line sets the record itself): the same wheels whichever way the overrides are typed."""
    out, rest, overridden, i = [], [], [], 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest = args[i:]
            break
        value = arg[len(FLAG) + 1:] if arg.startswith(FLAG + "=") else args[i + 1] if arg == FLAG and i + 1 < len(args) else None
        if value is None:
            out.append(arg)
        else:
            out += _translate_value(value, bazel_major, cwd)
            overridden.append(value.partition("=")[0].lstrip("@"))
            i += arg == FLAG
        i += 1
    command = next((a for a in out if not a.startswith("-")), None)
    named = sorted({n for n in overridden if n in ("jax", "xla")})
    if named and command in BUILD_COMMANDS and not any(a.split("=")[0].endswith("//wheel:source_overrides") for a in out):
        out.append(f"{RECORD}={','.join(named)}")
    return out + rest


def bazel_major_version(version_output: str) -> int:
    match = re.search(r"bazel (\d+)\.", version_output)
    if not match:
        raise OverrideError(f"cannot tell the Bazel version from {version_output.strip()!r}")
    return int(match.group(1))


def real_bazel() -> str:
    real = os.environ.get("BAZEL_REAL")
    if real:
        return real
    me = (Path(__file__).resolve().parent / "bazel").resolve()  # the hook, tools/bazel
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = shutil.which("bazel", path=directory)
        if candidate and Path(candidate).resolve() != me:
            return candidate
    raise OverrideError("no Bazel found: set BAZEL_REAL or put bazel (or bazelisk) on PATH")


def main(argv: list[str]) -> int:
    try:
        real = real_bazel()
        args = argv
        if any(a == FLAG or a.startswith(FLAG + "=") for a in argv):
            version = subprocess.run([real, "--version"], capture_output=True, text=True).stdout
            args = translate(argv, bazel_major_version(version), Path.cwd())
    except OverrideError as exc:
        print(f"tools/bazel: {exc}", file=sys.stderr)
        return 2
    restore_caller_pythonpath()  # Bazel, its repository rules and actions get the caller's
    os.execv(real, [real, *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
