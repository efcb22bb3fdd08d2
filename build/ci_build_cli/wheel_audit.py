"""Certifies the manylinux policy of our wheels with auditwheel, ROCm libraries excluded.

    PYTHONPATH=build:wheel/private python3 -m ci_build_cli.wheel_audit [--manylinux POLICY] [--json] WHEEL...

Runs in the tools venv (requirements-tools.txt; build/ci_build sets it up). For each
wheel, `auditwheel show --json` reports the libraries the wheel's ELF files need and
the versioned symbols they use. The ROCm runtime libraries (libamdhip64, rocBLAS,
MIOpen ...) are expected outside the wheel, from the ROCm install or the
`with-rocm` extra, so they are excluded, as `auditwheel repair --exclude` would.
What remains decides:

* any other library outside the manylinux whitelist fails, naming it;
* the policy is the one the symbol versions allow (auditwheel's sym_tag);
* with --manylinux=manylinux_2_28 (or 2_28), a wheel needing more fails, naming each
  symbol, its version and the file that uses it;
* a RUNPATH/RPATH entry into Bazel's build tree (_solib, runfiles, execution root, output
  base: wheel/private/runpath.py's is_build_tree_entry) fails, naming the file and the entry:
  it means nothing once installed (third_party/gpus/private/runpath.bzl says what is searched instead).

Exit status 0 when every wheel passes, 1 otherwise; the certified platform tag of
each wheel is printed (or emitted as JSON with --json), for build/ci_build to tag the
wheels with.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import io
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path

from elftools.elf.elffile import ELFFile  # pyelftools, which auditwheel itself uses

# What a build-tree RUNPATH entry is: one definition, shared with the tool that strips them when the wheel is packed.
from runpath import is_build_tree_entry

from .manylinux import policy_name  # the manylinux policy parser, shared with ci_build's --manylinux

# Sonames that come from ROCm, never from our wheels.
ROCM_LIBRARIES = (
    "libamdhip64.so*", "libhiprtc.so*", "libhsa-runtime64.so*", "libamd_comgr.so*",
    "librocblas.so*", "libhipblas.so*", "libhipblaslt.so*", "librocsolver.so*", "libhipsolver.so*",
    "librocsparse.so*", "libhipsparse.so*", "libhipsparselt.so*", "librocfft.so*", "libhipfft.so*",
    "librocrand.so*", "libhiprand.so*", "libMIOpen.so*", "librccl.so*", "libroctx64.so*",
    "libroctracer64.so*", "librocprofiler-sdk*.so*", "librocm_smi64.so*", "libamd_smi.so*",
)
ARCH = "x86_64"


class AuditError(RuntimeError):
    """auditwheel could not analyse a wheel."""


@dataclasses.dataclass(frozen=True, order=True)
class SymbolUse:
    file: str  # path inside the wheel
    symbol: str
    version: str  # e.g. GLIBC_2.38
    library: str  # e.g. libc.so.6

    def __str__(self) -> str:
        return f"{self.file} uses {self.symbol}@{self.version} ({self.library})"


@dataclasses.dataclass(frozen=True)
class Audit:
    wheel: str
    platform_tag: str  # the policy the symbols allow, e.g. manylinux_2_38_x86_64
    rocm_libraries: tuple[str, ...]  # excluded
    foreign_libraries: tuple[str, ...]  # neither whitelisted nor ROCm: a failure
    too_new: tuple[SymbolUse, ...] = ()  # only when a policy was requested
    requested: str = ""
    unsupported_isa: bool = False
    build_tree_runpaths: tuple[str, ...] = ()  # "FILE: RUNPATH entry ENTRY"

    @property
    def ok(self) -> bool:
        return not (self.foreign_libraries or self.too_new or self.unsupported_isa or self.build_tree_runpaths
                    or self.platform_tag == f"linux_{ARCH}")

    def problems(self) -> list[str]:
        out = []
        for lib in self.foreign_libraries:
            out.append(f"needs {lib}, which is neither in the manylinux whitelist nor a ROCm library: link it "
                       "statically or add it to ROCM_LIBRARIES in build/ci_build_cli/wheel_audit.py if ROCm provides it")
        if self.unsupported_isa:
            out.append("uses instructions beyond the x86_64 baseline (auditwheel's ISA check)")
        if self.platform_tag == f"linux_{ARCH}" and not self.too_new:
            out.append("uses symbol versions newer than every manylinux policy auditwheel knows")
        if self.build_tree_runpaths:
            out.append("searches Bazel's build tree at run time, which does not exist once the wheel is installed "
                       "(strip it when packing: wheel/private/runpath.py; what to search instead: "
                       "--@local_config_rocm//rocm:rocm_path_type):")
            out += [f"  {entry}" for entry in self.build_tree_runpaths]
        if self.too_new:
            out.append(f"needs symbols newer than {self.requested} allows (build on a system with that policy's glibc "
                       f"and libstdc++, e.g. a {self.requested} image, or ask for --manylinux={self.platform_tag}):")
            out += [f"  {use}" for use in self.too_new]
        return out


def is_rocm_library(soname: str, patterns: Iterable[str] = ROCM_LIBRARIES) -> bool:
    return any(fnmatch.fnmatchcase(soname, p) for p in patterns)


def load_policies() -> dict[str, dict[str, set[str]]]:
    """manylinux policy name -> {symbol prefix (GLIBC, GLIBCXX ...) -> allowed versions}, from auditwheel's data."""
    text = resources.files("auditwheel.policy").joinpath("manylinux-policy.json").read_text()
    return {p["name"]: {prefix: set(versions) for prefix, versions in p["symbol_versions"].get(ARCH, {}).items()}
            for p in json.loads(text)}


