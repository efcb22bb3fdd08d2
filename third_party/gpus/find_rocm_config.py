#!/usr/bin/env python3
"""Finds a ROCm toolkit and says exactly what it is, as JSON.

    python3 third_party/gpus/find_rocm_config.py --rocm-path ROOT [--format=json|text]
    python3 third_party/gpus/find_rocm_config.py            # $ROCM_PATH, /opt/rocm, /opt/rocm-* (newest first), /usr

Four layouts are understood:
  therock      a TheRock release tarball, extracted: lib/llvm/bin/clang,
               share/therock/therock_manifest.json
  therock_pip  TheRock's pip packages: the root `rocm-sdk path --root` prints,
               site-packages/_rocm_sdk_core (runtime libraries), beside
               _rocm_sdk_devel (headers, lib/llvm/bin/clang, bin/hipcc) and
               _rocm_sdk_libraries[_<family>] (the math libraries; the family,
               e.g. gfx94X_dcgpu, is the TheRock family of their device code)
  opt_rocm   a classic /opt/rocm-X.Y.Z install: llvm/bin/clang, .info/version
  multiarch  a distribution's packages under /usr: include/hip, lib/<triplet>/libamdhip64.so,
             lib/llvm-N/bin/clang (Debian, Ubuntu)

TheRock's multi-arch releases (kernel packs: each library's device code apart, in
.kpack/<artifact>_lib_<target>.kpack; TheRock's RELEASES.md) come in the therock and
therock_pip layouts (for pip, `rocm-sdk path --root` prints _rocm_sdk_devel, the packs
lie in _rocm_sdk_libraries/.kpack/); the targets such a toolkit serves are those its
packs hold. The legacy per-family tarballs hold device code for their family's targets.

Versions come from the files the toolkit installs (TheRock's manifest,
.info/version, rocm_version.h, hip_version.h, CMake package version files,
version headers, library file names), never from the folder's name. Anything
it cannot parse is reported under "warnings", never a crash.

Stdlib only: the repository rule in rocm_configure.bzl runs it.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence

# The layouts layout_kind tells apart, as rocm_config.json's `layout` and build_info.json's
# `rocm_layout` name them; the code names them only through these constants.
LAYOUTS = THEROCK, THEROCK_PIP, OPT_ROCM, MULTIARCH = ("therock", "therock_pip", "opt_rocm", "multiarch")
# TheRock's pip packages, siblings in one site-packages (`rocm-sdk path --root` is the core's).
PIP_CORE, PIP_DEVEL, PIP_LIBRARIES = "_rocm_sdk_core", "_rocm_sdk_devel", "_rocm_sdk_libraries"
MULTIARCH_TRIPLETS = ("x86_64-linux-gnu", "aarch64-linux-gnu")


# How a user sets ROCM_PATH where the finder runs: Bazel's repository rule, this script (ci_build says its own).
HOW_TO_SET_ROCM_PATH = "in Bazel --repo_env=ROCM_PATH=DIR, to this script --rocm-path DIR"


class RocmNotFound(Exception):
    """A required piece is missing; the message says what was searched where and what to do."""


# --------------------------------------------------------------------------
# Version parsing: pure functions over file contents, total on any input.
# --------------------------------------------------------------------------

_VERSION_RE = re.compile(r"^\d+(\.\d+){0,3}([a-z]+\d*|[-+~][0-9A-Za-z.+~-]*)?$")


def parse_dotted(text: str) -> tuple[int, int, int] | None:
    """'7.2.4' / '7.10.0a20251120' / '6.4.3-128' -> (major, minor, patch); None if not a version."""
    m = re.match(r"^\s*(\d{1,6})\.(\d{1,6})(?:\.(\d{1,9}))?", text)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


@dataclasses.dataclass(frozen=True, order=False)
class RocmVersion:
    """A ROCm release as TheRock writes it (docs/packaging/versioning.md, PEP 440 forms):
    stable 10.1.0, prerelease 10.1.0rc2, nightly 10.1.0a20260811, nightly-bkc
    10.1.0a20260811+bkc.20260814, dev 10.1.0.dev0+<commit>; and a distribution's 7.2.4-128."""
    release: tuple[int, int, int]
    pre: tuple[str, int] | None  # ("a", 20260811) or ("rc", 2)
    dev: int | None  # .devN
    local: str  # "bkc.20260814", a commit, or ""
    text: str

    @property
    def kind(self) -> str:
        if self.dev is not None:
            return "dev"
        if self.pre and self.pre[0] == "a":
            return "nightly-bkc" if self.local.startswith("bkc.") else "nightly"
        return "prerelease" if self.pre else "stable"

    @property
    def wheel_local(self) -> str:
        """The local version a wheel built against this release carries, as TheRock composes
        it for the framework wheels it builds (its versioning doc): rocm10.1.0, rocm10.1.0a20260811,
        rocm10.1.0a20260811.bkc.20260814 (a local version holds no '+'), devrocm10.1.0.dev0.<commit>
        (so that stable > nightly > dev sorts as the releases do)."""
        parts = ["%d.%d.%d" % self.release + (f"{self.pre[0]}{self.pre[1]}" if self.pre else "")]
        parts += [f"dev{self.dev}"] if self.dev is not None else []
        parts += re.split(r"[-_.]", self.local.lower()) if self.local else []
        return ("dev" if self.dev is not None else "") + "rocm" + ".".join(parts)

    def sort_key(self) -> tuple:
        """PEP 440's order over these forms, as pip (and TheRock's own tools) order them:
        dev < nightly (a) < rc < stable; a local version (+bkc.D) after the same version
        without one, and local segments compared number by number, else as text."""
        pre = self.pre
        if pre is None and self.dev is not None:
            pre_key: tuple = (-1,)  # X.Y.Z.devN sorts before every prerelease of X.Y.Z
        elif pre is None:
            pre_key = (3,)
        else:
            pre_key = ({"a": 0, "b": 1, "rc": 2}[pre[0]], pre[1])
        dev_key = (1,) if self.dev is None else (0, self.dev)
        local_key = tuple((1, int(p), "") if p.isdigit() else (0, 0, p.lower())
                          for p in re.split(r"[.\-_]", self.local)) if self.local else ()
        return (self.release, pre_key, dev_key, local_key)


_ROCM_VERSION_RE = re.compile(r"^\s*v?(\d{1,6})\.(\d{1,6})(?:\.(\d{1,9}))?"
                              r"(?:(a|b|rc)(\d+))?(?:\.dev(\d+))?(?:\+([0-9A-Za-z]+(?:[.\-_][0-9A-Za-z]+)*))?"
                              r"(?:-(\d+))?\s*$")


def parse_rocm_version(text: str) -> RocmVersion | None:
    """Every version form TheRock publishes (RocmVersion), and a distribution's 6.4.3-128;
    None for anything else."""
    m = _ROCM_VERSION_RE.match(text or "")
    if not m:
        return None
    major, minor, patch, pre_kind, pre_num, dev, local, _build = m.groups()
    return RocmVersion((int(major), int(minor), int(patch or 0)),
                       (pre_kind, int(pre_num)) if pre_kind else None,
                       int(dev) if dev is not None else None, local or "", text.strip())


def version_number(version: tuple[int, int, int]) -> int:
    """XLA's TF_ROCM_VERSION encoding: 7.2.4 -> 70204."""
    major, minor, patch = version
    return major * 10000 + minor * 100 + patch


def dotted_version_number(text: str | None) -> int:
    """version_number of a version string, 0 when there is none (XLA's "unknown")."""
    parsed = parse_dotted(text or "")
    return version_number(parsed) if parsed else 0


def hip_version_number(text: str | None) -> int:
    """HIP_VERSION's encoding: 7.2.53211 -> 70253211 (0 when unknown)."""
    parsed = parse_dotted(text or "")
    return parsed[0] * 10_000_000 + parsed[1] * 100_000 + parsed[2] if parsed else 0


