"""Two wheels side by side: a published jax_rocm<N>_pjrt/plugin wheel and one of this project's.

    summary = read_wheel(path)                 # what one wheel is: names, tags, entry points, layout, ELF files
    side = SideBySide(read_wheel(theirs), read_wheel(ours))
    side.rows()                                # one Row per aspect: theirs, ours, and whether they agree
    print(side.table())                        # the same as a Markdown table

Pure: it reads the wheels (zip members; ELF files through pyelftools, with the reading that
wheel/private/runpath.py strips build-tree entries with) and says what it finds; what must agree
is the caller's to decide (tests/e2e/test_published_wheels.py). Names that differ by design are
normalised before two things are called the same, never hidden: `jax_rocm10_plugin` and
`jax_rocm7_plugin` are both `jax_rocm<N>_plugin`, `_prng.cpython-314-x86_64-linux-gnu.so` and
`_prng.so` both `_prng.so`, each wheel's `<name>-<version>.dist-info/` is `<dist-info>/`; a
Row keeps the raw values beside its verdict.

A RUNPATH entry is one of four kinds (`runpath_kind`):

  build_tree   a Bazel build-tree entry or a relative one (wheel/private/runpath.py's
               is_build_tree_entry, which the audit fails): meaningless once installed
  therock_pip  a folder of TheRock's pip packages (`_rocm_sdk_core`, `_rocm_sdk_libraries[_<family>]`),
               $ORIGIN-relative or absolute (/usr/local/lib/python3.X/dist-packages/...)
  origin       any other $ORIGIN-relative folder ($ORIGIN/../rocm/lib: a toolkit beside the wheel)
  absolute     any other absolute folder (/opt/rocm/lib)
"""

from __future__ import annotations

import configparser
import dataclasses
import email.parser
import json
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from ci_build_cli.wheel_audit import is_rocm_library
from runpath import is_build_tree_entry, read_dynamic

KINDS = ("build_tree", "therock_pip", "origin", "absolute")
_KIND_WORDS = {"build_tree": "build tree", "therock_pip": "TheRock pip", "origin": "$ORIGIN-relative", "absolute": "absolute"}

# jax-rocm10-pjrt / jax_rocm7_plugin: the ROCm major and the wheel's kind.
_DISTRIBUTION = re.compile(r"^jax[-_]rocm(\d+)[-_](pjrt|plugin)$")
_MAJOR_IN_NAMES = ((re.compile(r"jax([-_])rocm\d+([-_])"), r"jax\1rocm<N>\2"), (re.compile(r"xla_rocm\d+"), "xla_rocm<N>"))
_DIST_INFO = re.compile(r"^[^/]+\.dist-info/")
# A CPython extension module's ABI suffix (PEP 3149), which setuptools' wheels of JAX 0.12 leave off.
_ABI_SUFFIX = re.compile(r"\.(?:cpython-\d+t?-[A-Za-z0-9_]+-linux-gnu|abi3)\.so$")
_PIP_PACKAGE = re.compile(r"/_rocm_sdk_(core|libraries)(?:_([A-Za-z0-9_]+))?/")
_PYTHON_DIR = re.compile(r"/python(3\.\d+)/(site-packages|dist-packages)/")


def normalise_name(text: str) -> str:
    """The ROCm major out of a distribution, package or entry point name: jax_rocm<N>_plugin, xla_rocm<N>."""
    for pattern, replacement in _MAJOR_IN_NAMES:
        text = pattern.sub(replacement, text)
    return text


def normalise_member(path: str) -> str:
    """A member path with the parts that differ by design replaced: the ROCm major, the
    dist-info folder's name and version, a module's ABI suffix."""
    return _ABI_SUFFIX.sub(".so", normalise_name(_DIST_INFO.sub("<dist-info>/", path)))


def runpath_kind(entry: str) -> str:
    """One of KINDS (the module docstring says what each means)."""
    if is_build_tree_entry(entry):
        return "build_tree"
    if _PIP_PACKAGE.search(entry + "/"):
        return "therock_pip"
    return "origin" if entry.startswith(("$ORIGIN", "${ORIGIN}")) else "absolute"


