#!/usr/bin/env python3
"""Writes one wheel (PEP 427/491, metadata 2.4) from a JSON spec; run by //wheel:defs.bzl.

    wheel_builder.py --spec SPEC.json --out DIR/<name>-<version>-<tags>.whl [--description-out FILE.json]
    wheel_builder.py --spec SPEC.json --out-dir DIR                          # the same, named here

The spec (written by wheel/private/wheel.bzl) names the distribution, the version, the
tags, the metadata and the files with their places in the wheel. The version and the file
name are wheel/private/version.bzl's, made at analysis (so the rule declares its .whl);
this tool holds them to packaging's word and owns the rest of the format:

* the version must be PEP 440 in packaging's canonical form, and the file the rule
  declared must have the name the format gives the spec (else the Starlark and packaging
  disagree: the error says so);
* names, requirements and tags by packaging's rules: the distribution's and extras'
  names checked and normalised (PEP 503, 685), Requires-Dist and Requires-Python
  parsed (PEP 508, 440) and written by packaging, an extra's condition added to a
  requirement's marker, and a Tag line in WHEEL for every tag of a compressed set;
* deterministic archives: entries in sorted order with the .dist-info last and RECORD
  last of all, one timestamp (SOURCE_DATE_EPOCH or 1980-01-01), modes 0644/0755, so
  the same inputs give byte-identical wheels;
* streaming: every file is read once in 1 MiB blocks, hashed for RECORD while it is
  deflated into the archive, so a 500 MB library never sits in memory;
* parallel: large files are deflated in 256 KiB pieces on every core (up to 64 threads,
  --workers to choose), each piece primed with the 32 KiB before it (as pigz does), so
  the archive is as small as a serial deflate's and the same bytes whatever the number
  of workers;
* bounded memory: at most IN_FLIGHT_BUDGET bytes (32 MiB) of a file are read but not yet
  written at any time, whatever the number of workers (the budget, not the worker
  count, limits how far reading runs ahead of writing): peak RSS is about 60 MB.

It needs `packaging` (22 or later): Debian's python3-packaging in the sandbox root
(sandbox/layers.py), where Bazel runs it, and requirements-test.txt's pin
in the test venv.
"""

from __future__ import annotations

import argparse
import base64
import collections
import concurrent.futures
import csv
import ctypes
import dataclasses
import hashlib
import io
import json
import os
import posixpath
import re
import sys
import time
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from packaging import version as pep440
from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import parse_tag
from packaging.utils import NormalizedName, canonicalize_name

CHUNK = 1 << 20
EPOCH_1980 = 315532800  # the earliest time a zip entry can carry
EPOCH_2107 = 4354819199  # the latest: 2107-12-31 23:59:59
# zlib level: 6 is zlib's default and what `wheel`/setuptools write, so our wheels are
# no larger than upstream's; bench/bench_wheel.py reports time and size.
DEFAULT_COMPRESSLEVEL = 6
GENERATOR = "jax-rocm-build"
# Unit of parallel deflate; part of the output's identity, never vary it with the machine.
# Small enough that IN_FLIGHT_BUDGET holds two pieces for each of MAX_WORKERS threads
# (128 pieces), large enough that the per-piece cost (a task, a primed compressor, a
# sync flush) is noise; the archive is no larger than with 4 MiB pieces.
PIECE = 256 << 10
PARALLEL_MIN_SIZE = 2 * PIECE
# Bytes of a file read but not yet written, at most: the memory bound of packing,
# independent of the number of workers.
IN_FLIGHT_BUDGET = 32 << 20
# Threads, at most: two pieces in the budget per thread, so one can wait to be written
# (in order) while the next deflates; each thread also holds about 1 MiB of zlib state
# and output buffers, so this cap keeps the total under 128 MB on any machine.
MAX_WORKERS = IN_FLIGHT_BUDGET // PIECE // 2
WINDOW = 32 << 10  # deflate's history window: how much of the previous piece primes the next

# One tag, or a set of them joined by '.' (PEP 425); packaging's parse_tag takes any characters.
_TAG = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)*$")


class SpecError(ValueError):
    """The spec asks for something the wheel format or PEP 440 cannot express."""