def header_macros(text: str, prefix: str) -> dict[str, str]:
    """#define PREFIX_MAJOR 7 ... -> {'MAJOR': '7', ...} for one header's text."""
    out = {}
    for m in re.finditer(rf"^[ \t]*#[ \t]*define[ \t]+{re.escape(prefix)}_?(\w+)[ \t]+(.+?)[ \t]*$", text, re.M):
        out[m.group(1)] = m.group(2).strip().strip('"')
    return out


def version_from_macros(macros: dict[str, str], keys: Sequence[str] = ("MAJOR", "MINOR", "PATCH")) -> str | None:
    parts = [macros.get(k) for k in keys]
    if all(p is not None and p.isdigit() for p in parts[:2]):
        return ".".join(p for p in parts if p is not None and p.isdigit())
    return None


def cmake_package_version(text: str) -> str | None:
    m = re.search(r'set\s*\(\s*PACKAGE_VERSION\s+"([^"]+)"\s*\)', text)
    return m.group(1) if m and parse_dotted(m.group(1)) else None


def info_version(text: str) -> str | None:
    """.info/version holds '6.4.3-128' (release-build): keep the release part."""
    first = text.strip().splitlines()[0].strip() if text.strip() else ""
    release = first.split("-")[0]
    return release if parse_dotted(release) and _VERSION_RE.match(release) else None


def soname_version(filename: str, stem: str) -> str | None:
    """'librocblas.so.5.2' with stem 'librocblas' -> '5.2'."""
    prefix = f"{stem}.so."
    if filename.startswith(prefix):
        rest = filename[len(prefix):]
        if re.fullmatch(r"\d+(\.\d+)*", rest):
            return rest
    return None


def clang_version(output: str) -> str | None:
    m = re.search(r"clang version (\d+\.\d+\.\d+)", output)
    return m.group(1) if m else None


def amdgpu_processors(output: str) -> list[str]:
    """Processor names in `clang --target=amdgcn-amd-amdhsa --print-supported-cpus`."""
    names = re.findall(r"^\s+(gfx[0-9a-z]+(?:-[0-9a-z]+)*)\s*$", output, re.M)
    return sorted(set(names), key=lambda n: (n.endswith("-generic"), n))  # processors, then generic targets


# --------------------------------------------------------------------------
# The amdgpu targets of JAX's published ROCm wheels: this list's one home.
# The finder defaults to it (--default-targets), also for a build without ROCm
# (--unconfigured-targets); build/ci_build imports it.
# --------------------------------------------------------------------------

DEFAULT_AMDGPU_TARGETS = ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201")

# Every amdgpu processor LLVM 22.1's clang knows (`clang --target=amdgcn-amd-amdhsa
# --print-supported-cpus`; ROCm 7.2's, and TheRock 7.10's, know no other). ci_build refuses a
# name outside it before anything is built: a typo needs no toolkit to be answered. The
# toolkit's own clang still checks the rest (--require-targets).
KNOWN_AMDGPU_PROCESSORS: tuple[str, ...] = (
    "gfx600", "gfx601", "gfx602", "gfx700", "gfx701", "gfx702", "gfx703", "gfx704", "gfx705",
    "gfx801", "gfx802", "gfx803", "gfx805", "gfx810",
    "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c", "gfx942", "gfx950",
    "gfx1010", "gfx1011", "gfx1012", "gfx1013", "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
    "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
    "gfx1200", "gfx1201", "gfx1250", "gfx1251",
    "gfx9-generic", "gfx9-4-generic", "gfx10-1-generic", "gfx10-3-generic", "gfx11-generic", "gfx12-generic",
)
# Target features a code object may be specialised for (gfx90a:xnack-): rocm/private/amdgpu_targets.bzl's _FEATURES.
TARGET_FEATURES: tuple[str, ...] = ("xnack+", "xnack-", "sramecc+", "sramecc-")

# --------------------------------------------------------------------------
# TheRock families: which gfx targets a `therock-dist-linux-<family>-...` build covers.
# --------------------------------------------------------------------------

THEROCK_FAMILIES: dict[str, tuple[str, ...]] = {
    "gfx90X-dcgpu": ("gfx908", "gfx90a"),
    "gfx90X-all": ("gfx906", "gfx908", "gfx90a"),
    "gfx94X-dcgpu": ("gfx942",),
    "gfx94X-all": ("gfx942",),
    "gfx950-dcgpu": ("gfx950",),
    "gfx950-all": ("gfx950",),
    "gfx101X-dgpu": ("gfx1010", "gfx1011", "gfx1012"),
    "gfx103X-dgpu": ("gfx1030", "gfx1032"),
    "gfx103X-all": ("gfx1030", "gfx1032", "gfx1035", "gfx1036"),
    "gfx110X-dgpu": ("gfx1100", "gfx1101", "gfx1102"),
    "gfx110X-all": ("gfx1100", "gfx1101", "gfx1102", "gfx1103"),
    "gfx115X-igpu": ("gfx1150", "gfx1151", "gfx1152", "gfx1153"),
    "gfx115X-all": ("gfx1150", "gfx1151", "gfx1152", "gfx1153"),
    "gfx120X-all": ("gfx1200", "gfx1201"),
    "dcgpu-all": ("gfx908", "gfx90a", "gfx942", "gfx950"),
}
# TheRock's per-family pip packages (_rocm_sdk_libraries_<family>, index
# https://rocm.nightlies.amd.com/v2/<family>/): the tarball families above and single-target
# ones, in the order the published jax_rocm7_plugin 0.10.2's RUNPATH searches them. The build
# makes its link_only RUNPATH of them (third_party/gpus/private/runpath.bzl, by way of rocm_config.json);
# the order is that RUNPATH's, so changing it changes every shipped .so.
THEROCK_PIP_FAMILIES: tuple[str, ...] = (
    "gfx950-dcgpu", "gfx950-all", "gfx94X-dcgpu", "gfx94X-all", "gfx90a", "gfx90X-dcgpu", "gfx90X-all",
    "gfx908", "gfx906", "gfx900", "dcgpu-all", "gfx120X-all", "gfx1153", "gfx1152", "gfx1151", "gfx1150",
    "gfx115X-igpu", "gfx115X-all", "gfx110X-all", "gfx110X-dgpu", "gfx103X-all", "gfx103X-dgpu", "gfx101X-dgpu",
)
_TARBALL_RE = re.compile(r"therock-dist-linux-(?P<family>[0-9A-Za-z]+(?:-[0-9a-z]+)?)-(?P<version>\d[^/]*?)"
                         r"\.(tar\.gz|tar\.xz|tar\.zst|tgz|tar)$")


# A full multi-arch tarball's "family" (therock-dist-linux-multiarch-<version>.tar.gz): every
# target TheRock builds, its device code in kernel packs; which targets is what its .kpack/ holds.
MULTIARCH_FAMILY = "multiarch"

# --------------------------------------------------------------------------
# Kernel packs: a multi-arch TheRock release keeps each library's device code apart from its
# host code, in <root>/.kpack/<artifact>_<component>_<target>.kpack beside a manifest
# <artifact>_<component>.kpm (TheRock's RELEASES.md, "Installing multi-arch tarballs"; in its
# pip packages under _rocm_sdk_libraries/.kpack/, laid there by rocm-sdk-device-<target>).
# --------------------------------------------------------------------------

KPACK_DIR = ".kpack"
# Which of the finder's libraries load each artifact's packs (XLA's BUILD.tpl attaches blas to
# rocBLAS, rocSOLVER, rocSPARSE and what uses them, fft to rocFFT, rand to rocRAND, rccl to
# RCCL; here each library that JAX or XLA names carries its own, as they link no rocBLAS target).
KPACK_LIBRARIES: dict[str, tuple[str, ...]] = {
    "blas": ("rocblas", "hipblas", "hipblaslt", "rocsolver", "hipsolver", "rocsparse", "hipsparse", "hipsparselt"),
    "fft": ("hipfft",),
    "rand": ("hiprand", "rocrand"),
    "rccl": ("rccl",),
}


@dataclasses.dataclass(frozen=True)
class KernelPack:
    artifact: str  # blas
    component: str  # lib
    target: str  # gfx1100 (or gfx942:xnack+); "" for the artifact's manifest (<artifact>_<component>.kpm)
    path: str
    libraries: tuple[str, ...]  # the finder's libraries that load it (KPACK_LIBRARIES)