@dataclasses.dataclass(frozen=True)
class RunpathPolicy:
    """What a RUNPATH searches, by kind of entry."""

    entries: tuple[str, ...]

    def of_kind(self, kind: str) -> tuple[str, ...]:
        return tuple(e for e in self.entries if runpath_kind(e) == kind)

    @property
    def order(self) -> tuple[str, ...]:
        """The kinds in the order the loader meets them, runs collapsed:
        ("origin", "therock_pip", "absolute") for $ORIGIN/../rocm/lib, then pip, then /opt/rocm/lib."""
        out: list[str] = []
        for entry in self.entries:
            kind = runpath_kind(entry)
            if not out or out[-1] != kind:
                out.append(kind)
        return tuple(out)

    @property
    def pip_families(self) -> tuple[str, ...]:
        """The GPU families of the `_rocm_sdk_libraries_<family>` entries, in order of first appearance."""
        found = [m.group(2) for e in self.entries for m in [_PIP_PACKAGE.search(e + "/")] if m and m.group(2)]
        return tuple(dict.fromkeys(found))

    @property
    def pip_site_dirs(self) -> tuple[str, ...]:
        """Which of site-packages and dist-packages the python3.X entries name (sorted)."""
        return tuple(sorted({m.group(2) for e in self.entries for m in [_PYTHON_DIR.search(e)] if m}))

    @property
    def python_versions(self) -> tuple[str, ...]:
        found = {m.group(1) for e in self.entries for m in [_PYTHON_DIR.search(e)] if m}
        return tuple(sorted(found, key=lambda v: tuple(map(int, v.split(".")))))

    def summary(self) -> str:
        """One line: counts by kind, their order, the pip packages' families and Pythons, the rest by name."""
        if not self.entries:
            return "none"
        counts = ", ".join(f"{_KIND_WORDS[k]} {len(self.of_kind(k))}" for k in KINDS if self.of_kind(k))
        parts = [f"{len(self.entries)} entries ({counts})", "order: " + " > ".join(_KIND_WORDS[k] for k in self.order)]
        if self.pip_families:
            parts.append(f"{len(self.pip_families)} pip families")
        if self.python_versions:
            parts.append(f"python{self.python_versions[0]}-{self.python_versions[-1]} {'+'.join(self.pip_site_dirs)}")
        parts += [f"{_KIND_WORDS[k]}: {' '.join(self.of_kind(k))}" for k in ("origin", "absolute", "build_tree") if self.of_kind(k)]
        return "; ".join(parts)


@dataclasses.dataclass(frozen=True)
class ElfMember:
    path: str  # in the wheel
    runpath: tuple[str, ...]  # DT_RUNPATH, in order
    rpath: tuple[str, ...]  # DT_RPATH (ignored by the loader where a RUNPATH exists)
    needed: tuple[str, ...]  # DT_NEEDED, in order

    @property
    def normalised(self) -> str:
        return normalise_member(self.path)

    @property
    def policy(self) -> RunpathPolicy:
        """The search path the loader uses: RUNPATH, else RPATH."""
        return RunpathPolicy(self.runpath or self.rpath)

    @property
    def rocm_needed(self) -> tuple[str, ...]:
        """The NEEDED sonames that ROCm provides (build/ci_build_cli/wheel_audit.py's list)."""
        return tuple(n for n in self.needed if is_rocm_library(n))

    @property
    def system_needed(self) -> tuple[str, ...]:
        return tuple(n for n in self.needed if not is_rocm_library(n))


@dataclasses.dataclass(frozen=True)
class EntryPoint:
    group: str
    name: str
    value: str

    def __str__(self) -> str:
        return f"[{self.group}] {self.name} = {self.value}"

    @property
    def normalised(self) -> str:
        return normalise_name(str(self))


@dataclasses.dataclass(frozen=True)
class WheelSummary:
    filename: str
    distribution: str  # METADATA's Name
    version: str
    tags: tuple[str, ...]  # WHEEL's Tag lines
    root_is_purelib: bool
    requires_python: str
    requires_dist: tuple[str, ...]
    entry_points: tuple[EntryPoint, ...]
    members: tuple[str, ...]  # every member path, sorted
    elf_members: tuple[ElfMember, ...]
    build_info: dict  # a build_info.json of this project's wheels ({} for others)

    @property
    def kind(self) -> str:
        """pjrt or plugin."""
        return _DISTRIBUTION.match(self.distribution.lower()).group(2)

    @property
    def rocm_major(self) -> int:
        return int(_DISTRIBUTION.match(self.distribution.lower()).group(1))

    @property
    def python_tag(self) -> str:
        return self.tags[0].split("-")[0] if self.tags else ""

    @property
    def layout(self) -> tuple[str, ...]:
        return tuple(sorted({normalise_member(m) for m in self.members}))

    @property
    def packages(self) -> tuple[str, ...]:
        """The folders holding Python code (outside dist-info), normalised: jax_plugins/xla_rocm<N>."""
        return tuple(sorted({m.rsplit("/", 1)[0] for m in self.layout if m.endswith(".py") and not m.startswith("<dist-info>")}))

    @property
    def extension_modules(self) -> tuple[str, ...]:
        """The names of the ELF members (no folder, no ABI suffix): _prng.so, xla_rocm_plugin.so."""
        return tuple(sorted(e.normalised.rsplit("/", 1)[-1] for e in self.elf_members))

    @property
    def stand_ins(self) -> tuple[str, ...]:
        """The normalised ELF members build_info.json labels as built from examples/ (stand-ins)."""
        artifacts = self.build_info.get("artifacts", {})
        return tuple(sorted(e.normalised for e in self.elf_members
                            if artifacts.get(e.path.rsplit("/", 1)[-1], {}).get("origin") == "examples"))

    def elf(self, normalised: str) -> ElfMember | None:
        return next((e for e in self.elf_members if e.normalised == normalised), None)

    @property
    def normalised_requirements(self) -> tuple[str, ...]:
        """Requires-Dist, sorted, the major normalised and the pin of the pjrt wheel's version as ==<version>."""
        out = {re.sub(r"==\S+", "==<version>", normalise_name(r)) if _pins_own_pjrt(r) else normalise_name(r)
               for r in self.requires_dist}
        return tuple(sorted(out))


