"""What a sandbox root contains: the one place that declares its package set.

A root is built from layers, each one apt transaction. Each layer's hash chains
over the layers below it, so a root's stamp says exactly what it holds, and
`plan` decides whether a root is up to date, can be extended in place, or must
be rebuilt.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Sequence

# Bump when the way a root is set up changes (apt configuration, bazelrc, ...)
# so that existing roots are rebuilt.
ROOT_FORMAT = 1
SUITE = "sid"
DEFAULT_MIRROR = "http://deb.debian.org/debian"


@dataclasses.dataclass(frozen=True)
class Layer:
    """Packages installed in one apt transaction, from one target release."""

    name: str
    packages: tuple[str, ...]
    # apt's target release for this layer ("" = the default, sid).
    target_release: str = ""
    # Files (inside the root) that must exist once the layer is installed;
    # a missing one means the root is corrupted.
    probes: tuple[str, ...] = ()
    # Shell commands run in the root after the apt transaction, for what Debian does not
    # package (each pinned: a version and its sha256).
    commands: tuple[str, ...] = ()


# sid packages come first: installing ROCm from experimental upgrades libc6 to
# experimental's, after which some sid packages no longer resolve.
BASE = Layer(
    name="base",
    packages=(
        "bazel-bootstrap",  # 7.7.1; pulls Debian's rules_cc/java/python/proto, platforms, skylib
        "bazel-rules-shell",
        "bazel-rules-pkg",
        "python3",
        "python3-venv",
        "python3-dev",
        "git",
        "ca-certificates",
        "binutils",
        "file",
        "zstd",
        "xz-utils",
        # The loopback remote-execution cluster of the rbe test tier: BuildGrid
        # (from PyPI) keeps its state in PostgreSQL; buildbox is the worker side.
        "postgresql",
        "buildbox",
    ),
    probes=("usr/bin/bazel", "usr/bin/python3", "usr/bin/git", "usr/bin/gcc", "usr/bin/buildbox-casd", "usr/bin/buildbox-worker"),
)
ROCM_MINIMAL = Layer(
    name="rocm-minimal",
    target_release="experimental",
    packages=(
        "hipcc",
        "libamdhip64-dev",
        "librocm-core-dev",  # installs rocm-core/rocm_version.h
        "rocm-device-libs-22",
    ),
    probes=(
        "usr/bin/hipcc",
        "usr/include/hip/hip_version.h",
        "usr/include/rocm-core/rocm_version.h",
    ),
)
ROCM_FULL = Layer(
    name="rocm-full",
    target_release="experimental",
    packages=(
        "librocblas-dev",
        "libhipblas-dev",
        "libhipblaslt-dev",
        "libhipsolver-dev",
        "libhipsparse-dev",
        "libhipfft-dev",
        "libhiprand-dev",
        "librccl-dev",
        "libmiopen-dev",
        "librocprim-dev",
        "libhipcub-dev",
        "rocminfo",
    ),
    probes=("usr/include/rocblas/rocblas.h", "usr/bin/rocminfo"),
)
# What JAX's own FFI kernels compile against besides ROCm (jaxlib/rocm/private/jax_targets.bzl):
# Eigen (header-only) and numpy's C headers for the sandbox's Python. Layers after
# rocm-full, so that a root without them is extended, not rebuilt.
JAX_KERNEL_DEPS = Layer(
    name="jax-kernel-deps",
    packages=("libeigen3-dev", "python3-numpy"),
    probes=("usr/include/eigen3/Eigen/Core",),
)
# rocSOLVER's headers at the release of the runtime rocm-full already installed
# (hipSOLVER depends on librocsolver0 7.2): JAX's gesdd calls rocSOLVER directly.
ROCM_SOLVER = Layer(
    name="rocm-solver",
    target_release="experimental",
    packages=("librocsolver-dev",),
    probes=("usr/include/rocsolver/rocsolver.h",),
)
# What the wheel rules' Python actions import (wheel/private: wheel_builder.py uses
# packaging, runpath.py pyelftools), on this root and on RBE workers whose image it is.
# Every build of wheels ensures `full`; last, so that existing roots are extended.
WHEEL_TOOLS = Layer(
    name="wheel-tools",
    packages=("python3-packaging", "python3-pyelftools"),
    probes=("usr/lib/python3/dist-packages/packaging/version.py", "usr/lib/python3/dist-packages/elftools/elf/elffile.py"),
)
# What XLA's ROCm runtime needs beyond JAX's kernels (full mode): ROCm SMI for the GPU
# topology helpers of xla/stream_executor/rocm. libhwloc-dev served XLA's system hwloc, which
# the laid-out graph no longer uses (tests/infra/real_trees.toml builds hwloc from source, as the
# manylinux_2_28 toolchain needs): it goes with the next change of this layer, which rebuilds
# every user's root from here up. rocprofiler-sdk,
# which XLA's tracer needs, is in no Debian suite: the tracer compiles only against a
# toolkit that has it.
XLA_RUNTIME_DEPS = Layer(
    name="xla-runtime-deps",
    target_release="experimental",
    packages=("librocm-smi-dev", "libhwloc-dev"),
    probes=("usr/include/rocm_smi/rocm_smi.h", "usr/include/hwloc.h"),
)
# A second Python JAX publishes wheels for (ci_build builds for each one found): sid's 3.13,
# with numpy for it from PyPI, since Debian's numpy is built for 3.14 and 3.15 only (its C
# headers are what JAX's modules compile against; the version is Debian's numpy's).
NUMPY_313 = "numpy==2.4.6 --hash=sha256:a7830bab239b79cda9c08c2da014761cafb48da6150e1da17ac06283f43b6089"
PYTHON_313 = Layer(
    name="python-3.13",
    packages=("python3.13-dev", "python3.13-venv", "python3-pip"),
    probes=("usr/include/python3.13/Python.h", "usr/local/lib/python3.13/dist-packages/numpy/__init__.py"),
    # The requirement on stdin (pip takes a hash only from a requirements file): no file left in
    # /tmp, which is the host's. --ignore-installed: Debian's numpy of the same version is on
    # 3.13's path too, whose metadata would otherwise satisfy pip (it has no module for 3.13).
    commands=(f"echo '{NUMPY_313}' | python3.13 -m pip install -q --break-system-packages --ignore-installed --no-deps "
              "--only-binary=:all: --require-hashes -r /dev/stdin",),
)
# The Pythons with headers a root of each profile has: sid's python3 (3.14 when the layers were
# written) and PYTHON_313's. ci_build answers --python-versions with them before a root exists;
# a built root is read instead (ci_build_cli/pythons.py), and the bazel tier checks the two agree.
PROFILE_PYTHONS: dict[str, tuple[str, ...]] = {"minimal": ("3.14",), "full": ("3.13", "3.14")}
PROFILES: dict[str, tuple[Layer, ...]] = {
    "minimal": (BASE, ROCM_MINIMAL),
    "full": (BASE, ROCM_MINIMAL, ROCM_FULL, JAX_KERNEL_DEPS, ROCM_SOLVER, WHEEL_TOOLS, XLA_RUNTIME_DEPS, PYTHON_313),
}
# Pythons a root gets only on request (`ensure --python=3.15`), for a JAX tree that builds for
# them (ci_build builds for the Pythons the JAX tree names; JAX 0.10.2 to 0.11 name 3.11 to 3.14).
# Debian sid's 3.15 is 8 packages, 71 MB installed, and its numpy is Debian's python3-numpy
# (built for 3.14 and 3.15), already in `full`. It is in no profile: a root that changes gets a
# copy of the whole root and a new, empty action cache (action_cache.py: named by the root's
# packages), so every build would start cold once, for a Python no JAX release builds for yet.
PYTHON_315 = Layer(
    name="python-3.15",
    packages=("python3.15-dev", "python3.15-venv"),
    probes=("usr/include/python3.15/Python.h",),
)
OPTIONAL_PYTHONS: dict[str, Layer] = {"3.15": PYTHON_315}
DEFAULT_PROFILE = "minimal"
# Free space an `ensure` needs before it starts (measured roots: 3.0 and 9.3 GB,
# plus the downloaded packages).
REQUIRED_FREE_GB = {"minimal": 5, "full": 14}

STAMP = ".jax-rocm-sandbox.json"


def layer_hashes(layers: Sequence[Layer]) -> list[str]:
    """Chained hashes: a layer's hash covers itself and every layer below it."""
    digest = hashlib.sha256(json.dumps({"format": ROOT_FORMAT, "suite": SUITE}).encode()).hexdigest()
    out = []
    for layer in layers:
        spec = json.dumps(dataclasses.asdict(layer), sort_keys=True)
        digest = hashlib.sha256((digest + spec).encode()).hexdigest()
        out.append(digest)
    return out