def parse_kpack_name(name: str) -> tuple[str, str, str] | None:
    """'blas_lib_gfx1100.kpack' -> ('blas', 'lib', 'gfx1100'); a target feature written after
    the target ('..._gfx942_xnack+.kpack') is kept as 'gfx942:xnack+'. None: not a kernel pack."""
    if not name.endswith(".kpack"):
        return None
    parts = name[: -len(".kpack")].split("_")
    at = next((i for i, part in enumerate(parts) if re.fullmatch(r"gfx[0-9a-z]+(-generic)?", part)), None)
    if at is None or at < 2 or any(f not in TARGET_FEATURES for f in parts[at + 1:]):
        return None
    return "_".join(parts[: at - 1]), parts[at - 1], ":".join(parts[at:])


def kernel_pack_targets(names: Sequence[str]) -> list[str]:
    """The amdgpu targets kernel packs of these file names hold device code for, in order."""
    parsed = (parse_kpack_name(n.rsplit("/", 1)[-1]) for n in names)
    return sorted({p[2] for p in parsed if p}, key=_target_order)


def _target_order(target: str) -> tuple:
    digits = re.sub(r"\D", "", target.split(":")[0].split("-")[0])
    return (target.endswith("-generic"), len(digits), target)


def find_kernel_packs(dirs: Sequence[Path]) -> tuple[list[KernelPack], list[KernelPack]]:
    """(the kernel packs, their manifests) in these .kpack folders; a file name found in two
    folders (a pip devel tree links the libraries package's) counts once, the first."""
    packs: dict[str, KernelPack] = {}
    manifests: dict[str, KernelPack] = {}
    for d in dirs:
        if not d.is_dir():
            continue
        for entry in sorted(d.iterdir()):
            if not entry.is_file():
                continue
            parsed = parse_kpack_name(entry.name)
            if parsed:
                packs.setdefault(entry.name, KernelPack(*parsed, str(entry), KPACK_LIBRARIES.get(parsed[0], ())))
            elif entry.name.endswith(".kpm") and "_" in entry.name:
                artifact, component = entry.name[: -len(".kpm")].rsplit("_", 1)
                manifests.setdefault(entry.name, KernelPack(artifact, component, "", str(entry),
                                                            KPACK_LIBRARIES.get(artifact, ())))
    return list(packs.values()), list(manifests.values())


def is_multi_arch(layout: "Layout", packs: Sequence[KernelPack], manifests: Sequence[KernelPack],
                  manifest_says: bool = False) -> bool:
    """Whether a toolkit is a multi-arch TheRock release: it has kernel packs or their manifests, a
    rocm-sdk-device-<target> package, a .kpack folder where its layout keeps them, or its TheRock
    manifest says its artifacts are kernel-pack split (`manifest_says`)."""
    return bool(packs or manifests or layout.pip_device_targets or manifest_says
                or any(d.is_dir() for d in layout.kpack_dirs))


def kernel_pack_targets_at(root: Path) -> tuple[str, list[str]] | None:
    """(the layout of the toolkit at `root`, the targets its kernel packs hold device code for);
    None when it is no multi-arch release (is_multi_arch) or no toolkit. Reads folder listings
    only: ci_build asks it before any sandbox or build."""
    try:
        layout = detect_layout(Path(os.path.abspath(root)))
    except RocmNotFound:
        return None
    packs, manifests = find_kernel_packs(layout.kpack_dirs)
    if not is_multi_arch(layout, packs, manifests):
        return None
    return layout.name, kernel_pack_targets([p.path for p in packs])


def therock_version_from_url(url: str) -> str | None:
    """The ROCm release a TheRock tarball's name says (7.10.0a20251120), or None."""
    m = _TARBALL_RE.search(url)
    return m.group("version") if m else None


def therock_family_from_url(url: str) -> str | None:
    m = _TARBALL_RE.search(url)
    return m.group("family") if m else None


def family_targets(family: str) -> tuple[str, ...] | None:
    """The targets a legacy per-family tarball of `family` has device code for; None for an
    unknown family, and for `multiarch`, whose targets only its kernel packs say."""
    if family in THEROCK_FAMILIES:
        return THEROCK_FAMILIES[family]
    if re.fullmatch(r"gfx[0-9a-f]+", family):  # every target is a family of its own
        return (family,)
    return None


def uncovered_targets(requested: Sequence[str], covered: Sequence[str]) -> list[str]:
    """The processors of requested targets a toolkit has no device code for (gfx942:xnack+ is
    gfx942's code object; generic targets need none): the one implementation of that policy.
    ci_build applies it to a tarball's name before the download; a build applies
    allowed_targets' answer at analysis (rocm/private/amdgpu_targets.bzl)."""
    processors = [t.split(":")[0] for t in requested]
    return [p for p in processors if p not in covered and not p.endswith("-generic")]


def allowed_targets(supported: Sequence[str], covered: Sequence[str] | None) -> list[str] | None:
    """The targets a build may ask for with a toolkit that has device code for `covered`:
    those its compiler knows (`supported`) that uncovered_targets leaves; None: no limit."""
    if covered is None:
        return None
    return [t for t in supported if not uncovered_targets([t], covered)]


@dataclasses.dataclass(frozen=True)
class TarballTargets:
    """What a TheRock tarball's file name says of amdgpu targets, before it is downloaded
    (the build then prefers the tarball's share/therock/dist_info.json, see device_code_targets)."""
    family: str  # gfx94X-dcgpu
    covered: tuple[str, ...]  # the targets the family has device code for
    targets: list[str]  # the build's: those requested, else JAX's wheel list narrowed to the family
    origin: str  # why those: "requested", or default_targets' reason
    uncovered: list[str]  # requested targets the family has no device code for


def tarball_targets(url: str, requested: Sequence[str] = ()) -> TarballTargets | None:
    """The family a TheRock tarball's name says and what it means for the amdgpu targets of a
    build that requests `requested` (none: the defaults); None when the name says no known family."""
    family = therock_family_from_url(url.rstrip("/"))
    covered = family_targets(family) if family else None  # the full multi-arch tarball: its packs decide
    if covered is None:
        return None
    if requested:
        return TarballTargets(family, covered, list(requested), "requested", uncovered_targets(requested, covered))
    targets, origin = default_targets(DEFAULT_AMDGPU_TARGETS, covered, f"its family {family}")
    return TarballTargets(family, covered, targets, origin, [])


# --------------------------------------------------------------------------
# The toolkit
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LibrarySpec:
    name: str
    header: str  # relative to the include dir; proves the headers are there
    lib: str | None  # file stem, e.g. "libamdhip64"; None for header-only libraries
    cmake: str | None  # CMake package folder holding <name>-config-version.cmake
    version_header: str | None = None  # relative to the include dir
    version_prefix: str | None = None  # macro prefix in version_header
    header_paths: tuple[str, ...] = ()  # folders/files under include/ it owns (default: its own folder)
    static: bool = False  # `lib` is a static archive (lib/<stem>.a), linked into what uses it

    def owned_headers(self) -> tuple[str, ...]:
        return self.header_paths or (self.header.split("/")[0],)


