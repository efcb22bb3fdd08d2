#!/usr/bin/env python3
"""Strips Bazel's build-tree entries from the RUNPATH of an ELF shared object.

    runpath.py --in SRC --out DST     # DST = SRC without build-tree RUNPATH/RPATH entries

Bazel links every cc_binary with RUNPATH entries into its own tree
(`$ORIGIN/../../_solib_k8/...`, `$ORIGIN/<name>.runfiles/...`), which mean nothing once a
wheel is installed, and no target can turn them off (the toolchains imply the feature
runtime_library_search_directories). The wheel rule (wheel.bzl) runs this on every .so it
packs: the RUNPATH that rocm_path_type chose at link time (rocm/private/runpath.bzl) stays,
in its order; the build-tree entries go. The string is rewritten in place (what is kept is
never longer than what was there), so nothing else in the file moves; a RUNPATH left empty
is removed from the dynamic section rather than left as "" (which the loader would read as
the current directory).

wheel/wheel_audit.py fails a wheel that still holds such an entry, with the same
is_build_tree_entry. Stdlib only: Bazel runs it with the sandbox's Python.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import struct
import sys
from pathlib import Path
from typing import BinaryIO

# Pieces of a path that only exist in a Bazel build tree: its shared-library symlink forest,
# runfiles trees, the execution root, output folders, an output base (external repositories,
# Bazel's default output user root).
BUILD_TREE_MARKERS = ("_solib_", ".runfiles", "/execroot/", "bazel-out", "/_bazel_", "/external/")

DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 14, 15, 29
PT_LOAD, PT_DYNAMIC = 1, 2
SHT_DYNSYM, SHT_GNU_VERDEF, SHT_GNU_VERNEED = 11, 0x6FFFFFFD, 0x6FFFFFFE
_TAG_NAMES = {DT_RPATH: "RPATH", DT_RUNPATH: "RUNPATH"}


class ElfError(ValueError):
    """Not an ELF file this tool can rewrite; the message says why."""


def is_build_tree_entry(entry: str) -> bool:
    """Whether a RUNPATH entry points into a Bazel build tree. A relative entry (neither
    absolute nor $ORIGIN-relative) counts: it is relative to wherever the process runs,
    which is how Bazel writes paths inside its execution root."""
    if any(marker in entry for marker in BUILD_TREE_MARKERS):
        return True
    return not entry.startswith(("/", "$ORIGIN", "${ORIGIN}"))


@dataclasses.dataclass(frozen=True)
class DynamicEntry:
    offset: int  # file offset of the entry
    tag: int
    value: int


@dataclasses.dataclass(frozen=True)
class Dynamic:
    entries: tuple[DynamicEntry, ...]  # up to and including the first DT_NULL
    strtab: int  # file offset of the dynamic string table
    strsz: int

    def string(self, f: BinaryIO, index: int) -> str:
        return _cstring(f, self.strtab + index, self.strsz - index)


def _read(f: BinaryIO, offset: int, size: int) -> bytes:
    f.seek(offset)
    data = f.read(size)
    if len(data) != size:
        raise ElfError(f"truncated: wanted {size} bytes at {offset}")
    return data


def _cstring(f: BinaryIO, offset: int, limit: int) -> str:
    f.seek(offset)
    data = f.read(max(0, min(limit, 1 << 16)))
    end = data.find(b"\0")
    if end < 0:
        raise ElfError(f"unterminated string at {offset}")
    return data[:end].decode("utf-8", "surrogateescape")


def _header(f: BinaryIO) -> tuple:
    f.seek(0)
    if f.read(4) != b"\x7fELF":
        raise ElfError("not an ELF file")
    ident = _read(f, 0, 64)
    if ident[4] != 2 or ident[5] != 1:
        raise ElfError("not a little-endian 64-bit ELF file")
    phoff, shoff = struct.unpack_from("<QQ", ident, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", ident, 0x36)
    return phoff, phentsize, phnum, shoff, shentsize, shnum


def read_dynamic(f: BinaryIO) -> Dynamic | None:
    """The dynamic section of an ELF file (None for one without: a static object)."""
    phoff, phentsize, phnum, *_ = _header(f)
    loads, dynamic = [], None
    for i in range(phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack("<IIQQQQ", _read(f, phoff + i * phentsize, 40))
        if p_type == PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return None
    entries = []
    for offset in range(dynamic[0], dynamic[0] + dynamic[1] - 15, 16):
        tag, value = struct.unpack("<qQ", _read(f, offset, 16))
        entries.append(DynamicEntry(offset, tag, value))
        if tag == DT_NULL:
            break
    by_tag = {e.tag: e.value for e in entries}
    if DT_STRTAB not in by_tag:
        raise ElfError("dynamic section without DT_STRTAB")
    address = by_tag[DT_STRTAB]
    for vaddr, offset, filesz in loads:
        if vaddr <= address < vaddr + filesz:
            return Dynamic(tuple(entries), address - vaddr + offset, by_tag.get(DT_STRSZ, 0))
    raise ElfError(f"DT_STRTAB address {address:#x} is in no PT_LOAD segment")


def runpaths(f: BinaryIO) -> dict[str, list[str]]:
    """{'RUNPATH': [...], 'RPATH': [...]}: the search path entries, in order (absent tags omitted)."""
    dynamic = read_dynamic(f)
    out: dict[str, list[str]] = {}
    for entry in dynamic.entries if dynamic else ():
        if entry.tag in _TAG_NAMES:
            out.setdefault(_TAG_NAMES[entry.tag], []).extend(p for p in dynamic.string(f, entry.value).split(":"))
    return out


def _string_references(f: BinaryIO, dynamic: Dynamic) -> set[int]:
    """Every offset into the dynamic string table the file refers to: dynamic entries,
    dynamic symbols' names, version definitions and needs (GNU ld shares string tails)."""
    refs = {e.value for e in dynamic.entries if e.tag in (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH)}
    *_, shoff, shentsize, shnum = _header(f)
    for i in range(shnum if shoff else 0):
        sh_name, sh_type, _flags, _addr, sh_offset, sh_size, _link, sh_info, _align, sh_entsize = struct.unpack(
            "<IIQQQQIIQQ", _read(f, shoff + i * shentsize, 64))
        if sh_type == SHT_DYNSYM and sh_entsize:
            for j in range(sh_size // sh_entsize):
                refs.add(struct.unpack("<I", _read(f, sh_offset + j * sh_entsize, 4))[0])
        elif sh_type == SHT_GNU_VERNEED:
            offset = sh_offset
            for _ in range(sh_info):
                _ver, cnt, file_, aux, nxt = struct.unpack("<HHIII", _read(f, offset, 16))
                refs.add(file_)
                a = offset + aux
                for _ in range(cnt):
                    _hash, _flags2, _other, name, anext = struct.unpack("<IHHII", _read(f, a, 16))
                    refs.add(name)
                    a += anext
                offset += nxt
        elif sh_type == SHT_GNU_VERDEF:
            offset = sh_offset
            for _ in range(sh_info):
                _ver, _flags2, _ndx, cnt, _hash, aux, nxt = struct.unpack("<HHHHIII", _read(f, offset, 20))
                a = offset + aux
                for _ in range(cnt):
                    name, anext = struct.unpack("<II", _read(f, a, 8))
                    refs.add(name)
                    a += anext
                offset += nxt
    return refs


def strip_build_tree(f: BinaryIO) -> list[str]:
    """Rewrites, in the open file f (r+b), every RUNPATH/RPATH without its build-tree entries;
    returns the entries removed ("RUNPATH: $ORIGIN/../../_solib_k8/..."), [] when none."""
    dynamic = read_dynamic(f)
    if dynamic is None:
        return []
    removed, drop = [], []
    refs = None
    for entry in dynamic.entries:
        if entry.tag not in _TAG_NAMES:
            continue
        text = dynamic.string(f, entry.value)
        parts = text.split(":")
        keep = [p for p in parts if p and not is_build_tree_entry(p)]
        gone = [p for p in parts if p and is_build_tree_entry(p)]
        if not gone:
            continue
        refs = _string_references(f, dynamic) if refs is None else refs
        inside = sorted(r for r in refs if entry.value < r <= entry.value + len(text.encode("utf-8", "surrogateescape")))
        if inside:
            raise ElfError(f"the {_TAG_NAMES[entry.tag]} string shares bytes with other strings of the file "
                           f"(offsets {inside[:3]}); it cannot be rewritten in place")
        new = ":".join(keep).encode("utf-8", "surrogateescape")
        old_size = len(text.encode("utf-8", "surrogateescape"))
        f.seek(dynamic.strtab + entry.value)
        f.write(new + b"\0" * (old_size - len(new)))
        removed += [f"{_TAG_NAMES[entry.tag]}: {p}" for p in gone]
        if not keep:
            drop.append(entry)
    if drop:
        # Remove the emptied entries: the rest moves up, DT_NULLs fill the end.
        kept = [e for e in dynamic.entries if e not in drop and e.tag != DT_NULL]
        start = dynamic.entries[0].offset
        f.seek(start)
        for e in kept:
            f.write(struct.pack("<qQ", e.tag, e.value))
        for _ in range(len(dynamic.entries) - len(kept)):
            f.write(struct.pack("<qQ", DT_NULL, 0))
    return removed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--in", dest="src", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    shutil.copyfile(args.src, args.out)
    args.out.chmod(0o755)
    try:
        with open(args.out, "r+b") as f:
            strip_build_tree(f)
    except ElfError as e:
        print(f"runpath: {args.src}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