def disallowed(version: str, allowed: Mapping[str, set[str]]) -> bool:
    """Whether a symbol version such as GLIBC_2.38 is outside a policy's allowed versions."""
    prefix, _, number = version.partition("_")
    return prefix in allowed and number not in allowed[prefix]


def versioned_imports(elf_bytes: bytes) -> list[tuple[str, str, str]]:
    """(symbol, version, library) of every undefined, versioned dynamic symbol of an ELF file."""
    elf = ELFFile(io.BytesIO(elf_bytes))
    dynsym = elf.get_section_by_name(".dynsym")
    versym = elf.get_section_by_name(".gnu.version")
    verneed = elf.get_section_by_name(".gnu.version_r")
    if dynsym is None or versym is None or verneed is None:
        return []
    needed = {}
    for need, auxes in verneed.iter_versions():
        for aux in auxes:
            needed[aux["vna_other"]] = (aux.name, need.name)
    uses = []
    for index, symbol in enumerate(dynsym.iter_symbols()):
        if symbol["st_shndx"] != "SHN_UNDEF" or not symbol.name:
            continue
        ndx = versym.get_symbol(index)["ndx"]
        if isinstance(ndx, int) and ndx in needed:
            uses.append((symbol.name, *needed[ndx]))
    return uses


def runpath_entries(elf_bytes: bytes) -> list[tuple[str, str]]:
    """(RUNPATH or RPATH, entry) of an ELF file, in order."""
    elf = ELFFile(io.BytesIO(elf_bytes))
    dynamic = elf.get_section_by_name(".dynamic")
    if dynamic is None:
        return []
    out = []
    for tag in dynamic.iter_tags():
        if tag.entry.d_tag == "DT_RUNPATH":
            out += [("RUNPATH", e) for e in tag.runpath.split(":")]
        elif tag.entry.d_tag == "DT_RPATH":
            out += [("RPATH", e) for e in tag.rpath.split(":")]
    return out


def build_tree_runpaths(wheel: Path) -> tuple[str, ...]:
    """Every RUNPATH/RPATH entry of the wheel's ELF files that points into a Bazel build tree."""
    found = []
    for name, data in elf_files(wheel):
        found += [f"{name}: {kind} entry {entry}" for kind, entry in runpath_entries(data) if is_build_tree_entry(entry)]
    return tuple(found)


def elf_files(wheel: Path) -> list[tuple[str, bytes]]:
    """(path inside the wheel, bytes) of its shared objects."""
    out = []
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if not name.endswith(".so") and ".so." not in name:
                continue
            with archive.open(name) as f:
                if f.read(4) != b"\x7fELF":
                    continue
            out.append((name, archive.read(name)))
    return out


def symbol_uses(wheel: Path) -> list[SymbolUse]:
    return sorted({SymbolUse(name, *use) for name, data in elf_files(wheel) for use in versioned_imports(data)})