LIBRARIES = (
    LibrarySpec("hip", "hip/hip_runtime.h", "libamdhip64", "hip", "hip/hip_version.h", "HIP_VERSION",
                ("hip", "hsa", "rocm-core", "amd_comgr")),
    LibrarySpec("hsa-runtime", "hsa/hsa.h", "libhsa-runtime64", "hsa-runtime64"),
    LibrarySpec("rocblas", "rocblas/rocblas.h", "librocblas", "rocblas", "rocblas/internal/rocblas-version.h", "ROCBLAS_VERSION"),
    LibrarySpec("hipblas", "hipblas/hipblas.h", "libhipblas", "hipblas", "hipblas/hipblas-version.h", "hipblasVersion",
                ("hipblas", "hipblas-common")),
    LibrarySpec("hipblaslt", "hipblaslt/hipblaslt.h", "libhipblaslt", "hipblaslt", "hipblaslt-version.h", "HIPBLASLT_VERSION",
                ("hipblaslt", "hipblaslt-version.h", "hipblaslt-export.h")),
    LibrarySpec("miopen", "miopen/miopen.h", "libMIOpen", "miopen", "miopen/version.h", "MIOPEN_VERSION"),
    LibrarySpec("rccl", "rccl/rccl.h", "librccl", "rccl"),
    LibrarySpec("hipfft", "hipfft/hipfft.h", "libhipfft", "hipfft", "hipfft/hipfft-version.h", "hipfftVersion"),
    LibrarySpec("hipsolver", "hipsolver/hipsolver.h", "libhipsolver", "hipsolver", "hipsolver/internal/hipsolver-version.h",
                "hipsolverVersion"),
    LibrarySpec("hipsparse", "hipsparse/hipsparse.h", "libhipsparse", "hipsparse", "hipsparse/hipsparse-version.h", "hipsparseVersion"),
    LibrarySpec("hiprand", "hiprand/hiprand.h", "libhiprand", "hiprand"),
    LibrarySpec("rocrand", "rocrand/rocrand.h", "librocrand", "rocrand"),
    LibrarySpec("rocprim", "rocprim/rocprim.hpp", None, "rocprim", "rocprim/rocprim_version.hpp", "ROCPRIM_VERSION"),
    LibrarySpec("hipcub", "hipcub/hipcub.hpp", None, "hipcub", "hipcub/hipcub_version.hpp", "HIPCUB_VERSION"),
    LibrarySpec("roctracer", "roctracer/roctracer.h", "libroctracer64", "roctracer"),
    LibrarySpec("rocsolver", "rocsolver/rocsolver.h", "librocsolver", "rocsolver", "rocsolver/rocsolver-version.h", "ROCSOLVER_VERSION"),
    LibrarySpec("rocsparse", "rocsparse/rocsparse.h", "librocsparse", "rocsparse", "rocsparse/rocsparse-version.h", "ROCSPARSE_VERSION"),
    LibrarySpec("hipsparselt", "hipsparselt/hipsparselt.h", "libhipsparselt", "hipsparselt", "hipsparselt/hipsparselt-version.h",
                "hipsparseltVersion"),
    # XLA's GPU runtime and profiler link these (@local_config_rocm//rocm:rocm_smi, :rocprofiler_sdk).
    # rocm_smi.h includes kfd_ioctl.h, which includes <libdrm/drm.h>: a compile that searches
    # only the toolkit's headers (the manylinux toolchain has no /usr/include) needs them too.
    LibrarySpec("rocm_smi", "rocm_smi/rocm_smi.h", "librocm_smi64", "rocm_smi", header_paths=("rocm_smi", "libdrm")),
    # AMD SMI, which replaces ROCm SMI from ROCm 7.13 on (TheRock ships no librocm_smi64 after its
    # #6852; RCCL links libamd_smi instead): @local_config_rocm//rocm:amdsmi, and :smi, the one of
    # the two this toolkit's version calls for.
    LibrarySpec("amdsmi", "amd_smi/amdsmi.h", "libamd_smi", "amd_smi", header_paths=("amd_smi",)),
    LibrarySpec("rocprofiler-sdk", "rocprofiler-sdk/rocprofiler.h", "librocprofiler-sdk", "rocprofiler-sdk"),
    # The KFD thunk as a static archive: XLA's MORI collectives (third_party/roc_mori) link it.
    LibrarySpec("hsakmt", "hsakmt/hsakmt.h", "libhsakmt", "hsakmt", static=True),
)

# The Debian/Ubuntu package with each library's headers: what a build that needs a
# library this toolkit lacks tells the user to install.
DEBIAN_DEV_PACKAGES = {
    "hip": "libamdhip64-dev", "hsa-runtime": "libhsa-runtime-dev", "rocblas": "librocblas-dev",
    "hipblas": "libhipblas-dev", "hipblaslt": "libhipblaslt-dev", "miopen": "libmiopen-dev",
    "rccl": "librccl-dev", "hipfft": "libhipfft-dev", "hipsolver": "libhipsolver-dev",
    "hipsparse": "libhipsparse-dev", "hiprand": "libhiprand-dev", "rocrand": "librocrand-dev",
    "rocprim": "librocprim-dev", "hipcub": "libhipcub-dev", "roctracer": "libroctracer-dev",
    "rocsolver": "librocsolver-dev", "rocsparse": "librocsparse-dev", "hipsparselt": "libhipsparselt-dev",
    "rocm_smi": "librocm-smi-dev",
    "amdsmi": "amd-smi-lib (AMD's repository or TheRock; Debian has none)",
    # Debian does not package rocprofiler-sdk: AMD's packages and TheRock's tarballs have it.
    "rocprofiler-sdk": "rocprofiler-sdk-dev (from AMD's repository; Debian has none)",
    # Debian builds the thunk into libhsa-runtime64 and ships no libhsakmt.a.
    "hsakmt": "hsakmt-roct-devel (AMD's repository; Debian has none)",
}


def missing_libraries(found: dict[str, "Library"]) -> dict[str, str]:
    """Libraries without headers in this toolkit -> the package that provides them."""
    return {spec.name: DEBIAN_DEV_PACKAGES[spec.name] for spec in LIBRARIES
            if spec.name not in found or found[spec.name].include_dir is None}


@dataclasses.dataclass(frozen=True)
class Library:
    version: str | None
    version_number: int  # XLA's encoding of `version` (3.5.1 -> 30501), 0 when unknown
    version_source: str | None  # the file the version was read from
    include_dir: str | None  # None: runtime only (no -dev headers installed)
    headers: list[str]  # header files it owns, relative to include_dir
    library_dir: str | None
    library: str | None  # the shared library found (lib<name>.so when present)
    soname_file: str | None  # its name as the dynamic loader looks it up, e.g. libamdhip64.so.7 (a static one: its file name)
    static: bool = False  # a static archive: linked in, never searched for at run time


@dataclasses.dataclass(frozen=True)
class Layout:
    name: str
    root: Path
    include_dir: Path
    library_dirs: tuple[Path, ...]
    cmake_dirs: tuple[Path, ...]
    clang_candidates: tuple[Path, ...]
    hipcc_candidates: tuple[Path, ...]
    extra_include_dirs: tuple[Path, ...] = ()  # searched after include_dir (TheRock's pip packages)
    therock_family: str | None = None  # TheRock's pip packages: from _rocm_sdk_libraries_<family>
    kpack_dirs: tuple[Path, ...] = ()  # where a multi-arch release keeps its kernel packs
    pip_device_targets: tuple[str, ...] = ()  # TheRock's pip packages: the rocm-sdk-device-<target> installed

    def include_dir_for(self, header: str) -> Path:
        """The first include directory holding `header` (include_dir when none does)."""
        for d in (self.include_dir, *self.extra_include_dirs):
            if (d / header).is_file():
                return d
        return self.include_dir


@dataclasses.dataclass
class RocmConfig:
    rocm_toolkit_path: str
    layout: str
    rocm_version: str
    rocm_release: str  # rocm_version's X.Y.Z, without a TheRock suffix: 7.10.0 of 7.10.0a20251120
    rocm_major: int  # 7: the <N> of the wheels' names (jax_rocm7_plugin)
    rocm_version_number: int
    rocm_version_source: str
    rocm_version_kind: str  # RocmVersion.kind: stable, prerelease, nightly, nightly-bkc, dev (or unknown)
    rocm_wheel_local: str  # RocmVersion.wheel_local: the wheels' local version, rocm10.1.0a20260811.bkc.20260814
    hip_version: str
    hip_version_number: int  # HIP_VERSION's encoding (hip_version_number)
    clang_path: str
    clang_version: str | None
    # clang-offload-bundler beside clang: what lets a HIP compile be split into one action per
    # target and a bundle (rocm/private/actions/hip_compile.bzl); None where the toolkit lacks it.
    offload_bundler_path: str | None
    hipcc_path: str | None
    device_libs_path: str
    amdgpu_targets_supported: list[str]
    therock: dict | None
    # A multi-arch TheRock release (kernel packs apart from host code): its packs, by target,
    # their manifests and the runtime that loads them (librocm_kpack); empty for any other toolkit.
    kpack_split: bool
    kernel_packs: list[dict]  # KernelPack's fields
    kernel_pack_manifests: list[dict]  # the same, target ""
    kpack_runtime: str | None
    libraries: dict[str, Library]
    missing_libraries: dict[str, str]  # name -> Debian/Ubuntu package with its headers
    # Where a missing library's header would appear once installed: the repository rule watches
    # them, so installing the package refreshes @local_config_rocm.
    awaited_headers: list[str]
    warnings: list[str]

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def _llvm_dirs_multiarch(root: Path) -> list[Path]:
    dirs = [Path(p) for p in glob.glob(str(root / "lib" / "llvm-*"))]
    return sorted(dirs, key=lambda p: int(re.sub(r"\D", "", p.name) or 0), reverse=True)


