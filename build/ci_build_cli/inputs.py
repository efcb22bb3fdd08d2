"""ci_build's inputs, checked before anything is built: each check is one line naming the input and the fix.

Everything here is a pure function of the flag values and the files they name; ci_build
calls them before the sandbox starts, so that a typo costs a second, not a build.
"""

from __future__ import annotations

import datetime
import difflib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from sandbox.cache import nearest_existing
from third_party.gpus import extract_archive, find_rocm_config as finder


class InputError(Exception):
    """A user input that cannot work; the message says which and what to do."""


# A ROCm release as toolkits and TheRock name them: 7.2.4, 7.2, 7.10.0a20251120, 7.13.0rc1.
_ROCM_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)?(?:[a-z]+\d*)?$")
_PYTHON = re.compile(r"^3\.\d{1,2}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# JAX's release numbers, in PEP 440's normal form (no leading zeros): what wheel_builder.py's
# Version takes as the base of every kind of wheel version.
_RELEASE = re.compile(r"^(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)$")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
WHEEL_KINDS = ("release", "nightly", "dev")


def _items(flag: str, value: str) -> list[str]:
    """A comma-separated flag value: no empty list, no empty item, no repeat."""
    items = [item.strip() for item in value.split(",")]
    if not any(items):
        raise InputError(f"{flag}= is empty: name at least one, or leave the flag out for the default")
    if "" in items:
        raise InputError(f"{flag}={value} has an empty item: separate items with single commas")
    repeated = sorted({i for i in items if items.count(i) > 1})
    if repeated:
        raise InputError(f"{flag}={value} names {', '.join(repeated)} more than once: name each once")
    return items


def rocm_version(value: str) -> str:
    if not _ROCM_VERSION.match(value):
        raise InputError(f"--rocm-version={value} is not a ROCm release: give it as X.Y.Z (e.g. 7.2.4), or TheRock's "
                         "X.Y.ZaYYYYMMDD (e.g. 7.10.0a20251120)")
    return value


def amdgpu_targets(value: str) -> tuple[str, ...]:
    """The targets, split once by the finder's grammar (split_targets: commas, semicolons or
    spaces; repeats dropped), as TF_ROCM_AMDGPU_TARGETS and --//rocm:amdgpu_targets are read;
    each target a processor LLVM knows, with the features a code object takes. The Request holds
    them as this tuple; they are joined again only where a flag is written (toolkit.rocm_flags)."""
    targets = finder.split_targets(value)
    if not targets:
        raise InputError("--amdgpu-targets= is empty: name at least one (e.g. gfx942), or leave the flag out for the default")
    for target in targets:
        processor, *features = target.split(":")
        if processor not in finder.KNOWN_AMDGPU_PROCESSORS:
            near = difflib.get_close_matches(processor.lower(), finder.KNOWN_AMDGPU_PROCESSORS, n=3)
            hint = f"; did you mean {' or '.join(near)}?" if near else " (they look like gfx942, gfx90a, gfx1201)"
            raise InputError(f"--amdgpu-targets: {processor} is no amdgpu processor clang knows{hint}")
        unknown = [f for f in features if f not in finder.TARGET_FEATURES]
        if unknown:
            raise InputError(f"--amdgpu-targets: {target}: {', '.join(unknown)} is no target feature "
                             f"(a code object takes {', '.join(finder.TARGET_FEATURES)})")
    return tuple(targets)


def listed_targets(targets: tuple[str, ...]) -> str:
    """How messages write --amdgpu-targets: as Bazel is given it."""
    return ",".join(targets)


def python_versions(value: str) -> str:
    versions = _items("--python-versions", value)
    bad = [v for v in versions if not _PYTHON.match(v)]
    if bad:
        raise InputError(f"--python-versions: {', '.join(bad)} is not a Python version: give major.minor, e.g. 3.11,3.14")
    return ",".join(versions)


def _listed(versions: Iterable[str], last: str = "and") -> str:
    versions = list(versions)
    return ", ".join(versions[:-1]) + f" {last} " + versions[-1] if len(versions) > 1 else "".join(versions)


def pythons_of_the_tree(value: str, supported: tuple[str, ...], jax: str) -> None:
    """--python-versions (checked: python_versions) against the Pythons the JAX tree builds
    for, `supported`, from `jax` (e.g. "JAX 0.11.0 (--jax-source-dir=...)"): a plugin wheel for
    another would have no jaxlib of that tree to go with it."""
    refused = [v for v in value.split(",") if v not in supported]
    if refused:
        raise InputError(f"--python-versions={value}: {jax} builds jaxlib for Python {_listed(supported)}, not "
                         f"{_listed(refused, 'or')}: name {'that' if len(supported) == 1 else 'some of those'}, or give a "
                         f"JAX tree that supports {_listed(refused)} (--jax-source-dir=PATH)")


def sha256(value: str, name: str = "--therock-sha256", where: str = "") -> str:
    """A sha256 given as `name` (a flag, or a variable `where` says the origin of), lower-cased."""
    if not _SHA256.match(value.lower()):
        raise InputError(f"{name}={value}{where} is not a sha256 (64 hexadecimal digits, as `sha256sum FILE` prints)")
    return value.lower()


def wheel_version(value: str) -> str:
    if not _RELEASE.match(value):
        raise InputError(f"--wheel-version={value} is not a JAX release: give X.Y.Z (e.g. 0.10.2); --wheel-kind, "
                         "--wheel-date and --wheel-post-release add the .dev and .post parts")
    return value


def wheel_date(value: str) -> str:
    try:
        if len(value) != 8:  # strptime also takes 2026112 (a one-digit day)
            raise ValueError(value)
        datetime.datetime.strptime(value, "%Y%m%d")
    except ValueError:
        raise InputError(f"--wheel-date={value} is not a date written YYYYMMDD (e.g. 20261126)") from None
    return value


def wheel_commit(value: str) -> str:
    if not _COMMIT.match(value.lower()):
        raise InputError(f"--wheel-commit={value} is not a git commit: give 7 to 40 hexadecimal digits, as "
                         "`git rev-parse HEAD` prints")
    return value.lower()


def wheel_post_release(value: int) -> int:
    if value < 0:
        raise InputError(f"--wheel-post-release={value}: give N >= 1 for an .postN version, or leave the flag out")
    return value


def wheel_kind(kind: str | None, stand_ins: list[str], allow_stand_ins: bool, date: str | None,
               commit: str | None) -> str:
    """The kind of wheel version to make, given the stand-ins the wheels will hold. Unless
    --wheel-kind says, wheels that hold stand-ins are dev wheels (their version says they are
    no release) and others release wheels; release wheels of stand-ins need --allow-stand-ins.
    --wheel-date and --wheel-commit must belong to the kind."""
    if kind is None:
        kind = "dev" if stand_ins and not allow_stand_ins else "release"
    elif kind == "release" and stand_ins and not allow_stand_ins:
        raise InputError(f"--wheel-kind=release: these wheels would hold stand-ins ({'; '.join(stand_ins)}), and a "
                         "release of stand-ins needs --allow-stand-ins (they stay labelled); or make nightly or dev "
                         "wheels, or build from the real sources")
    if date and kind == "release":
        raise InputError(f"--wheel-date={date} dates nightly and dev versions, and these are release wheels: add "
                         "--wheel-kind=nightly or dev, or drop --wheel-date")
    if commit and kind != "dev":
        raise InputError(f"--wheel-commit={commit} names the commit of a dev version, and these are {kind} wheels: "
                         "add --wheel-kind=dev, or drop --wheel-commit")
    return kind


# JAX's build variables (build/build.py, wheel/private/ml_wheel.bzl reads them as --repo_env=...)
# and the ci_build flag that says the same. ci_build takes the flags alone: a variable exported for
# JAX's own build must not make wheels of another kind here without a word.
ML_WHEEL_FLAGS = {
    "ML_WHEEL_TYPE": "--wheel-kind=release|nightly|dev",
    "ML_WHEEL_BUILD_DATE": "--wheel-date=YYYYMMDD",
    "ML_WHEEL_GIT_HASH": "--wheel-commit=SHA",
    "ML_WHEEL_VERSION_SUFFIX": "no ci_build flag (`bazel build --repo_env=ML_WHEEL_VERSION_SUFFIX=...` takes it)",
}


def ml_wheel_environment(environ: Mapping[str, str]) -> None:
    """Refuses JAX's ML_WHEEL_* variables in ci_build's environment, naming the flag to pass instead."""
    given = [name for name in ML_WHEEL_FLAGS if environ.get(name, "").strip()]
    if given:
        name = given[0]
        raise InputError(f"{name}={environ[name]} (from the environment) is JAX's build variable, which ci_build does not "
                         f"read: unset {' '.join(given)} and say it with a flag: {ML_WHEEL_FLAGS[name]}")


def output_dir(value: str | os.PathLike) -> Path:
    """The wheels' folder: an existing writable folder, or one that can be made (its nearest
    existing parent is a writable folder)."""
    path = Path(value).expanduser().absolute()
    existing = nearest_existing(path)
    if existing == path and not path.is_dir():
        raise InputError(f"--output-dir={value} is a file, not a folder: name a folder for the wheels")
    if not existing.is_dir():
        raise InputError(f"--output-dir={value}: {existing} is a file, so the folder cannot be made there")
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "the folder" if existing == path else f"{existing}, where the folder would be made,"
        raise InputError(f"--output-dir={value}: {what} is not writable by this user: choose another, or fix its "
                         "permissions")
    return path


def checkout_path(checkout: Path) -> None:
    """The build's bazelrc files name paths in the checkout (tools/offline/offline.bazelrc's
    %workspace%), and Bazel splits their lines on whitespace: a path with a space became a
    missing repository 18 s in. Said before anything runs instead."""
    if any(c.isspace() for c in str(checkout)):
        raise InputError(f"this checkout's path {str(checkout)!r} contains whitespace, which the bazelrc lines naming "
                         "its folders cannot hold: clone or move it to a path without spaces")


def cache_dir(path: Path) -> Path:
    """The folder ci_build and the sandbox keep their state in ($XDG_CACHE_HOME/jax-rocm-build):
    writable, or makeable in a writable folder."""
    existing = nearest_existing(path)
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"{path} (where ci_build and the sandbox keep their state: $XDG_CACHE_HOME/jax-rocm-build, "
                         f"else ~/.cache/jax-rocm-build) cannot be written: {existing} is not a writable folder; set "
                         "XDG_CACHE_HOME to a writable folder with room")
    return path


def complete_archive(flag: str, path: Path) -> None:
    """Reads an archive (tar or zip) to its end under the one archive policy
    (third_party/gpus/extract_archive.py read_archive), so that a truncated, corrupt or unsafe
    one fails here and not in Bazel."""
    try:
        extract_archive.read_archive(path)
    except extract_archive.UnsafeArchive as e:
        raise InputError(f"{flag}={path} is refused: {e}; download or make it again, or give the checkout's "
                         "folder") from None


def version_agrees(requested: str, found: Iterable[str | None]) -> bool:
    """--rocm-version=7.2 agrees with 7.2.4; 7.2.4 with 7.2.4 or with a TheRock 7.2.4a2026...;
    never 7.2.40 or 7.20."""
    for version in filter(None, found):
        if version == requested or version.startswith(requested + ".") or re.match(re.escape(requested) + r"[a-z]", version):
            return True
    return False
