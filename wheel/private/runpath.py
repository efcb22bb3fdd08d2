#!/usr/bin/env python3
"""Strips Bazel's build-tree entries from the RUNPATH of an ELF shared object.

    runpath.py --in SRC --out DST     # DST = SRC without build-tree RUNPATH/RPATH entries

Bazel links every cc_binary with RUNPATH entries into its own tree
(`$ORIGIN/../../_solib_k8/...`, `$ORIGIN/<name>.runfiles/...`), which mean nothing once a
wheel is installed, and no target can turn them off (the toolchains imply the feature
runtime_library_search_directories). The wheel rule (wheel.bzl) runs this on every .so it
packs: the RUNPATH that rocm_path_type chose at link time (third_party/gpus/private/runpath.bzl) stays,
in its order; the build-tree entries go. The string is rewritten in place (what is kept is
never longer than what was there), so nothing else in the file moves; a RUNPATH left empty
is removed from the dynamic section rather than left as "" (which the loader would read as
the current directory).

build/ci_build_cli/wheel_audit.py fails a wheel that still holds such an entry, with the same
is_build_tree_entry. pyelftools reads the file (it cannot write one: the edits are bytes
written at the offsets it gives). Bazel runs this with the sandbox's Python, whose root
has Debian's python3-pyelftools (sandbox/layers.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
from pathlib import Path
from typing import BinaryIO

from elftools.common.exceptions import ELFError
from elftools.common.utils import parse_cstring_from_stream
from elftools.elf.elffile import ELFFile

# Pieces of a path that only exist in a Bazel build tree: its shared-library symlink forest,
# runfiles trees, the execution root, output folders, an output base (external repositories,
# Bazel's default output user root).
BUILD_TREE_MARKERS = ("_solib_", ".runfiles", "/execroot/", "bazel-out", "/_bazel_", "/external/")

_TAG_NAMES = {"DT_RPATH": "RPATH", "DT_RUNPATH": "RUNPATH"}


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
    index: int  # in the dynamic table
    tag: str | int  # pyelftools' name ("DT_RUNPATH"), the number of a tag it does not know
    value: int


@dataclasses.dataclass(frozen=True)
class Dynamic:
    elf: ELFFile
    offset: int  # file offset of the dynamic table
    table: bytes  # its bytes, as the file holds them
    entry_size: int
    entries: tuple[DynamicEntry, ...]  # up to and including the first DT_NULL
    strtab: int  # file offset of the dynamic string table
    strsz: int

    def raw(self, entry: DynamicEntry) -> bytes:
        return self.table[entry.index * self.entry_size:(entry.index + 1) * self.entry_size]

    def string(self, index: int) -> str:
        # Raw bytes, not pyelftools' decoded strings (it replaces bytes that are not UTF-8):
        # what is written back must be the very bytes that were there.
        data = parse_cstring_from_stream(self.elf.stream, self.strtab + index)
        if data is None or len(data) >= self.strsz - index:
            raise ElfError(f"unterminated string at {self.strtab + index}")
        return data.decode("utf-8", "surrogateescape")


def read_dynamic(f: BinaryIO) -> Dynamic | None:
    """The dynamic table of an ELF file (None for one without: a static object)."""
    try:
        elf = ELFFile(f)
    except ELFError as e:
        raise ElfError(f"not an ELF file ({e})") from e
    segment = next(elf.iter_segments(type="PT_DYNAMIC"), None)
    if segment is None:
        return None
    # The loader's view: the PT_DYNAMIC segment and the DT_STRTAB it names, which a file
    # without section headers has too. Entries are parsed with pyelftools' Elf_Dyn (either
    # ELF class and byte order) rather than segment.iter_tags(), which first looks up tags'
    # strings and, finding no string table, fails with no message (0.33: AssertionError).
    table, size = segment.data(), elf.structs.Elf_Dyn.sizeof()
    entries = []
    for i in range(len(table) // size):
        dyn = elf.structs.Elf_Dyn.parse(table[i * size:(i + 1) * size])
        entries.append(DynamicEntry(i, dyn["d_tag"], dyn["d_val"]))
        if dyn["d_tag"] == "DT_NULL":
            break
    by_tag = {e.tag: e.value for e in entries}
    if "DT_STRTAB" not in by_tag:
        raise ElfError("dynamic section without DT_STRTAB")
    strtab = next(elf.address_offsets(by_tag["DT_STRTAB"]), None)
    if strtab is None:
        raise ElfError(f"DT_STRTAB address {by_tag['DT_STRTAB']:#x} is in no PT_LOAD segment")
    return Dynamic(elf, segment["p_offset"], table, size, tuple(entries), strtab, by_tag.get("DT_STRSZ", 0))


def runpaths(f: BinaryIO) -> dict[str, list[str]]:
    """{'RUNPATH': [...], 'RPATH': [...]}: the search path entries, in order (absent tags omitted)."""
    dynamic = read_dynamic(f)
    out: dict[str, list[str]] = {}
    for entry in dynamic.entries if dynamic else ():
        if entry.tag in _TAG_NAMES:
            out.setdefault(_TAG_NAMES[entry.tag], []).extend(dynamic.string(entry.value).split(":"))
    return out


def _string_references(dynamic: Dynamic) -> set[int]:
    """Every offset into the dynamic string table the file refers to: dynamic entries,
    dynamic symbols' names, version definitions and needs (GNU ld shares string tails)."""
    refs = {e.value for e in dynamic.entries if e.tag in ("DT_NEEDED", "DT_SONAME", "DT_RPATH", "DT_RUNPATH")}
    for section in dynamic.elf.iter_sections():
        if section["sh_type"] == "SHT_DYNSYM":
            refs.update(symbol["st_name"] for symbol in section.iter_symbols())
        elif section["sh_type"] == "SHT_GNU_verneed":
            for version, auxiliaries in section.iter_versions():
                refs.add(version["vn_file"])
                refs.update(aux["vna_name"] for aux in auxiliaries)
        elif section["sh_type"] == "SHT_GNU_verdef":
            for _version, auxiliaries in section.iter_versions():
                refs.update(aux["vda_name"] for aux in auxiliaries)
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
        text = dynamic.string(entry.value)
        parts = text.split(":")
        keep = [p for p in parts if p and not is_build_tree_entry(p)]
        gone = [p for p in parts if p and is_build_tree_entry(p)]
        if not gone:
            continue
        refs = _string_references(dynamic) if refs is None else refs
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
        # Remove the emptied entries: the rest moves up, as they were, and DT_NULLs (all zero
        # bytes in either ELF class and byte order) fill the end.
        kept = [dynamic.raw(e) for e in dynamic.entries if e not in drop and e.tag != "DT_NULL"]
        f.seek(dynamic.offset)
        f.write(b"".join(kept) + b"\0" * (dynamic.entry_size * (len(dynamic.entries) - len(kept))))
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
    except ELFError as e:  # pyelftools' word for a file it cannot parse, e.g. a truncated one
        print(f"runpath: {args.src}: malformed ELF file: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