def pip_family(package: str) -> str | None:
    """'_rocm_sdk_libraries_gfx94X_dcgpu' -> 'gfx94X-dcgpu'; None for the multi-arch
    '_rocm_sdk_libraries' or another name."""
    prefix = PIP_LIBRARIES + "_"
    return package[len(prefix):].replace("_", "-") if package.startswith(prefix) and len(package) > len(prefix) else None


def pip_device_targets(dist_info_names: Sequence[str]) -> list[str]:
    """The targets of the rocm-sdk-device-<target> distributions whose .dist-info folders these
    are ('rocm_sdk_device_gfx942-7.15.0a20260630.dist-info' -> gfx942)."""
    found = (re.fullmatch(r"rocm_sdk_device_(gfx[0-9a-z]+(?:_generic)?)-[^-]+\.dist-info", n, re.I) for n in dist_info_names)
    return sorted({m.group(1).lower().replace("_", "-") for m in found if m}, key=_target_order)


def pip_layout(root: Path) -> Layout:
    """TheRock's pip packages around `root`: site-packages/_rocm_sdk_core, or _rocm_sdk_devel,
    which `rocm-sdk path --root` prints for a multi-arch install (both searched either way)."""
    site = root.parent
    core, devel = site / PIP_CORE, site / PIP_DEVEL
    libraries = sorted(p for p in site.glob(PIP_LIBRARIES + "*") if p.is_dir())
    packages = list(dict.fromkeys([root, core, devel, *libraries]))
    families = sorted(filter(None, (pip_family(p.name) for p in libraries)))
    return Layout(
        THEROCK_PIP, root, root / "include",
        # The runtime libraries where pip put them (the core and libraries packages) before the
        # devel tree's links to them: what the wheels' RUNPATH finds is what the build linked.
        tuple(p / "lib" for p in [core, *libraries, devel] if (p / "lib").is_dir()),
        tuple(p / "lib/cmake" for p in packages),
        (devel / "lib/llvm/bin/clang", core / "lib/llvm/bin/clang"),
        (devel / "bin/hipcc", core / "bin/hipcc"),
        extra_include_dirs=tuple(p / "include" for p in packages[1:]),
        therock_family=families[0] if len(families) == 1 else None,
        kpack_dirs=tuple(p / KPACK_DIR for p in [*libraries, devel, core]),
        pip_device_targets=tuple(pip_device_targets([p.name for p in site.glob("*.dist-info")])),
    )


def layout_kind(name: str, is_file: Callable[[str], bool], is_dir: Callable[[str], bool],
                exists: Callable[[str], bool]) -> str | None:
    """Which toolkit layout a root of this name is, from what lies under it (the predicates take
    root-relative paths); None: not a ROCm toolkit. Pure, so that a folder (detect_layout) and a
    tarball's member list (build/ci_build, before it is extracted) are told apart the same way."""
    if name in (PIP_CORE, PIP_DEVEL):
        return THEROCK_PIP
    if is_file("share/therock/therock_manifest.json") or (exists("lib/llvm/bin/clang") and is_dir("lib/rocm_sysdeps")):
        return THEROCK
    if is_file(".info/version") or exists("llvm/bin/clang"):
        return OPT_ROCM
    if is_dir("include/hip") and any(is_dir(f"lib/{t}") for t in MULTIARCH_TRIPLETS):
        return MULTIARCH
    return None


# What layout_kind looks for, for the one line that says a root is none of them.
LAYOUT_MARKERS = (f"share/therock/therock_manifest.json (TheRock), .info/version or llvm/bin/clang (/opt/rocm), "
                  f"include/hip with lib/<triplet>/ (distribution packages), the name {PIP_CORE} (TheRock's pip packages)")


def detect_layout(root: Path) -> Layout:
    """Classifies `root`; raises RocmNotFound naming what it looked for."""
    kind = layout_kind(root.name, lambda p: (root / p).is_file(), lambda p: (root / p).is_dir(),
                       lambda p: (root / p).exists())
    if kind == THEROCK_PIP:
        return pip_layout(root)
    if kind == THEROCK:
        return Layout(THEROCK, root, root / "include", (root / "lib",), (root / "lib/cmake",),
                      (root / "lib/llvm/bin/clang",), (root / "bin/hipcc",), kpack_dirs=(root / KPACK_DIR,))
    if kind == OPT_ROCM:  # a multi-arch tarball extracted to /opt/rocm-X keeps its .kpack/
        return Layout(OPT_ROCM, root, root / "include", (root / "lib",), (root / "lib/cmake",),
                      (root / "llvm/bin/clang", root / "lib/llvm/bin/clang"), (root / "bin/hipcc",),
                      kpack_dirs=(root / KPACK_DIR,))
    if kind == MULTIARCH:
        triplet_dirs = [root / "lib" / t for t in MULTIARCH_TRIPLETS if (root / "lib" / t).is_dir()]
        return Layout(MULTIARCH, root, root / "include", tuple(triplet_dirs), tuple(d / "cmake" for d in triplet_dirs),
                      tuple(d / "bin/clang" for d in _llvm_dirs_multiarch(root)), (root / "bin/hipcc",))
    raise RocmNotFound(
        f"{root} is not a ROCm toolkit: found none of {LAYOUT_MARKERS}; point ROCM_PATH ({HOW_TO_SET_ROCM_PATH}) at "
        "the toolkit's root, e.g. /opt/rocm-7.2.0, an extracted TheRock tarball, /usr, or what `rocm-sdk path --root` prints"
    )


def find_shared_library(layout: Layout, stem: str) -> Path | None:
    """The library to link: `stem.so` if present, else the highest `stem.so.N...`."""
    for d in layout.library_dirs:
        plain = d / f"{stem}.so"
        if plain.exists():
            return plain
        versioned = sorted((Path(p) for p in glob.glob(str(d / f"{stem}.so.*"))),
                           key=lambda p: [int(x) if x.isdigit() else -1 for x in p.name.split(".so.")[-1].split(".")])
        if versioned:
            return versioned[-1]
    return None


def find_static_library(layout: Layout, stem: str) -> Path | None:
    return next((d / f"{stem}.a" for d in layout.library_dirs if (d / f"{stem}.a").is_file()), None)


def list_headers(include_dir: Path, owned: Sequence[str]) -> list[str]:
    """Regular files under include_dir/<owned>, relative; symlinked folders are not
    followed (distributions ship compatibility loops such as include/hsa/hsa -> .)."""
    out = []
    for entry in owned:
        top = include_dir / entry
        if top.is_file():
            out.append(entry)
            continue
        if not top.is_dir() or top.is_symlink():
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if not os.path.islink(os.path.join(dirpath, d)))
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if os.path.isfile(path):
                    out.append(os.path.relpath(path, include_dir))
    return out


def soname_file(lib: Path) -> str:
    """The link in lib.so -> lib.so.N -> lib.so.N.M that carries the soname (lib.so.N)."""
    name = lib.name
    for _ in range(8):
        if not (lib.parent / name).is_symlink():
            break
        target = os.readlink(lib.parent / name)
        if "/" in target or not re.fullmatch(r".*\.so(\.\d+)+", target):
            break
        name = target
        if re.fullmatch(r".*\.so\.\d+", name):
            break
    return name