@dataclasses.dataclass(frozen=True)
class Stamp:
    """What a finished root contains; written last, read to decide what to do."""

    layers: tuple[tuple[str, str], ...]  # (name, chained hash)
    created: float

    def to_json(self) -> str:
        return json.dumps({"format": ROOT_FORMAT, "layers": [list(x) for x in self.layers], "created": self.created}, indent=1)

    @staticmethod
    def parse(text: str) -> "Stamp":
        data = json.loads(text)
        return Stamp(layers=tuple((str(n), str(h)) for n, h in data["layers"]), created=float(data["created"]))


def stamp_for(layers: Sequence[Layer], created: float) -> Stamp:
    return Stamp(layers=tuple(zip((layer.name for layer in layers), layer_hashes(layers))), created=created)


@dataclasses.dataclass(frozen=True)
class Plan:
    """What `ensure` has to do to get from a root's stamp to the wanted layers."""

    action: str  # "none" | "extend" | "build"
    todo: tuple[Layer, ...]  # layers to install
    reason: str


def plan(current: Stamp | None, wanted: Sequence[Layer]) -> Plan:
    want = list(zip((layer.name for layer in wanted), layer_hashes(wanted)))
    if current is None:
        return Plan("build", tuple(wanted), "no sandbox root yet")
    have = list(current.layers)
    if have[: len(want)] == want:
        return Plan("none", (), "up to date")
    if want[: len(have)] == have:
        return Plan("extend", tuple(wanted[len(have):]), "adding " + ", ".join(layer.name for layer in wanted[len(have):]))
    # Neither is a prefix of the other, so they differ within the shorter one.
    changed = next(w[0] for w, h in zip(want, have) if w != h)
    return Plan("build", tuple(wanted), f"package set of layer '{changed}' changed")


def wanted_layers(profile: str, pythons: Sequence[str], current: Stamp | None) -> tuple[Layer, ...]:
    """What an `ensure` of `profile` with the optional `pythons` (OPTIONAL_PYTHONS) wants: the
    profile's layers; with pythons, the current root's when it serves the profile already (so
    that asking for a Python extends a full root, never trades it for a minimal one), then the
    layer of each Python it lacks. A root that holds one keeps it for every later `ensure` of a
    profile it serves; a rebuild (a profile's layer changed) drops it, until asked again."""
    wanted = tuple(PROFILES[profile])
    if not pythons:
        return wanted
    if current is not None and plan(current, wanted).action == "none":
        wanted = tuple(layers_of(current))
    names = {layer.name for layer in wanted}
    return wanted + tuple(OPTIONAL_PYTHONS[v] for v in dict.fromkeys(pythons) if OPTIONAL_PYTHONS[v].name not in names)


def root_id(layers: Sequence[Layer]) -> str:
    return "root-" + layer_hashes(layers)[-1][:12]


def layers_of(stamp: Stamp) -> list[Layer]:
    by_name = {layer.name: layer for profile in PROFILES.values() for layer in profile}
    return [by_name[n] for n, _ in stamp.layers if n in by_name]
