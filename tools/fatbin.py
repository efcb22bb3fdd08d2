#!/usr/bin/env python3
"""List the amdgpu code objects embedded in HIP objects and shared libraries.

HIP code compiled by clang is stored in an ELF section `.hip_fatbin` as one or more
clang offload bundles (one per compiled source, concatenated by the linker), each
optionally compressed (--offload-compress). This reads them without LLVM:

    python3 -m tools.fatbin bazel-bin/tests/rocm/libhip_kernels.so
    libhip_kernels.so: 2 bundles; targets gfx1201, gfx90a, gfx942

`--json` prints every bundle and entry. Exit status 1 when the file has no HIP device code.
pyelftools finds the section (the test venv has it, pinned in requirements-test.txt; the
sandbox root Debian's python3-pyelftools, sandbox/layers.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import struct
import sys
import zlib
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_MAGIC = b"CCOB"
SECTION = ".hip_fatbin"
# llvm::compression::Format, as stored by clang-offload-bundler.
COMPRESSION_METHODS = {0: "zlib", 1: "zstd"}


class FatbinError(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class Entry:
    triple: str  # e.g. "hipv4-amdgcn-amd-amdhsa--gfx942" or "host-x86_64-unknown-linux-gnu-"
    size: int

    @property
    def target(self) -> str | None:
        """The amdgpu target id ("gfx942", "gfx90a:xnack-"), None for the host entry."""
        if "amdgcn" not in self.triple:
            return None
        return self.triple.rsplit("--", 1)[-1] if "--" in self.triple else self.triple.rsplit("-", 1)[-1]


@dataclasses.dataclass(frozen=True)
class Bundle:
    offset: int  # within the section
    compressed: str | None  # None, "zlib" or "zstd"
    entries: tuple[Entry, ...]


def elf_section(data: bytes, name: str) -> bytes | None:
    """The contents of section `name` of an ELF file, None if absent."""
    try:
        elf = ELFFile(io.BytesIO(data))
    except ELFError as exc:
        raise FatbinError(f"not an ELF file ({exc})") from exc
    try:
        section = elf.get_section_by_name(name)
        if section is None:
            return None
        # SHT_NOBITS has no contents in the file (pyelftools would make zeros of its size).
        return b"" if section["sh_type"] == "SHT_NOBITS" else section.data()
    except ELFError as exc:
        raise FatbinError(f"malformed ELF file: {exc}") from exc


def _decompress(method: str, payload: bytes) -> bytes:
    if method == "zlib":
        return zlib.decompress(payload)
    try:
        from compression import zstd  # Python 3.14+
    except ImportError:
        try:
            import zstandard  # type: ignore[import-not-found]
        except ImportError as exc:
            raise FatbinError("the bundle is zstd-compressed: run with Python 3.14+ or install `zstandard`") from exc
        return zstandard.ZstdDecompressor().decompressobj().decompress(payload)
    return zstd.decompress(payload)


def _parse_uncompressed(data: bytes, start: int) -> tuple[tuple[Entry, ...], int]:
    """Entries of the bundle at `start` and its end offset."""
    pos = start + len(BUNDLE_MAGIC)
    count, = struct.unpack_from("<Q", data, pos)
    pos += 8
    entries, end = [], pos
    for _ in range(count):
        offset, size, triple_size = struct.unpack_from("<QQQ", data, pos)
        pos += 24
        triple = data[pos:pos + triple_size].decode()
        pos += triple_size
        entries.append(Entry(triple, size))
        end = max(end, start + offset + size)
    return tuple(entries), max(end, pos)


def _parse_compressed(data: bytes, start: int) -> tuple[str, bytes, int]:
    """(method, decompressed bundle, end offset) of a compressed bundle at `start`."""
    version, method_id = struct.unpack_from("<HH", data, start + 4)
    method = COMPRESSION_METHODS.get(method_id)
    if method is None:
        raise FatbinError(f"unknown compression method {method_id} at offset {start}")
    if version == 1:
        header, total = 4 + 4 + 4 + 8, None
    elif version == 2:
        total, = struct.unpack_from("<I", data, start + 8)
        header = 4 + 4 + 4 + 4 + 8
    elif version == 3:
        total, = struct.unpack_from("<Q", data, start + 8)
        header = 4 + 4 + 8 + 8 + 8
    else:
        raise FatbinError(f"compressed bundle format version {version} is not supported")
    payload_end = start + total if total else len(data)
    if method == "zlib":
        decompressor = zlib.decompressobj()
        inner = decompressor.decompress(data[start + header:payload_end])
        payload_end = payload_end - len(decompressor.unused_data)
    else:
        inner = _decompress(method, data[start + header:payload_end])
    return method, inner, payload_end


def bundles(section: bytes) -> list[Bundle]:
    """Every offload bundle in a `.hip_fatbin` section (the linker concatenates them, padded)."""
    found, pos = [], 0
    while True:
        candidates = [p for p in (section.find(BUNDLE_MAGIC, pos), section.find(COMPRESSED_MAGIC, pos)) if p >= 0]
        if not candidates:
            return found
        start = min(candidates)
        if section.startswith(BUNDLE_MAGIC, start):
            entries, pos = _parse_uncompressed(section, start)
            found.append(Bundle(start, None, entries))
        else:
            method, inner, pos = _parse_compressed(section, start)
            if not inner.startswith(BUNDLE_MAGIC):
                raise FatbinError(f"compressed bundle at offset {start} does not hold an offload bundle")
            entries, _ = _parse_uncompressed(inner, 0)
            found.append(Bundle(start, method, entries))


def read(path: Path) -> list[Bundle]:
    section = elf_section(path.read_bytes(), SECTION)
    return bundles(section) if section else []


def targets(found: list[Bundle]) -> list[str]:
    return sorted({e.target for b in found for e in b.entries if e.target})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, help="ELF objects or shared libraries")
    parser.add_argument("--json", action="store_true", help="print every bundle and entry as JSON")
    args = parser.parse_args(argv)
    status, report = 0, {}
    for path in args.files:
        try:
            found = read(path)
        except (OSError, FatbinError, struct.error) as exc:
            print(f"fatbin: {path}: {exc}", file=sys.stderr)
            return 2
        if not found:
            status = 1
        report[str(path)] = {"targets": targets(found), "bundles": [dataclasses.asdict(b) for b in found]}
        if not args.json:
            if found:
                kinds = {b.compressed or "uncompressed" for b in found}
                print(f"{path.name}: {len(found)} bundle(s), {'/'.join(sorted(kinds))}; targets {', '.join(targets(found))}")
            else:
                print(f"{path.name}: no HIP device code ({SECTION} section absent or empty)")
    if args.json:
        print(json.dumps(report, indent=2))
    return status


if __name__ == "__main__":
    sys.exit(main())