def library_version(layout: Layout, spec: LibrarySpec, lib: Path | None, warnings: list[str],
                    include_dir: Path | None = None) -> tuple[str | None, str | None]:
    if spec.cmake:
        for d in layout.cmake_dirs:
            for name in (f"{spec.cmake}-config-version.cmake", f"{spec.cmake}ConfigVersion.cmake"):
                text = _read(d / spec.cmake / name)
                if text is not None:
                    version = cmake_package_version(text)
                    if version:
                        return version, str(d / spec.cmake / name)
                    warnings.append(f"{spec.name}: cannot parse PACKAGE_VERSION in {d / spec.cmake / name}")
    if spec.version_header:
        path = (include_dir or layout.include_dir) / spec.version_header
        text = _read(path)
        if text is not None:
            macros = header_macros(text, spec.version_prefix or "")
            version = version_from_macros(macros) or version_from_macros(macros, ("_MAJOR", "_MINOR", "_PATCH"))
            if version:
                return version, str(path)
            warnings.append(f"{spec.name}: no {spec.version_prefix}_MAJOR/MINOR in {path}")
    if lib is not None and spec.lib:
        real = lib.resolve()
        version = soname_version(real.name, spec.lib)
        if version:
            return version, str(real)
    return None, None


def find_libraries(layout: Layout, warnings: list[str]) -> dict[str, Library]:
    found = {}
    for spec in LIBRARIES:
        include_dir = layout.include_dir_for(spec.header)
        has_headers = (include_dir / spec.header).is_file()
        lib = (find_static_library if spec.static else find_shared_library)(layout, spec.lib) if spec.lib else None
        if not has_headers and lib is None:  # header-only libraries have lib None: headers decide
            continue
        version, source = library_version(layout, spec, lib, warnings, include_dir)
        if version is None:
            warnings.append(f"{spec.name}: found but no version could be read")
        found[spec.name] = Library(
            version=version,
            version_number=dotted_version_number(version),
            version_source=source,
            include_dir=str(include_dir) if has_headers else None,
            headers=list_headers(include_dir, spec.owned_headers()) if has_headers else [],
            library_dir=str(lib.parent) if lib else None,
            library=str(lib) if lib else None,
            soname_file=(lib.name if spec.static else soname_file(lib)) if lib else None,
            static=spec.static,
        )
    return found


def rocm_release(layout: Layout, warnings: list[str]) -> tuple[str, str, dict | None]:
    """(version as the distribution states it, the file it came from, TheRock details)."""
    therock = None
    manifest = layout.root / "share/therock/therock_manifest.json"
    text = _read(manifest)
    if text is not None:
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError("not an object")
            therock = {k: data[k] for k in ("the_rock_commit", "rocm_version", "rocm_package_version") if k in data}
            flags = data.get("flags")
            therock["kpack_split"] = isinstance(flags, dict) and flags.get("KPACK_SPLIT_ARTIFACTS") in (True, "ON", "1", 1)
            dist = _read(layout.root / "share/therock/dist_info.json")
            if dist is not None:
                info = json.loads(dist)
                targets = info.get("dist_amdgpu_targets") if isinstance(info, dict) else None
                if isinstance(targets, str):
                    targets = split_targets(targets)
                if isinstance(targets, list):
                    therock["dist_amdgpu_targets"] = [str(t) for t in targets]
            for key in ("rocm_package_version", "rocm_version"):
                value = data.get(key)
                if isinstance(value, str) and parse_dotted(value):
                    return value, f"{manifest} ({key})", therock
            warnings.append(f"{manifest}: no rocm_package_version/rocm_version")
        except (ValueError, AttributeError) as e:
            warnings.append(f"{manifest}: unreadable ({e})")
    info = layout.root / ".info/version"
    text = _read(info)
    if text is not None:
        version = info_version(text)
        if version:
            return version, str(info), therock
        warnings.append(f"{info}: cannot parse {text.strip()[:40]!r}")
    header = layout.include_dir_for("rocm-core/rocm_version.h") / "rocm-core/rocm_version.h"
    text = _read(header)
    if text is not None:
        version = version_from_macros(header_macros(text, "ROCM_VERSION"))
        if version and version.count(".") == 2:
            return version, str(header), therock
        warnings.append(f"{header}: no ROCM_VERSION_MAJOR/MINOR/PATCH")
    raise RocmNotFound(
        f"cannot tell which ROCm release {layout.root} is: searched {manifest}, {info} and {header}; "
        "install rocm-core (it provides rocm_version.h; Debian/Ubuntu: librocm-core-dev)"
    )


def hip_version(layout: Layout) -> str:
    header = layout.include_dir_for("hip/hip_version.h") / "hip/hip_version.h"
    text = _read(header)
    version = version_from_macros(header_macros(text or "", "HIP_VERSION")) if text else None
    if version is None or version.count(".") != 2:
        raise RocmNotFound(
            f"HIP headers not found or unreadable: searched {header}; install the HIP development package "
            "(Debian/Ubuntu: libamdhip64-dev; /opt/rocm: hip-devel) or point ROCM_PATH at a complete toolkit"
        )
    return version


def _run(argv: Sequence[str]) -> str | None:
    try:
        result = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout + result.stderr


def find_clang(layout: Layout) -> tuple[Path, str | None, list[str]]:
    tried = []
    for clang in layout.clang_candidates:
        tried.append(str(clang))
        if not os.access(clang, os.X_OK):
            continue
        cpus = _run([str(clang), "--target=amdgcn-amd-amdhsa", "--print-supported-cpus"])
        targets = amdgpu_processors(cpus or "")
        if targets:
            return clang, clang_version(_run([str(clang), "--version"]) or ""), targets
    raise RocmNotFound(
        f"no clang with the AMDGPU backend: tried {', '.join(tried) or '(no llvm directory found)'}; "
        "install ROCm's compiler (Debian/Ubuntu: hipcc, which brings clang with AMDGPU; /opt/rocm: rocm-llvm)"
    )


def find_offload_bundler(clang: Path) -> str | None:
    """The clang-offload-bundler clang runs for a HIP compile: the one in clang's own folder."""
    bundler = clang.parent / "clang-offload-bundler"
    return str(bundler) if os.access(bundler, os.X_OK) else None


def find_device_libs(layout: Layout, clang: Path) -> Path:
    llvm = clang.parent.parent
    candidates = [layout.root / "lib/llvm/amdgcn/bitcode", layout.root / "amdgcn/bitcode", llvm / "amdgcn/bitcode"]
    candidates += sorted((Path(p) for p in glob.glob(str(llvm / "lib/clang/*/amdgcn/bitcode"))), reverse=True)
    for c in candidates:
        if (c / "ocml.bc").is_file():
            return c
    raise RocmNotFound(
        f"AMDGPU device libraries (ocml.bc) not found: searched {', '.join(map(str, candidates))}; "
        "install them (Debian/Ubuntu: rocm-device-libs-<llvm version>; /opt/rocm: rocm-device-libs)"
    )


