#!/usr/bin/env python3
"""Unpacks the part of Zig's PyPI wheel that @zig_sdk uses (extensions.bzl runs this).

    extract_zig.py WHEEL --prefix ziglang/ --into sdk [--skip GLOB ...]

Bazel's own extraction unpacks all of the wheel's 19,500 files; three quarters of them are
other systems' C libraries (musl, mingw, the BSDs, darwin, wasi and their headers), which no
action reads. Unpacking them took 12-18 s at the start of every cold build, before the first
C++ compile could start. Only members under --prefix are written, with the prefix removed;
members matching a --skip glob (fnmatch, on the path below the prefix) are left out. A
member's path may not leave --into; modes come from the archive (Zig's executable bit).
"""

from __future__ import annotations

import argparse
import fnmatch
import shutil
import sys
import zipfile
from pathlib import Path, PurePosixPath


def wanted(name: str, prefix: str, skips: list[str]) -> str | None:
    """The path below `prefix` to write `name` to, or None to leave it out."""
    if not name.startswith(prefix) or name.endswith("/"):
        return None
    rel = name[len(prefix):]
    path = PurePosixPath(rel)
    if not rel or path.is_absolute() or ".." in path.parts:
        raise ValueError(f"{name}: a member path outside the archive's folder")
    return None if any(fnmatch.fnmatchcase(rel, glob) for glob in skips) else rel


def extract(wheel: Path, prefix: str, into: Path, skips: list[str]) -> int:
    count = 0
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            rel = wanted(info.filename, prefix, skips)
            if rel is None:
                continue
            dest = into / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                dest.chmod(mode)
            count += 1
    return count


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--prefix", default="", help="the folder inside the archive to unpack (with its trailing /)")
    parser.add_argument("--into", type=Path, required=True)
    parser.add_argument("--skip", action="append", default=[], metavar="GLOB", help="leave out members matching GLOB")
    args = parser.parse_args(argv)
    try:
        count = extract(args.wheel, args.prefix, args.into, args.skip)
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        print(f"extract_zig.py: cannot unpack {args.wheel}: {e}", file=sys.stderr)
        return 1
    if not count:
        print(f"extract_zig.py: {args.wheel} has no member under {args.prefix!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