# `auditwheel show` with the ROCm libraries excluded as `auditwheel repair --exclude` excludes
# them (show has no --exclude; its analysis takes the same argument): neither resolved nor
# followed. Without it, on a machine whose loader finds ROCm (Debian's under /usr, /opt/rocm in
# ld.so.conf: ci_build --host), show walked into ROCm's own dependencies (libLLVM, libdrm ...)
# and their symbol versions, none of them the wheel's; where ROCm is not found (the sandboxed
# build's host) nothing changes.
_SHOW_EXCLUDING = """
import sys
patterns = frozenset(sys.argv.pop(1).split(","))
import auditwheel.wheel_abi as abi
analyze = abi.analyze_wheel_abi
def excluding(libc, arch, wheel, exclude, **kwargs):
    return analyze(libc, arch, wheel, frozenset(exclude) | patterns, **kwargs)
abi.analyze_wheel_abi = excluding
from auditwheel.main import main
sys.argv[0] = "auditwheel"
sys.exit(main())
"""


def needed_libraries(wheel: Path) -> set[str]:
    """The DT_NEEDED sonames of the wheel's ELF files."""
    needed = set()
    for _, data in elf_files(wheel):
        dynamic = ELFFile(io.BytesIO(data)).get_section_by_name(".dynamic")
        needed |= {tag.needed for tag in (dynamic.iter_tags() if dynamic else ()) if tag.entry.d_tag == "DT_NEEDED"}
    return needed


def auditwheel_show(wheel: Path) -> dict:
    result = subprocess.run([sys.executable, "-c", _SHOW_EXCLUDING, ",".join(ROCM_LIBRARIES), "show", "--json", str(wheel)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise AuditError(f"auditwheel show {wheel.name} failed: {(result.stderr or result.stdout).strip()}")
    return json.loads(result.stdout)


def audit(wheel: Path, requested: str | None = None, show: Mapping | None = None,
          policies: Mapping[str, Mapping[str, set[str]]] | None = None) -> Audit:
    """The audit of one wheel; `show` and `policies` are auditwheel's answers (fetched when None)."""
    show = auditwheel_show(wheel) if show is None else show
    external = sorted(show.get("external_libs", {}))
    too_new: tuple[SymbolUse, ...] = ()
    requested_name = ""
    if requested:
        requested_name = policy_name(requested)
        policies = load_policies() if policies is None else policies
        if requested_name not in policies:
            raise ValueError(f"auditwheel knows no policy {requested_name}; known: {', '.join(sorted(policies))}")
        allowed = policies[requested_name]
        too_new = tuple(u for u in symbol_uses(wheel) if disallowed(u.version, allowed))
    return Audit(
        wheel=wheel.name,
        platform_tag=show["sym_tag"],
        # Excluded from show's answer: those the wheel's files need (and any show still names).
        rocm_libraries=tuple(sorted({lib for lib in [*external, *needed_libraries(wheel)] if is_rocm_library(lib)})),
        foreign_libraries=tuple(lib for lib in external if not is_rocm_library(lib)),
        too_new=too_new,
        requested=requested_name,
        unsupported_isa=bool(show.get("unsupported_isa")),
        build_tree_runpaths=build_tree_runpaths(wheel),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="Run by build/ci_build dist_wheels; see this file's docstring.")
    parser.add_argument("wheels", nargs="+", type=Path, metavar="WHEEL")
    parser.add_argument("--manylinux", metavar="POLICY",
                        help="fail unless every wheel meets this policy, e.g. manylinux_2_28 (default: report the best)")
    parser.add_argument("--json", action="store_true", help="print one JSON object: wheel -> audit")
    args = parser.parse_args(argv)
    try:
        audits = [audit(w, args.manylinux) for w in args.wheels]
    except (AuditError, ValueError) as e:
        print(f"wheel_audit: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({a.wheel: dataclasses.asdict(a) | {"ok": a.ok, "problems": a.problems()} for a in audits},
                         indent=2, default=str))
    for a in audits:
        if a.ok:
            if not args.json:
                excluded = f" (ROCm libraries excluded: {', '.join(a.rocm_libraries)})" if a.rocm_libraries else ""
                print(f"{a.wheel}: {a.platform_tag}{excluded}")
        else:
            print(f"wheel_audit: {a.wheel}:\n  " + "\n  ".join(a.problems()), file=sys.stderr)
    return 0 if all(a.ok for a in audits) else 1


if __name__ == "__main__":
    sys.exit(main())