def _name(text: str, what: str) -> NormalizedName:
    """A distribution's or an extra's name, normalised (PEP 503, PEP 685); SpecError unless valid (PEP 508).

    packaging 22 has no canonicalize_name(validate=True); its requirement parser checks a bare name as well.
    """
    try:
        valid = Requirement(text).name == text
    except InvalidRequirement:
        valid = False
    if not valid:
        raise SpecError(f"{what} {text!r} is not a valid name: letters and digits, with - _ . between them")
    return canonicalize_name(text)


def _check_version(version: str) -> None:
    """SpecError unless version is PEP 440 in its normal form (no leading zeros, '.' separators,
    lower case). wheel/private/version.bzl composed it and checked the same at analysis: this is
    packaging's word on it, so the file name, METADATA and pip agree."""
    try:
        normal = str(pep440.Version(version))
    except (pep440.InvalidVersion, TypeError):
        raise SpecError(f"version {version!r} is not a PEP 440 version") from None
    if normal != version:
        raise SpecError(f"version {version!r} is not in PEP 440's canonical form (packaging writes it {normal})")


@dataclasses.dataclass(frozen=True)
class FileEntry:
    src: Path
    dest: str  # path inside the wheel, '/'-separated
    executable: bool = False


@dataclasses.dataclass(frozen=True)
class WheelSpec:
    distribution: str  # e.g. jax_rocm7_pjrt
    version: str  # PEP 440, canonical (wheel/private/version.bzl made it)
    summary: str
    files: tuple[FileEntry, ...]
    python_tag: str = "py3"
    abi_tag: str = "none"
    platform_tag: str = "any"
    description: str = ""  # markdown
    requires_python: str = ""
    requires_dist: tuple[str, ...] = ()  # "{version}" is replaced by the wheel's version
    extras: Mapping[str, Sequence[str]] = dataclasses.field(default_factory=dict)
    classifiers: tuple[str, ...] = ()
    license: str = ""  # SPDX expression
    home_page: str = ""
    author: str = ""
    entry_points: Mapping[str, Mapping[str, str]] = dataclasses.field(default_factory=dict)
    root_is_purelib: bool = False
    build_info_dest: str = ""  # where build_info.json goes
    build_info: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # complete_build_info's

    def __post_init__(self) -> None:
        _check_version(self.version)  # once: every name and file below writes it as it is

    @property
    def project_name(self) -> str:
        """The normalised name METADATA carries (PEP 503): jax-rocm7-pjrt."""
        return _name(self.distribution, "distribution")

    @property
    def file_stem(self) -> str:
        """The escaped name in file names (PEP 427/491): jax_rocm7_pjrt."""
        return self.project_name.replace("-", "_")

    @property
    def tag(self) -> str:
        for tag in (self.python_tag, self.abi_tag, self.platform_tag):
            if not _TAG.match(tag):
                raise SpecError(f"wheel tag {tag!r} is not a-z 0-9 _, with '.' between the tags of a set")
        return f"{self.python_tag}-{self.abi_tag}-{self.platform_tag}"

    def filename(self) -> str:
        # The local version's '+' stays; '-' cannot occur in a PEP 440 version.
        return f"{self.file_stem}-{self.version}-{self.tag}.whl"

    @property
    def dist_info(self) -> str:
        return f"{self.file_stem}-{self.version}.dist-info"


def stand_in_note(artifacts: Mapping[str, Mapping[str, Any]]) -> str:
    """The description's paragraph naming the artifacts built from stand-ins ('' if none)."""
    stand_ins = sorted(name for name, a in artifacts.items() if a.get("origin") == "examples")
    if not stand_ins:
        return ""
    return ("\n## Stand-ins inside\n\nThis wheel holds code that is neither JAX's nor XLA's: "
            + ", ".join(f"`{name}`" for name in stand_ins)
            + (" was" if len(stand_ins) == 1 else " were")
            + " built from jax-rocm-build's `examples/` stand-ins, written for offline builds and tests: "
            "they answer the APIs JAX calls with small implementations of their own or an honest error. "
            "`build_info()` lists the stand-in targets.\n")


def complete_build_info(build_info: Mapping[str, Any], base_dir: Path, version: str) -> dict[str, Any]:
    """build_info.json's contents: what wheel.bzl knew at analysis ("data"), completed with
    what only this action can know: the source trees' descriptions that repository rules
    wrote (source_info_files, replacing the pins' entries) and the wheel's PEP 440 version."""
    info = dict(build_info.get("data", {}))
    if build_info.get("source_info_files"):
        info["sources"] = {**info.get("sources", {}), **{
            name: json.loads((base_dir / path).read_text()) for name, path in sorted(build_info["source_info_files"].items())}}
    info["plugin_version"] = version
    return info


