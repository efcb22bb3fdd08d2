"""ci_build's inputs, checked before anything is built: each check is one line naming the input and the fix.

Everything here is a pure function of the flag values and the files they name; ci_build
calls them before the sandbox starts, so that a typo costs a second, not a build.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path

from third_party.gpus import extract_archive


class InputError(Exception):
    """A user input that cannot work; the message says which and what to do."""


# A ROCm release as toolkits and TheRock name them: 7.2.4, 7.2, 7.10.0a20251120, 7.13.0rc1.
_ROCM_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)?(?:[a-z]+\d*)?$")
# gfx942, gfx90a, gfx1201, with features (gfx90a:xnack+), and generic ones (gfx9-4-generic).
_TARGET = re.compile(r"^(?:gfx[0-9a-f]{3,4}|gfx\d+(?:-\d+)*-generic)(?::[a-z]+[+-])*$")
_PYTHON = re.compile(r"^3\.\d{1,2}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


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


def amdgpu_targets(value: str) -> str:
    targets = _items("--amdgpu-targets", value)
    for target in targets:
        if _TARGET.match(target):
            continue
        if _TARGET.match(target.lower()):
            raise InputError(f"--amdgpu-targets: {target} is not a target name; did you mean {target.lower()}?")
        raise InputError(f"--amdgpu-targets: {target} is not an amdgpu target (they look like gfx942, gfx90a, gfx1201)")
    return ",".join(targets)


def python_versions(value: str) -> str:
    versions = _items("--python-versions", value)
    bad = [v for v in versions if not _PYTHON.match(v)]
    if bad:
        raise InputError(f"--python-versions: {', '.join(bad)} is not a Python version: give major.minor, e.g. 3.11,3.14")
    return ",".join(versions)


def sha256(value: str) -> str:
    if not _SHA256.match(value.lower()):
        raise InputError(f"--therock-sha256={value} is not a sha256 (64 hexadecimal digits, as `sha256sum FILE` prints)")
    return value.lower()


def output_dir(value: str | os.PathLike) -> Path:
    """The wheels' folder: an existing writable folder, or one that can be made (its nearest
    existing parent is a writable folder)."""
    path = Path(value).expanduser().absolute()
    existing = path
    while not existing.exists():
        existing = existing.parent
    if existing == path and not path.is_dir():
        raise InputError(f"--output-dir={value} is a file, not a folder: name a folder for the wheels")
    if not existing.is_dir():
        raise InputError(f"--output-dir={value}: {existing} is a file, so the folder cannot be made there")
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "the folder" if existing == path else f"{existing}, where the folder would be made,"
        raise InputError(f"--output-dir={value}: {what} is not writable by this user: choose another, or fix its "
                         "permissions")
    return path


def complete_archive(flag: str, path: Path) -> None:
    """Reads an archive to its end, so that a truncated, corrupt or unsafe one fails here and not
    in Bazel: a tar archive by the repository rules' extractor (third_party/gpus/extract_archive.py
    check(): the policy its extraction applies, where this Python has tarfile's data filter), a
    zip by zipfile's own test."""
    if not path.name.endswith(".zip"):
        try:
            extract_archive.check(path, require_filter=False)
        except extract_archive.UnsafeArchive as e:
            raise InputError(f"{flag}={path} is refused: {e}; download or make it again, or give the checkout's "
                             "folder") from None
        return
    try:
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
        detail = " ".join(str(e).split())
        raise InputError(f"{flag}={path} is not a complete archive ({type(e).__name__}: {detail}): download or make it "
                         "again, or give the checkout's folder") from None
    if bad:
        raise InputError(f"{flag}={path}: the archive is damaged at {bad}: download or make it again")


def version_agrees(requested: str, found: Iterable[str | None]) -> bool:
    """--rocm-version=7.2 agrees with 7.2.4; 7.2.4 with 7.2.4 or with a TheRock 7.2.4a2026...;
    never 7.2.40 or 7.20."""
    for version in filter(None, found):
        if version == requested or version.startswith(requested + ".") or re.match(re.escape(requested) + r"[a-z]", version):
            return True
    return False
