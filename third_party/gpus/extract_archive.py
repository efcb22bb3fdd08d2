#!/usr/bin/env python3
"""The one reader of archives (tar of any compression, and zip), with one safety policy.

    python3 extract_archive.py --archive therock.tar.gz --output DIR [--strip-prefix PREFIX]

The policy (entry_problem): no absolute names, no name or link leading outside the
archive's folder, no device or other special file. read_archive() reads any archive to its
end under it (a truncated or corrupt one fails) and hands back the files a caller wants: the
JAX source trees (third_party/private/source_tree.py), the pre-flight's name scan and
ci_build's checks of archives given on the command line use it. extract() writes a ROCm
tarball under the same policy plus tarfile's "data" extraction filter (PEP 706: also no
setuid bits), which it therefore requires; on any error the partial output is removed.
check() is what extract() would do, without writing: build/ci_build checks a local tarball
with it before Bazel starts. Stdlib only; rocm_configure.bzl runs this file.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import posixpath
import shutil
import stat
import sys
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

# What counts as an archive of a source tree (a JAX checkout's, given instead of the folder).
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tar", ".zip")


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.endswith(ARCHIVE_SUFFIXES)


class UnsafeArchive(Exception):
    pass


def _outside(path: str) -> bool:
    normal = posixpath.normpath(path)
    return normal == ".." or normal.startswith("../")


def entry_problem(name: str, kind: str, linkname: str = "") -> str | None:
    """Why an archive entry is refused, or None. kind: file, dir, symlink, hardlink or special;
    linkname: a symlink's target (relative to the entry's folder) or a hard link's member name."""
    if name.startswith("/"):
        return "absolute path in archive"
    if _outside(name):
        return "leads outside the archive's folder"
    if kind == "special":
        return "a device, fifo or other special file"
    if kind == "symlink" and (linkname.startswith("/") or _outside(posixpath.join(posixpath.dirname(name), linkname))):
        return f"a symlink to {linkname}, outside the archive's folder"
    if kind == "hardlink" and (linkname.startswith("/") or _outside(linkname)):
        return f"a hard link to {linkname}, outside the archive's folder"
    return None


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str  # as the archive names it
    kind: str  # file, dir, symlink, hardlink (entry_problem refuses special ones)
    linkname: str = ""


@dataclasses.dataclass(frozen=True)
class Contents:
    entries: list[Entry]  # every entry, in archive order
    files: dict[str, bytes]  # the regular files the caller wanted, by entry name
    comment: str | None  # a tar's pax header comment (`git archive` writes its commit there)


def _tar_kind(member: tarfile.TarInfo) -> str:
    if member.isfile():
        return "file"
    if member.isdir():
        return "dir"
    return "symlink" if member.issym() else "hardlink" if member.islnk() else "special"


def _zip_kind(info: zipfile.ZipInfo) -> str:
    """A zip entry's kind from the Unix mode in its external attributes; many zips (and
    zipfile's writestr) give permission bits alone, no file type: a file."""
    file_type = stat.S_IFMT(info.external_attr >> 16)
    if info.is_dir() or file_type == stat.S_IFDIR:
        return "dir"
    if file_type == stat.S_IFLNK:
        return "symlink"
    return "file" if file_type in (0, stat.S_IFREG) else "special"


def read_archive(archive: Path, wanted: Callable[[str], bool] = lambda name: False) -> Contents:
    """Reads a tar (any compression) or zip archive to its end under entry_problem's policy;
    UnsafeArchive names the entry refused, or says the archive is incomplete or unreadable.
    Returns every entry, the bytes of the regular files `wanted` picks by entry name, and the
    pax comment. Nothing is written."""
    entries: list[Entry] = []
    files: dict[str, bytes] = {}

    def add(entry: Entry) -> None:
        problem = entry_problem(entry.name, entry.kind, entry.linkname)
        if problem:
            raise UnsafeArchive(f"{entry.name}: {problem}")
        entries.append(entry)

    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                for info in z.infolist():
                    kind = _zip_kind(info)
                    data = z.read(info)  # every entry: its checksum is tested as it is read
                    add(Entry(info.filename, kind, data.decode("utf-8", "replace") if kind == "symlink" else ""))
                    if kind == "file" and wanted(info.filename):
                        files[info.filename] = data
            return Contents(entries, files, None)
        with tarfile.open(archive, mode="r|*") as tar:
            for member in tar:  # streaming: each member's data is read past, so a cut archive fails here
                add(Entry(member.name, _tar_kind(member), member.linkname))
                if member.isfile() and wanted(member.name):
                    files[member.name] = tar.extractfile(member).read()
            comment = tar.pax_headers.get("comment")
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
        raise _incomplete(archive, e) from None
    return Contents(entries, files, comment)


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
        problem = entry_problem(member.name, _tar_kind(member), member.linkname)
        if problem:  # before the data filter, which would silently make an absolute name relative
            raise UnsafeArchive(f"{member.name}: {problem}")
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
    kind = "zip" if archive.name.endswith(".zip") else "tar"
    return UnsafeArchive(f"{archive.name} is not a complete, readable {kind} archive ({type(e).__name__}: {detail})")


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
    as extract() would write them, names stripped; whether the data filter ran too).

    Without the data filter, require_filter=False still applies entry_problem's policy and
    checks completeness (the filter's further refusal, setuid bits, is left to the extraction,
    which requires it); require_filter=True refuses, as extract() does. The destination the
    links are checked against is a folder that does not exist, so that nothing on this machine
    decides the verdict."""
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
                    problem = entry_problem(member.name, _tar_kind(member), member.linkname)
                    if problem:
                        raise UnsafeArchive(f"{member.name}: {problem}")
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