def spec_from_json(data: Mapping[str, Any], base_dir: Path = Path(".")) -> WheelSpec:
    """The spec of wheel/private/wheel.bzl; relative paths are taken from base_dir."""
    description = ""
    if data.get("description_file"):
        description = (base_dir / data["description_file"]).read_text(encoding="utf-8")
    version = data["version"]  # WheelSpec checks it
    build_info = data.get("build_info") or {}
    info = complete_build_info(build_info, base_dir, version) if build_info else {}
    description += stand_in_note(info.get("artifacts", {}))
    return WheelSpec(
        distribution=data["distribution"],
        version=version,
        summary=data["summary"],
        files=tuple(FileEntry(base_dir / f["src"], f["dest"], bool(f.get("executable"))) for f in data["files"]),
        python_tag=data.get("python_tag", "py3"),
        abi_tag=data.get("abi_tag", "none"),
        platform_tag=data.get("platform_tag", "any"),
        description=description,
        requires_python=data.get("requires_python", ""),
        requires_dist=tuple(data.get("requires_dist", ())),
        extras={k: tuple(v) for k, v in sorted(data.get("extras", {}).items())},
        classifiers=tuple(data.get("classifiers", ())),
        license=data.get("license", ""),
        home_page=data.get("home_page", ""),
        author=data.get("author", ""),
        entry_points={g: dict(p) for g, p in data.get("entry_points", {}).items()},
        root_is_purelib=bool(data.get("root_is_purelib", False)),
        build_info_dest=build_info.get("dest", ""),
        build_info=info,
    )


def _requirement(text: str, version: str) -> Requirement:
    """A Requires-Dist entry with "{version}" replaced, parsed (PEP 508); SpecError names it if it is not one."""
    text = text.replace("{version}", version)
    try:
        return Requirement(text)
    except InvalidRequirement as e:
        raise SpecError(f"requirement {text!r} is not a PEP 508 requirement: {e}") from e


def _header_value(key: str, value: str) -> str:
    if "\n" in value or "\r" in value:
        raise SpecError(f"metadata field {key} must be one line, got {value!r}")
    return f"{key}: {value}\n"


def metadata_text(spec: WheelSpec) -> str:
    """METADATA (core metadata 2.4) with the description as the message body."""
    version = spec.version
    fields: list[tuple[str, str]] = [
        ("Metadata-Version", "2.4"),
        ("Name", spec.project_name),
        ("Version", version),
        ("Summary", spec.summary),
    ]
    if spec.home_page:
        fields.append(("Home-page", spec.home_page))
    if spec.author:
        fields.append(("Author", spec.author))
    if spec.license:
        fields.append(("License-Expression", spec.license))
    fields += [("Classifier", c) for c in spec.classifiers]
    if spec.requires_python:
        try:
            fields.append(("Requires-Python", str(SpecifierSet(spec.requires_python))))
        except InvalidSpecifier as e:
            raise SpecError(f"Requires-Python {spec.requires_python!r} is not a version specifier (PEP 440): {e}") from e
    fields += [("Requires-Dist", str(_requirement(r, version))) for r in spec.requires_dist]
    for extra, requirements in spec.extras.items():
        extra = _name(extra, "extra")
        fields.append(("Provides-Extra", extra))
        for text in requirements:
            requirement = _requirement(text, version)
            condition = f'extra == "{extra}"'  # a valid name needs no escaping
            requirement.marker = Marker(f"({requirement.marker}) and {condition}" if requirement.marker else condition)
            fields.append(("Requires-Dist", str(requirement)))
    if spec.description:
        fields.append(("Description-Content-Type", "text/markdown"))
    text = "".join(_header_value(k, v) for k, v in fields)
    if spec.description:
        text += "\n" + spec.description.rstrip("\n") + "\n"
    return text


def wheel_text(spec: WheelSpec) -> str:
    """WHEEL, with a Tag line for each tag a compressed tag set (py2.py3-none-any) stands for, as PEP 427 asks."""
    return (
        "Wheel-Version: 1.0\n"
        f"Generator: {GENERATOR}\n"
        f"Root-Is-Purelib: {'true' if spec.root_is_purelib else 'false'}\n"
        + "".join(f"Tag: {tag}\n" for tag in sorted(map(str, parse_tag(spec.tag))))
    )


