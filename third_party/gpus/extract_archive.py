#!/usr/bin/env python3
"""Extracts a ROCm tarball, refusing anything that would land outside the output.

    python3 extract_archive.py --archive therock.tar.gz --output DIR [--strip-prefix PREFIX]

Uses tarfile's "data" extraction filter (PEP 706), which rejects absolute
names, `..` components, links that point outside the output, device files and
setuid bits. On any error the partial output is removed: nothing is left
behind. Stdlib only; run by rocm_configure.bzl.
"""

from __future__ import annotations

import argparse
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


def extract(archive: Path, output: Path, strip_prefix: str = "") -> int:
    """Streams `archive` into `output`; returns the number of members written."""
    if not hasattr(tarfile, "data_filter"):
        raise UnsafeArchive(f"Python {sys.version.split()[0]} lacks tarfile's data filter (needs 3.12, or 3.11.4+); use a newer python3")
    output.mkdir(parents=True, exist_ok=True)
    dest = str(output.resolve())
    count = 0

    def safe(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
        nonlocal count
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
        count += 1
        return checked

    try:
        with tarfile.open(archive, mode="r|*") as tar:
            tar.extractall(dest, filter=safe)
    except (UnsafeArchive, tarfile.TarError, EOFError, OSError) as e:
        shutil.rmtree(output, ignore_errors=True)
        if isinstance(e, UnsafeArchive):
            raise
        raise UnsafeArchive(f"{archive.name} is not a complete, readable tar archive ({e})") from None
    if count == 0:
        shutil.rmtree(output, ignore_errors=True)
        raise UnsafeArchive(f"{archive.name} has no entries under strip_prefix {strip_prefix!r}")
    return count


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
