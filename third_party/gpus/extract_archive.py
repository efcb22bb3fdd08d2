#!/usr/bin/env python3
"""Extracts a ROCm tarball, refusing anything that would land outside the output.

    python3 extract_archive.py --archive therock.tar.gz --output DIR [--strip-prefix PREFIX]

Uses tarfile's "data" extraction filter (PEP 706), which rejects absolute
names, `..` components, links that point outside the output, device files and
setuid bits. On any error the partial output is removed: nothing is left
behind. Stdlib only; run by rocm_configure.bzl. check() applies the same policy
without writing: build/ci_build checks a local tarball with it before Bazel starts.
"""

from __future__ import annotations

import argparse
import copy
import shutil
import sys
import tarfile
from pathlib import Path


class UnsafeArchive(Exception):
    pass


def strip(name: str, prefix: str) -> str | None:
    """Member name with `prefix/` removed; None for members outside the prefix."""
    if not prefix:
        return name
    if name.startswith("./"):
        name = name[2:]
    head = prefix.strip("/") + "/"
    if name == head.rstrip("/"):
        return ""
    return name[len(head):] if name.startswith(head) else None


def has_data_filter() -> bool:
    """Whether this Python can apply the safety policy (tarfile's data filter, 3.12 or 3.11.4+)."""
    return hasattr(tarfile, "data_filter")


def _no_data_filter() -> UnsafeArchive:
    return UnsafeArchive(f"Python {sys.version.split()[0]} lacks tarfile's data filter (needs 3.12, or 3.11.4+); "
                         "use a newer python3")


def _refusing(strip_prefix: str, dest: str, counted: list[int]):
    """The extraction policy, member by member: absolute names, `..`, links leading outside `dest`,
    devices and setuid bits refused (the data filter, PEP 706); names outside `strip_prefix`
    skipped. One policy for extract() and check()."""

    def safe(member: tarfile.TarInfo, path: str = dest) -> tarfile.TarInfo | None:
        if member.name.startswith("/"):  # the data filter would silently make it relative
            raise UnsafeArchive(f"{member.name}: absolute path in archive")
        name = strip(member.name, strip_prefix)
        if name is None or name == "":
            return None
        changes = {"name": name}
        if member.islnk():  # hard link targets are archive member names
            target = strip(member.linkname, strip_prefix)
            if target is None:
                raise UnsafeArchive(f"{member.name}: hard link to {member.linkname}, outside {strip_prefix}")
            changes["linkname"] = target
        try:
            checked = tarfile.data_filter(member.replace(**changes, deep=False), path)
        except tarfile.FilterError as e:
            raise UnsafeArchive(f"{member.name}: {e}") from None
        counted[0] += 1
        return checked

    return safe


def _nothing_inside(archive: Path, strip_prefix: str) -> UnsafeArchive:
    if strip_prefix:
        return UnsafeArchive(f"{archive.name} has no entries under strip_prefix {strip_prefix!r}")
    return UnsafeArchive(f"{archive.name} is an empty archive")


def _incomplete(archive: Path, e: Exception) -> UnsafeArchive:
    detail = " ".join(str(e).split())  # tarfile lists each method it tried on lines of their own
    return UnsafeArchive(f"{archive.name} is not a complete, readable tar archive ({detail})")


def extract(archive: Path, output: Path, strip_prefix: str = "") -> int:
    """Streams `archive` into `output`; returns the number of members written."""
    if not has_data_filter():
        raise _no_data_filter()
    output.mkdir(parents=True, exist_ok=True)
    dest = str(output.resolve())
    counted = [0]
    try:
        with tarfile.open(archive, mode="r|*") as tar:
            tar.extractall(dest, filter=_refusing(strip_prefix, dest, counted))
    except (UnsafeArchive, tarfile.TarError, EOFError, OSError) as e:
        shutil.rmtree(output, ignore_errors=True)
        if isinstance(e, UnsafeArchive):
            raise
        raise _incomplete(archive, e) from None
    if counted[0] == 0:
        shutil.rmtree(output, ignore_errors=True)
        raise _nothing_inside(archive, strip_prefix)
    return counted[0]


def _renamed(member: tarfile.TarInfo, name: str | None) -> tarfile.TarInfo | None:
    """A copy of `member` under `name` (None: skipped). TarInfo.replace() came with the data
    filter, so a Python without the filter copies by hand."""
    if not name:
        return None
    renamed = copy.copy(member)
    renamed.name = name
    return renamed


def check(archive: Path, strip_prefix: str = "", require_filter: bool = True) -> tuple[list[tarfile.TarInfo], bool]:
    """What extract() would do, without writing: reads `archive` to its end (a truncated or
    corrupt one fails) and applies extract()'s own policy to every member. Returns (the members
    as extract() would write them, names stripped; whether the safety policy was applied).

    Without the data filter, require_filter=False still checks completeness and lists the members
    (the policy is then left to whoever extracts); require_filter=True refuses, as extract() does.
    The destination the links are checked against is a folder that does not exist, so that
    nothing on this machine decides the verdict."""
    filtered = has_data_filter()
    if not filtered and require_filter:
        raise _no_data_filter()
    dest = "/nonexistent-extract-archive-check"
    counted = [0]
    safe = _refusing(strip_prefix, dest, counted) if filtered else None
    members = []
    try:
        with tarfile.open(archive, mode="r|*") as tar:
            for member in tar:  # streaming: each member's data is read past, so a cut archive fails here
                if safe:
                    checked = safe(member)
                else:
                    checked = _renamed(member, strip(member.name, strip_prefix))
                if checked is not None:
                    members.append(checked)
    except (tarfile.TarError, EOFError, OSError, ValueError) as e:
        raise _incomplete(archive, e) from None
    if not members:
        raise _nothing_inside(archive, strip_prefix)
    return members, filtered


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--archive", type=Path, required=True)
    p.add_argument("--output", type=Path, required=True)
    p.add_argument("--strip-prefix", default="")
    args = p.parse_args(argv)
    try:
        n = extract(args.archive, args.output, args.strip_prefix)
    except UnsafeArchive as e:
        print(f"extract_archive: refused {args.archive.name}: {e}", file=sys.stderr)
        return 1
    print(f"extracted {n} entries", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