def entry_points_text(entry_points: Mapping[str, Mapping[str, str]]) -> str:
    sections = []
    for group in sorted(entry_points):
        lines = [f"{name} = {target}" for name, target in sorted(entry_points[group].items())]
        sections.append(f"[{group}]\n" + "\n".join(lines) + "\n")
    return "\n".join(sections)


def build_info_text(spec: WheelSpec) -> str:
    return json.dumps(spec.build_info, indent=2, sort_keys=True) + "\n"


def version_module_text(spec: WheelSpec) -> str:
    """version.py beside build_info.json: jaxlib's plugin_support imports `<package>.version`
    and reads __version__, as from the published wheels."""
    return (
        '"""Written by jax-rocm-build: this wheel\'s version. build_info.json says more."""\n\n'
        f"__version__ = {spec.version!r}\n"
        # X.Y.Z: the release JAX's version is (base_version: the release part alone here, no epoch).
        f"_release_version = {pep440.Version(spec.version).base_version!r}\n"
    )


def record_hash(digest: bytes) -> str:
    """RECORD's hash form: sha256=<urlsafe base64 without padding>."""
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def source_date_epoch(environ: Mapping[str, str]) -> int:
    """SOURCE_DATE_EPOCH clamped to what zip can store; 1980-01-01 when unset."""
    value = environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not value:
        return EPOCH_1980
    if not value.isdigit():
        raise SpecError(f"SOURCE_DATE_EPOCH={value!r} is not a number of seconds")
    return min(max(int(value), EPOCH_1980), EPOCH_2107)


def _check_dest(dest: str) -> str:
    parts = dest.split("/")
    if dest.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in dest:
        raise SpecError(f"file destination {dest!r} must be a relative '/'-separated path without '.' or '..'")
    return dest


@dataclasses.dataclass(frozen=True)
class _Entry:
    name: str
    executable: bool
    src: Path | None = None
    data: bytes | None = None


def plan_entries(spec: WheelSpec) -> list[_Entry]:
    """Every archive entry in the order written: payload sorted, then .dist-info, RECORD last."""
    payload: dict[str, _Entry] = {}

    def add(entry: _Entry) -> None:
        _check_dest(entry.name)
        if entry.name in payload:
            raise SpecError(f"two files go to {entry.name} in the wheel")
        if entry.name.split("/")[0].endswith((".dist-info", ".data")):
            raise SpecError(f"{entry.name}: files may not be placed in the wheel's metadata folders")
        payload[entry.name] = entry

    for f in spec.files:
        add(_Entry(f.dest, f.executable, src=f.src))
    if spec.build_info_dest:
        add(_Entry(spec.build_info_dest, False, data=build_info_text(spec).encode()))
        add(_Entry(posixpath.join(posixpath.dirname(spec.build_info_dest), "version.py"), False,
                   data=version_module_text(spec).encode()))
    dist_info = spec.dist_info
    meta = [_Entry(f"{dist_info}/METADATA", False, data=metadata_text(spec).encode("utf-8")),
            _Entry(f"{dist_info}/WHEEL", False, data=wheel_text(spec).encode())]
    if spec.entry_points:
        meta.append(_Entry(f"{dist_info}/entry_points.txt", False, data=entry_points_text(spec.entry_points).encode()))
    return [payload[k] for k in sorted(payload)] + sorted(meta, key=lambda e: e.name)