def find_rocm_config(root: Path) -> RocmConfig:
    root = Path(os.path.abspath(root))
    if not root.is_dir():
        raise RocmNotFound(f"ROCm path {root} does not exist or is not a directory; set ROCM_PATH ({HOW_TO_SET_ROCM_PATH}) "
                           "to the toolkit's root")
    layout = detect_layout(root)
    warnings: list[str] = []
    hip = hip_version(layout)
    libraries = find_libraries(layout, warnings)
    if "hip" not in libraries or libraries["hip"].library is None:
        raise RocmNotFound(
            f"libamdhip64 not found: searched {', '.join(str(d) for d in layout.library_dirs)}; "
            "install the HIP runtime (Debian/Ubuntu: libamdhip64-dev; /opt/rocm: hip-runtime-amd)"
        )
    version, source, therock = rocm_release(layout, warnings)
    packs, manifests = find_kernel_packs(layout.kpack_dirs)
    kpack_split = is_multi_arch(layout, packs, manifests, bool((therock or {}).get("kpack_split")))
    if kpack_split and therock is None:  # a multi-arch tarball extracted where its manifest is not read
        therock = {}
    if therock is not None:
        therock["release_format"] = "multi-arch" if kpack_split else "per-family (legacy)"
    if layout.name == THEROCK_PIP:
        # The family of the device code is that of the _rocm_sdk_libraries_<family> package
        # (None for the multi-arch _rocm_sdk_libraries, or several families side by side).
        therock = (therock or {}) | {"family": layout.therock_family,
                                     "pip_packages": sorted({str(Path(d).parent) for d in layout.library_dirs}),
                                     "pip_device_targets": list(layout.pip_device_targets)}
    parsed = parse_dotted(version)
    assert parsed is not None  # rocm_release only returns parseable versions
    parsed_full = parse_rocm_version(version)
    clang, clang_ver, targets = find_clang(layout)
    hipcc = next((p for p in layout.hipcc_candidates if os.access(p, os.X_OK)), None)
    missing = missing_libraries(libraries)
    kpack_runtime = find_shared_library(layout, "librocm_kpack")
    return RocmConfig(
        rocm_toolkit_path=str(root),
        layout=layout.name,
        rocm_version=version,
        rocm_release="%d.%d.%d" % parsed,
        rocm_major=parsed[0],
        rocm_version_number=version_number(parsed),
        rocm_version_source=source,
        rocm_version_kind=parsed_full.kind if parsed_full else "unknown",
        rocm_wheel_local=parsed_full.wheel_local if parsed_full else "rocm" + "%d.%d.%d" % parsed,
        hip_version=hip,
        hip_version_number=hip_version_number(hip),
        clang_path=str(clang),
        clang_version=clang_ver,
        offload_bundler_path=find_offload_bundler(clang),
        hipcc_path=str(hipcc) if hipcc else None,
        device_libs_path=str(find_device_libs(layout, clang)),
        amdgpu_targets_supported=targets,
        therock=therock,
        kpack_split=kpack_split,
        kernel_packs=[dataclasses.asdict(p) for p in packs],
        kernel_pack_manifests=[dataclasses.asdict(m) for m in manifests],
        # By the name the loader looks it up by (librocm_kpack.so.1), as the libraries' soname_file.
        kpack_runtime=str(kpack_runtime.parent / soname_file(kpack_runtime)) if kpack_runtime else None,
        libraries=libraries,
        missing_libraries=missing,
        awaited_headers=[str(layout.include_dir / spec.header) for spec in LIBRARIES if spec.name in missing],
        warnings=warnings,
    )


# search_order's places, in its order, as every restatement words them (README.md, docs/,
# rocm_configure.bzl): tests/unit/test_doc_facts.py holds them to it and it to search_order.
SEARCH_ORDER_TEXT = "$ROCM_PATH, /opt/rocm, /opt/rocm-* (newest first), /usr"


def _version_key(text: str) -> tuple:
    parsed = parse_rocm_version(text)
    return (1, parsed.sort_key()) if parsed else (0,)


def search_order(env: dict[str, str]) -> list[Path]:
    """Where to look when no --rocm-path is given: SEARCH_ORDER_TEXT."""
    order = []
    if env.get("ROCM_PATH"):
        order.append(Path(env["ROCM_PATH"]))
    order.append(Path("/opt/rocm"))
    versioned = [Path(p) for p in glob.glob("/opt/rocm-*")]
    versioned.sort(key=lambda p: _version_key(p.name[len("rocm-"):]), reverse=True)
    order += versioned
    order.append(Path("/usr"))
    return order


def find_default(env: dict[str, str]) -> RocmConfig:
    errors = []
    for candidate in search_order(env):
        if not candidate.exists():
            errors.append(f"{candidate}: does not exist")
            continue
        try:
            return find_rocm_config(candidate)
        except RocmNotFound as e:
            if env.get("ROCM_PATH") and candidate == Path(env["ROCM_PATH"]):
                raise  # an explicit choice that is broken is an error, not a reason to look elsewhere
            errors.append(str(e))
    raise RocmNotFound("no ROCm toolkit found; searched in order:\n  " + "\n  ".join(errors) +
                       f"\nset ROCM_PATH to your toolkit ({HOW_TO_SET_ROCM_PATH}), or install ROCm")


def format_text(config: RocmConfig) -> str:
    lines = [
        f"ROCm {config.rocm_version} ({config.layout}) at {config.rocm_toolkit_path}",
        f"  version number  {config.rocm_version_number}   (from {config.rocm_version_source})",
        f"  HIP             {config.hip_version}",
        f"  clang           {config.clang_version} at {config.clang_path}",
        f"  offload bundler {config.offload_bundler_path or '(none: each HIP source compiles in one action)'}",
        f"  hipcc           {config.hipcc_path}",
        f"  device libs     {config.device_libs_path}",
        f"  amdgpu targets  {' '.join(config.amdgpu_targets_supported)}",
    ]
    if config.therock is not None:
        lines.append(f"  TheRock         {config.therock.get('release_format')} release ({config.rocm_version_kind})")
    if config.kpack_split:
        targets = kernel_pack_targets([p["path"] for p in config.kernel_packs])
        lines.append(f"  kernel packs    {len(config.kernel_packs)} for {' '.join(targets) or '(none installed)'}"
                     f"; runtime {config.kpack_runtime or '(librocm_kpack not found)'}")
    lines.append("  libraries:")
    for name, lib in sorted(config.libraries.items()):
        lines.append(f"    {name:<12} {lib.version or '?':<12} {lib.library or '(header-only)'}")
    lines += [f"  warning: {w}" for w in config.warnings]
    return "\n".join(lines)


def unknown_targets(requested: Sequence[str], supported: Sequence[str]) -> list[str]:
    """The requested targets (features such as :xnack+ aside) a toolkit's clang does not know:
    what rocm/private/amdgpu_targets.bzl refuses at analysis, asked before Bazel by ci_build."""
    return [t for t in requested if t.split(":")[0] not in supported]


def split_targets(value: str) -> list[str]:
    """'gfx942,gfx950' / 'gfx942;gfx950' / 'gfx942 gfx950' -> ['gfx942', 'gfx950']: the one
    Python splitter of an amdgpu target list (TF_ROCM_AMDGPU_TARGETS, a dist_info.json's, ci_build's
    --amdgpu-targets for a tarball's family). Commas, semicolons and ASCII white space separate;
    empty items and repeats are dropped, order kept: rocm/private/amdgpu_targets.bzl
    split_amdgpu_targets, which splits --//rocm:amdgpu_targets at analysis, does the same."""
    return list(dict.fromkeys(t for t in re.split(r"[,;\s]+", value, flags=re.ASCII) if t))


def device_code_targets(config: RocmConfig, family: str) -> tuple[list[str] | None, str]:
    """(the targets a TheRock toolkit has device code for, where that was read); (None, "") when
    nothing limits them (not TheRock, or a TheRock tree with neither dist_info.json nor a family)."""
    if config.kpack_split:  # a multi-arch release: what its kernel packs hold, whatever its name says
        where = sorted({str(Path(p["path"]).parent) for p in config.kernel_packs})
        return (kernel_pack_targets([p["path"] for p in config.kernel_packs]),
                f"its kernel packs ({', '.join(where) or 'none installed'})")
    if config.layout not in (THEROCK, THEROCK_PIP):
        return None, ""
    dist = (config.therock or {}).get("dist_amdgpu_targets")
    if dist:
        return list(dist), "its share/therock/dist_info.json"
    if not family or family == MULTIARCH_FAMILY:
        return None, ""
    covered = family_targets(family)
    if covered is None:
        raise RocmNotFound(f"unknown TheRock family {family!r} (from the tarball's file name); known: "
                           f"{' '.join(THEROCK_FAMILIES)} (or a single gfx target). Rename the tarball "
                           "therock-dist-linux-<family>-<version>.tar.gz or set rocm.therock(family = ...) in MODULE.bazel")
    return list(covered), f"its family {family}"