def _pins_own_pjrt(requirement: str) -> bool:
    return bool(re.match(r"jax[-_]rocm\d+[-_]pjrt\s*==", requirement))


def is_elf_name(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base.endswith(".so") or ".so." in base


def _read_elf(archive: zipfile.ZipFile, name: str, scratch: Path) -> ElfMember | None:
    """The dynamic section of one member (extracted to scratch: pyelftools seeks, and a PJRT
    library is hundreds of MB); None if it is no ELF file."""
    with archive.open(name) as f:
        if f.read(4) != b"\x7fELF":
            return None
    target = scratch / "member.so"
    with archive.open(name) as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    with open(target, "rb") as f:
        dynamic = read_dynamic(f)
        values: dict[str, list[str]] = {"DT_RUNPATH": [], "DT_RPATH": [], "DT_NEEDED": []}
        for entry in dynamic.entries if dynamic else ():
            if entry.tag in values:
                text = dynamic.string(entry.value)
                values[entry.tag] += text.split(":") if entry.tag != "DT_NEEDED" else [text]
    return ElfMember(name, tuple(values["DT_RUNPATH"]), tuple(values["DT_RPATH"]), tuple(values["DT_NEEDED"]))


def _entry_points(text: str) -> tuple[EntryPoint, ...]:
    parser = configparser.RawConfigParser(delimiters=("=",))
    parser.optionxform = str  # entry point names are case-sensitive
    parser.read_string(text)
    return tuple(EntryPoint(group, name, value.strip()) for group in parser.sections() for name, value in parser.items(group))


def read_wheel(path: Path) -> WheelSummary:
    with zipfile.ZipFile(path) as archive:
        names = sorted(archive.namelist())
        dist_info = {n.split("/", 1)[0] for n in names if re.match(r"^[^/]+\.dist-info/METADATA$", n)}
        if len(dist_info) != 1:
            raise ValueError(f"{path.name}: {len(dist_info)} .dist-info folders with a METADATA")
        (info,) = dist_info
        meta = email.parser.Parser().parsestr(archive.read(f"{info}/METADATA").decode())
        wheel = email.parser.Parser().parsestr(archive.read(f"{info}/WHEEL").decode())
        entry_points = f"{info}/entry_points.txt"
        points = _entry_points(archive.read(entry_points).decode()) if entry_points in names else ()
        build_infos = [n for n in names if n.endswith("/build_info.json") and not n.startswith(info)]
        build_info = json.loads(archive.read(build_infos[0])) if build_infos else {}
        with tempfile.TemporaryDirectory(prefix="wheel-comparison-") as scratch:
            elves = [_read_elf(archive, n, Path(scratch)) for n in names if is_elf_name(n)]
    return WheelSummary(
        filename=path.name, distribution=meta["Name"], version=meta["Version"], tags=tuple(wheel.get_all("Tag") or ()),
        root_is_purelib=(wheel.get("Root-Is-Purelib", "").strip().lower() == "true"),
        requires_python=meta.get("Requires-Python", ""), requires_dist=tuple(meta.get_all("Requires-Dist") or ()),
        entry_points=points, members=tuple(names), elf_members=tuple(e for e in elves if e), build_info=build_info)


@dataclasses.dataclass(frozen=True)
class Row:
    aspect: str
    theirs: str
    ours: str
    agrees: bool  # after normalising what differs by design (the ROCm major, ABI suffixes ...)


def _join(values: Iterable[str]) -> str:
    values = list(values)
    return ", ".join(values) if values else "none"


@dataclasses.dataclass(frozen=True)
class SideBySide:
    theirs: WheelSummary
    ours: WheelSummary

    @property
    def layout_both(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.theirs.layout) & set(self.ours.layout)))

    @property
    def layout_theirs_only(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.theirs.layout) - set(self.ours.layout)))

    @property
    def layout_ours_only(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.ours.layout) - set(self.theirs.layout)))

    @property
    def elf_pairs(self) -> tuple[tuple[str, ElfMember | None, ElfMember | None], ...]:
        """(normalised path, theirs, ours) for every ELF member of either wheel."""
        paths = sorted({e.normalised for e in (*self.theirs.elf_members, *self.ours.elf_members)})
        return tuple((p, self.theirs.elf(p), self.ours.elf(p)) for p in paths)

    def runpath_missing_from_ours(self, normalised: str) -> tuple[str, ...]:
        """The entries of theirs's RUNPATH that ours does not search (normalised paths of both)."""
        theirs, ours = self.theirs.elf(normalised), self.ours.elf(normalised)
        if theirs is None or ours is None:
            return ()
        return tuple(e for e in theirs.policy.entries if e not in set(ours.policy.entries))

    def rows(self) -> list[Row]:
        t, o = self.theirs, self.ours
        norm = normalise_name
        rows = [
            Row("distribution", t.distribution, o.distribution, norm(t.distribution) == norm(o.distribution)),
            Row("version", t.version, o.version, t.version == o.version),
            Row("tags", _join(t.tags), _join(o.tags), t.tags == o.tags),
            Row("Root-Is-Purelib", str(t.root_is_purelib).lower(), str(o.root_is_purelib).lower(),
                t.root_is_purelib == o.root_is_purelib),
            Row("Requires-Python", t.requires_python or "none", o.requires_python or "none", t.requires_python == o.requires_python),
            Row("Requires-Dist", _join(t.normalised_requirements), _join(o.normalised_requirements),
                t.normalised_requirements == o.normalised_requirements),
            Row("entry points", _join(map(str, t.entry_points)), _join(map(str, o.entry_points)),
                sorted(e.normalised for e in t.entry_points) == sorted(e.normalised for e in o.entry_points)),
            Row("packages", _join(t.packages), _join(o.packages), t.packages == o.packages),
            Row("extension modules", _join(t.extension_modules), _join(o.extension_modules),
                t.extension_modules == o.extension_modules),
            Row("layout (normalised)", f"{len(t.layout)} members, only here: {_join(self.layout_theirs_only)}",
                f"{len(o.layout)} members, only here: {_join(self.layout_ours_only)}", t.layout == o.layout),
        ]
        for path, theirs, ours in self.elf_pairs:
            tp, op = (theirs.policy if theirs else None), (ours.policy if ours else None)
            rows.append(Row(f"RUNPATH {path}", tp.summary() if tp else "(no such file)", op.summary() if op else "(no such file)",
                            bool(tp and op and tp.entries == op.entries)))
            rows.append(Row(f"NEEDED {path}", _join(theirs.needed) if theirs else "(no such file)",
                            _join(ours.needed) if ours else "(no such file)", bool(theirs and ours and theirs.needed == ours.needed)))
        return rows

    def table(self) -> str:
        """rows() as Markdown: aspect | published | ours | agrees."""
        cell = lambda text: text.replace("|", "\\|")  # noqa: E731
        lines = [f"| aspect | {cell(self.theirs.filename)} | {cell(self.ours.filename)} | agrees |", "|---|---|---|---|"]
        lines += [f"| {cell(r.aspect)} | {cell(r.theirs)} | {cell(r.ours)} | {'yes' if r.agrees else 'no'} |" for r in self.rows()]
        return "\n".join(lines)


def pick_counterpart(theirs: WheelSummary, ours: Sequence[WheelSummary]) -> WheelSummary | None:
    """Of our wheels, the one to set beside theirs: the same kind, the same Python tag if we
    built one, else our newest Python's."""
    same_kind = [w for w in ours if w.kind == theirs.kind]
    if not same_kind:
        return None
    exact = [w for w in same_kind if w.python_tag == theirs.python_tag]
    return exact[0] if exact else max(same_kind, key=lambda w: _python_order(w.python_tag))


def _python_order(tag: str) -> tuple[int, int]:
    match = re.fullmatch(r"cp(\d)(\d+)", tag)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def compare_folders(theirs: Iterable[Path], ours: Iterable[Path]) -> list[SideBySide]:
    """Every wheel of theirs beside its counterpart of ours (pick_counterpart), theirs sorted by name."""
    our_summaries = [read_wheel(p) for p in sorted(ours)]
    out = []
    for path in sorted(theirs):
        summary = read_wheel(path)
        counterpart = pick_counterpart(summary, our_summaries)
        if counterpart is not None:
            out.append(SideBySide(summary, counterpart))
    return out