def _deflate_piece(data: bytes, history: bytes, level: int, last: bool) -> tuple[bytes, bytes]:
    """Raw deflate of one piece, in two parts to be written one after the other (not joined
    here: that would copy the piece once more per worker); a sync flush ends the piece on a
    byte boundary so pieces concatenate."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY, history) \
        if history else zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data), compressor.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)


class ParallelDeflate:
    """The compress()/flush() interface of a zlib compressor, deflating PIECEs on a thread pool.

    zlib releases the GIL while it works, so threads use every core. Pieces are written
    in order; a piece counts against `budget` from the moment it is cut from the input
    until its deflated bytes are handed back to be written, and compress() waits for the
    oldest piece before going over the budget. So at most `budget` bytes of input (or
    their deflated form) are held, whatever the number of workers. `peak_in_flight`
    records the most ever held, for tests and benchmarks.
    """

    def __init__(self, level: int, pool: concurrent.futures.Executor, budget: int = IN_FLIGHT_BUDGET):
        if budget < PIECE:
            raise ValueError(f"an in-flight budget of {budget} bytes cannot hold one {PIECE}-byte piece")
        self._level, self._pool, self._budget = level, pool, budget
        self._buffer = bytearray()
        self._history = b""
        self._pending: collections.deque[tuple[int, concurrent.futures.Future[tuple[bytes, bytes]]]] = \
            collections.deque()
        self.in_flight = 0
        self.peak_in_flight = 0

    def _submit(self, piece: bytes, last: bool, out: bytearray) -> None:
        while self._pending and self.in_flight + len(piece) > self._budget:
            self._pop(out)
        self.in_flight += len(piece)
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        self._pending.append((len(piece), self._pool.submit(_deflate_piece, piece, self._history, self._level, last)))
        self._history = piece[-WINDOW:]

    def _pop(self, out: bytearray) -> None:
        size, future = self._pending.popleft()
        for part in future.result():  # appended, not joined at the end: each piece goes once copied
            out += part
        self.in_flight -= size

    # compress() and flush() return a bytearray: zipfile only takes its len() and writes it.
    def compress(self, data: bytes) -> bytearray:
        if not isinstance(data, bytes):  # a view or bytearray may change once we return: pieces outlive the call
            data = bytes(data)
        out = bytearray()
        start = 0
        if self._buffer:  # complete the piece begun by an earlier call
            start = min(PIECE - len(self._buffer), len(data))
            self._buffer += data[:start]
            if len(self._buffer) == PIECE:
                self._submit(bytes(self._buffer), False, out)
                self._buffer.clear()
        while len(data) - start >= PIECE:
            self._submit(data[start:start + PIECE], False, out)
            start += PIECE
        self._buffer += data[start:]
        while self._pending and self._pending[0][1].done():
            self._pop(out)
        return out

    def flush(self) -> bytearray:
        out = bytearray()
        self._submit(bytes(self._buffer), True, out)
        self._buffer.clear()
        while self._pending:
            self._pop(out)
        return out


def default_workers() -> int:
    """Every core this process may run on."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if count is not None:
        return count() or 1
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _zipinfo(name: str, executable: bool, timestamp: int, size: int, compresslevel: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=time.gmtime(timestamp)[:6])
    # An entry written from a ZipInfo takes the ZipInfo's level, not the archive's;
    # the attribute is public from Python 3.13, private before.
    setattr(info, "compress_level" if hasattr(info, "compress_level") else "_compresslevel", compresslevel)
    info.create_system = 3  # unix, so the mode bits below mean something to unzip/pip
    info.external_attr = ((0o100755 if executable else 0o100644) & 0xFFFF) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    info.file_size = size
    return info