def default_targets(wheel_targets: Sequence[str], covered: Sequence[str] | None, where: str = "") -> tuple[list[str], str]:
    """(targets, why) of a build that names none: JAX's wheel list, narrowed to what the toolkit
    has device code for; the toolkit's own targets when the two do not meet (a gfx115X-igpu
    tarball and JAX's list, say). Pure."""
    if covered is None:
        return list(wheel_targets), "default: JAX's wheel list"
    common = [t for t in wheel_targets if t in covered]
    if common:
        return common, f"default: JAX's wheel list limited to the TheRock toolkit's device code ({where}: {' '.join(covered)})"
    return list(covered), f"default: the TheRock toolkit's device code ({where}), none of which is in JAX's wheel list"


@dataclasses.dataclass(frozen=True)
class TargetChoice:
    targets: list[str]  # what the build compiles for by default
    origin: str  # why: requested, or which default
    device_code_targets: list[str] | None  # a TheRock toolkit's limit (None: no limit)
    device_code_source: str  # where that limit was read ("its family gfx94X-dcgpu")


def device_code_remedy(layout: str, version: str = "<version>") -> str:
    """How a user adds device code for a target a multi-arch TheRock toolkit lacks: the
    package (pip) or the tarball that holds its kernel packs."""
    if layout == THEROCK_PIP:
        return ("install its device package from TheRock's multi-arch index beside the others: "
                "pip install \"rocm[device-<target>]\" (the package rocm-sdk-device-<target>)")
    return (f"use a multi-arch TheRock tarball with its kernel packs: the full "
            f"therock-dist-linux-{MULTIARCH_FAMILY}-{version}.tar.gz, or the per-family "
            f"therock-dist-linux-<family>-{version}.tar.gz of its family")


def choose_targets(config: RocmConfig, requested: Sequence[str], defaults: Sequence[str], family: str) -> TargetChoice:
    """The build's default amdgpu targets: those requested, else default_targets(defaults);
    raises RocmNotFound naming the fix. Requested targets are not checked here: they become
    --//rocm:amdgpu_targets' default, and every value of that flag is checked at analysis
    against what this returns (rocm/private/amdgpu_targets.bzl), the one check of them."""
    covered, where = device_code_targets(config, family)
    if covered == []:  # nothing to ask for, whatever is requested
        raise RocmNotFound(
            f"{config.rocm_toolkit_path} is a multi-arch TheRock release without device code: no kernel packs "
            f"in {where.removeprefix('its kernel packs ')}; {device_code_remedy(config.layout, config.rocm_version)}")
    if requested:
        return TargetChoice(list(requested), "requested (TF_ROCM_AMDGPU_TARGETS)", covered, where)
    targets, origin = default_targets(defaults, covered, where)
    unknown = [t for t in targets if t not in config.amdgpu_targets_supported]
    if unknown:
        raise RocmNotFound(
            f"the default amdgpu target(s) {', '.join(unknown)} are unknown to {config.clang_path}; it supports: "
            f"{' '.join(config.amdgpu_targets_supported)}. Name the targets to build with TF_ROCM_AMDGPU_TARGETS"
        )
    return TargetChoice(targets, origin, covered, where)



def answer(config: RocmConfig, requested: Sequence[str], defaults: Sequence[str], family: str = "") -> dict:
    """The finder's whole answer, rocm_config.json's content, built once: the toolkit; for a
    TheRock toolkit its family (`family` as declared or named by the tarball, else the
    toolkit's own) and the device code it limits the build to; the build's amdgpu targets
    (choose_targets) and, where the defaults did not hold as they are, the note the repository
    rule prints; TheRock's pip families. RocmNotFound where the default targets cannot be built."""
    family = family or (config.therock or {}).get("family") or ""
    choice = choose_targets(config, requested, defaults, family)
    therock = None if config.therock is None else config.therock | {
        "family": family or None,
        "device_code_targets": choice.device_code_targets,
        "device_code_source": choice.device_code_source or None,
        "device_code_remedy": device_code_remedy(config.layout, config.rocm_version) if config.kpack_split else None,
        "allowed_targets": allowed_targets(config.amdgpu_targets_supported, choice.device_code_targets),
    }
    note = "" if requested or choice.targets == list(defaults) else f"amdgpu targets {','.join(choice.targets)} ({choice.origin})"
    return json.loads(config.to_json()) | {"therock": therock, "amdgpu_targets": choice.targets,
                                           "amdgpu_targets_origin": choice.origin, "amdgpu_targets_note": note,
                                           "smi_library": smi_library(config.rocm_version_number, config.libraries,
                                                                      config.missing_libraries),
                                           "therock_pip_families": list(THEROCK_PIP_FAMILIES)}


# The ROCm release from which RCCL links libamd_smi instead of librocm_smi64 (the two cannot
# share a process): XLA's :smi alias takes AMD SMI from this version number on.
AMD_SMI_FROM = 71300


def smi_library(version_number: int, libraries: dict, missing: dict) -> str:
    """The SMI library @local_config_rocm//rocm:smi stands for: amdsmi from ROCm 7.13 on, rocm_smi
    before, as XLA chooses; the other one where the toolkit has only that (what is linked must
    be what the toolkit ships). Pure."""
    want, other = ("amdsmi", "rocm_smi") if version_number >= AMD_SMI_FROM else ("rocm_smi", "amdsmi")
    has = {name for name in libraries if name not in missing}
    return other if want not in has and other in has else want


def suggest_family(targets: Sequence[str]) -> str:
    for family, covered in THEROCK_FAMILIES.items():
        if all(t in covered for t in targets):
            return family
    return "one tarball per family"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rocm-path", type=Path, help=f"the toolkit's root (default: search {SEARCH_ORDER_TEXT})")
    p.add_argument("--format", choices=("json", "text"), default="json")
    p.add_argument("--require-targets", default="", metavar="gfx942,gfx950",
                   help="the targets the build asked for (TF_ROCM_AMDGPU_TARGETS), recorded as they are: the build "
                        "checks them at analysis against what this reports (clang's targets, the device code)")
    p.add_argument("--default-targets", default=",".join(DEFAULT_AMDGPU_TARGETS), metavar="gfx942,gfx950",
                   help="without --require-targets: the targets wanted by default (default: JAX's wheel list, "
                        "%(default)s); a TheRock toolkit narrows them to its family's (see default_targets)")
    p.add_argument("--therock-family", default="", help="TheRock family of the tarball, e.g. gfx94X-dcgpu (declared: "
                   "rocm.therock(family = ...)); wins over --therock-archive's name")
    p.add_argument("--therock-archive", default="", metavar="URL",
                   help="the TheRock tarball the toolkit was extracted from: its file name "
                        "(therock-dist-linux-<family>-<version>.tar.gz) gives the family")
    p.add_argument("--library-names", action="store_true",
                   help="print the names of the libraries this finder knows (JSON list) and exit, searching nothing: "
                        "@local_config_rocm declares one target each, with ROCm or without")
    p.add_argument("--unconfigured-targets", default=None, metavar="TF_ROCM_AMDGPU_TARGETS",
                   help="print the amdgpu targets a build without ROCm records (JSON list: the value's, else "
                        "JAX's wheel list) and exit, searching nothing")
    args = p.parse_args(argv)
    if args.library_names:
        print(json.dumps([spec.name for spec in LIBRARIES]))
        return 0
    if args.unconfigured_targets is not None:
        print(json.dumps(split_targets(args.unconfigured_targets) or list(DEFAULT_AMDGPU_TARGETS)))
        return 0
    try:
        config = find_rocm_config(args.rocm_path) if args.rocm_path else find_default(dict(os.environ))
        family = args.therock_family or therock_family_from_url(args.therock_archive)
        found = answer(config, split_targets(args.require_targets), split_targets(args.default_targets), family)
    except RocmNotFound as e:
        print(f"find_rocm_config: error: {e}", file=sys.stderr)
        return 1
    if args.format == "text":
        print(format_text(config) + f"\n  build targets   {' '.join(found['amdgpu_targets'])}   "
              f"({found['amdgpu_targets_origin']})")
    else:
        print(json.dumps(found, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