def write_wheel(spec: WheelSpec, out_dir: Path, *, timestamp: int = EPOCH_1980,
                compresslevel: int = DEFAULT_COMPRESSLEVEL, workers: int | None = None) -> Path:
    """Writes the wheel into out_dir and returns its path; workers=None uses every core.

    Memory stays bounded (CHUNK for reading, IN_FLIGHT_BUDGET for deflate, about 1 MiB per
    thread, threads capped at MAX_WORKERS) whatever the files' sizes and the number of
    workers; the bytes written do not depend on `workers`.
    """
    entries = plan_entries(spec)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / spec.filename()
    partial = path.with_name(path.name + ".partial")
    records: list[tuple[str, str, str]] = []
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise SpecError(f"workers must be at least 1, got {workers}")
    # Large files always go through ParallelDeflate, even on one core, so that the
    # bytes never depend on the machine.
    pool = concurrent.futures.ThreadPoolExecutor(min(workers, MAX_WORKERS))
    try:
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=compresslevel) as archive:
            for entry in entries:
                digest = hashlib.sha256()
                if entry.data is not None:
                    size = len(entry.data)
                    stream: io.BufferedIOBase = io.BytesIO(entry.data)
                else:
                    try:
                        size = entry.src.stat().st_size
                        stream = open(entry.src, "rb")
                    except OSError as e:
                        raise SpecError(f"{entry.name}: cannot read its source {entry.src}: {e.strerror}") from e
                info = _zipinfo(entry.name, entry.executable, timestamp, size, compresslevel)
                with stream, archive.open(info, "w", force_zip64=size > zipfile.ZIP64_LIMIT // 2) as sink:
                    # zipfile has no public hook for the compressor; it keeps it in
                    # _compressor (3.6 to 3.14) and only calls compress() and flush().
                    if size >= PARALLEL_MIN_SIZE and hasattr(sink, "_compressor"):
                        sink._compressor = ParallelDeflate(compresslevel, pool, IN_FLIGHT_BUDGET)
                    written = 0
                    while block := stream.read(CHUNK):
                        digest.update(block)
                        sink.write(block)
                        written += len(block)
                if written != size:
                    raise SpecError(f"{entry.src} changed size while being packed ({size} -> {written} bytes)")
                records.append((entry.name, record_hash(digest.digest()), str(size)))
            record_name = f"{spec.dist_info}/RECORD"
            text = io.StringIO()
            writer = csv.writer(text, lineterminator="\n")
            writer.writerows(records)
            writer.writerow((record_name, "", ""))
            archive.writestr(_zipinfo(record_name, False, timestamp, 0, compresslevel), text.getvalue().encode())
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
        pool.shutdown(cancel_futures=True)
    return path


def wheel_description(spec: WheelSpec, wheel: Path) -> dict[str, Any]:
    """What a build's consumer needs of the wheel written at `wheel`, as wheel.bzl's RocmWheelInfo
    names it: the file (as the action saw its path: relative to Bazel's execution root), its
    name's pieces, and its build_info.json. ci_build reads this, found by Bazel (`cquery
    --output=files --output_groups=rocm_wheel_info`), instead of looking for wheels by name."""
    return {
        "wheel": str(wheel),
        "distribution": spec.project_name,
        "version": spec.version,
        "python_tag": spec.python_tag,
        "abi_tag": spec.abi_tag,
        "platform_tag": spec.platform_tag,
        "build_info": spec.build_info,
    }


def _fix_malloc_mmap_threshold() -> None:
    """Keeps glibc from growing its mmap threshold as pieces are freed (its default), so every
    piece-sized buffer is mapped and unmapped on its own and RSS follows the bytes in flight.

    Otherwise freed pieces raise the threshold above PIECE, later pieces come from the
    per-thread heaps, and their fragmentation adds tens of MB that grow with the number of
    threads. Process-wide, so only the command line does it; without glibc it does nothing.
    """
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    M_MMAP_THRESHOLD = -3
    mallopt(M_MMAP_THRESHOLD, 128 << 10)  # glibc's initial value, now fixed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Write one wheel from a JSON spec (see wheel/private/wheel.bzl for the spec's fields).")
    parser.add_argument("--spec", type=Path, required=True, help="the JSON spec")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, metavar="FILE.whl",
                       help="the .whl to write, as the rule declared it: its name must be the one the format gives the "
                            "spec's name, version and tags (wheel/private/version.bzl made it at analysis)")
    where.add_argument("--out-dir", type=Path, help="folder the .whl is written into, under the name the format gives it")
    parser.add_argument("--description-out", type=Path,
                        help="also write the wheel's description (wheel_description: its path, name, version, tags, "
                             "build_info.json) as JSON to this file")
    parser.add_argument("--base-dir", type=Path, default=Path("."),
                        help="folder the spec's relative paths start from (default: the current one, Bazel's execroot)")
    parser.add_argument("--quiet", action="store_true", help="do not print the wheel's path (Bazel actions stay silent)")
    parser.add_argument("--compresslevel", type=int, default=DEFAULT_COMPRESSLEVEL, choices=range(0, 10),
                        metavar="0-9", help=f"zlib level (default {DEFAULT_COMPRESSLEVEL})")
    parser.add_argument("--workers", type=int, default=None,
                        help="threads deflating large files (default: every core this process may use); "
                             "the wheel's bytes do not depend on it")
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be at least 1")
    _fix_malloc_mmap_threshold()
    try:
        spec = spec_from_json(json.loads(args.spec.read_text()), args.base_dir)
        if args.out and args.out.name != spec.filename():
            raise SpecError(f"the rule declared the wheel {args.out.name}, but the format names it {spec.filename()} "
                            "(PEP 427/491 with packaging's normal forms): wheel/private/version.bzl and this tool disagree")
        path = write_wheel(spec, args.out.parent if args.out else args.out_dir, timestamp=source_date_epoch(os.environ),
                           compresslevel=args.compresslevel,
                           workers=args.workers)
        if args.description_out:
            args.description_out.write_text(json.dumps(wheel_description(spec, path), indent=2, sort_keys=True) + "\n")
    except (SpecError, KeyError, TypeError, ValueError, OSError) as e:  # JSONDecodeError is a ValueError
        print(f"wheel_builder: {args.spec}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
