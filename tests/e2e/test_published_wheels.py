"""The published jax_rocm<N>_pjrt/jax_rocm<N>_plugin wheels beside this project's (gated).

Gated on JAX_ROCM_TEST_PUBLISHED_WHEELS, a folder of published wheels the developer downloaded
(never committed), for example JAX 0.12.0's for ROCm 10 and, to compare like with like, ROCm 7:

    pip download --no-deps --only-binary=:all: --python-version 3.12 -d DIR \\
        jax_rocm10_pjrt==0.12.0 jax_rocm10_plugin==0.12.0 jax_rocm7_pjrt==0.12.0 jax_rocm7_plugin==0.12.0

Unset, every test skips naming it. Ours are those of the README's main job, built here as
tests/e2e/test_wheels.py builds them, or, with JAX_ROCM_TEST_OUR_WHEELS, the wheels in that folder
(for example `build/ci_build --sources=examples dist_wheels --output-dir=DIR`'s), which saves the
build. Each published wheel is set beside ours of its kind (tests/infra/wheel_comparison.py):
distribution names, versions, tags, entry points, layout, and each ELF file's RUNPATH and NEEDED.

Ours are built from stand-ins (examples/) with the module set of JAX 0.10.2 against ROCm 7.2.4:
names differ by design (jax_rocm10 against jax_rocm7) and are normalised, never equated; what
must agree is asserted, and every other difference must be one EXPLAINED names (the measured
table and its reasons: docs/measurements.md). `-rP` prints the side-by-side tables.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT
from tests.e2e.test_wheels import dist_wheels
from tests.infra.wheel_comparison import EntryPoint, SideBySide, compare_folders
from third_party.gpus import find_rocm_config as finder

pytestmark = pytest.mark.e2e

PUBLISHED_ENV = "JAX_ROCM_TEST_PUBLISHED_WHEELS"
OURS_ENV = "JAX_ROCM_TEST_OUR_WHEELS"

# Why a published wheel and ours may differ, by aspect (SideBySide.rows(); RUNPATH and NEEDED rows
# by their first word). A row that disagrees in an aspect not named here fails the run.
EXPLAINED = {
    "version": "ours are JAX 0.10.2's (the release of the pins), with ROCm's version as the local label "
               "(0.10.2+rocm7.2.4; the README's demo makes dev wheels 0.10.2.devYYYYMMDD+g<commit>.rocm7.2.4); "
               "theirs say ROCm's version in their Summary only",
    "tags": "ours are manylinux_2_28 (Zig's glibc 2.28 toolchain), theirs manylinux_2_27; a plugin wheel's Python "
            "tag is the Python it was built for (ours: the sandbox's 3.13 and 3.14 and the host's, if it has headers)",
    "Root-Is-Purelib": "the published pjrt wheel says true (setuptools' value for a distribution without "
                       "ext_modules) although it holds the PJRT library; ours say false, a platform wheel's value",
    "Requires-Python": "ours pin a plugin wheel to its one Python and the pjrt wheel to the Pythons the project "
                       "builds for; theirs say >=3.12 on the plugin wheel and nothing on the pjrt wheel",
    "layout (normalised)": "theirs hold setuptools' top_level.txt; ours build_info.json and, in the pjrt wheel, "
                           "gpus.py and smoke.py (LAYOUT_THEIRS_ONLY, LAYOUT_OURS_ONLY)",
    "RUNPATH": "ours search every folder theirs search, in another order (TheRock's pip packages before "
               "$ORIGIN/../rocm/lib) and more (site-packages beside dist-packages; more GPU families)",
    "NEEDED": "ours link libc++ in (no libstdc++.so.6, libgcc_s.so.1); a stand-in (build_info.json: origin "
              "examples) needs what the stand-in calls, not what JAX's or XLA's code needs; a ROCm library both "
              "need has the same soname",
}
# Members only one side has (normalised paths), and why.
LAYOUT_THEIRS_ONLY = {"<dist-info>/top_level.txt": "setuptools writes it; no installer needs it"}
LAYOUT_OURS_ONLY = {
    "jax_plugins/xla_rocm<N>/build_info.json": "what the wheel was built from (sources, ROCm, targets, stand-ins)",
    "jax_rocm<N>_plugin/build_info.json": "the same for the plugin wheel",
    "jax_plugins/xla_rocm<N>/gpus.py": "the one reading of the KFD topology and ROCR/HIP_VISIBLE_DEVICES (pytest_rocm's)",
    "jax_plugins/xla_rocm<N>/smoke.py": "python -m jax_plugins.xla_rocm<N>.smoke, the GPU host's check",
}
# Linked in by ours (libc++, libunwind: toolchains/manylinux), needed from the system by theirs.
CXX_RUNTIME = ("libstdc++.so.6", "libgcc_s.so.1")


def folder_from(variable: str) -> Path | None:
    value = os.environ.get(variable, "").strip()
    return Path(value).expanduser().resolve() if value else None


@pytest.fixture(scope="module")
def published() -> list[Path]:
    folder = folder_from(PUBLISHED_ENV)
    if folder is None:
        pytest.skip(f"{PUBLISHED_ENV} is unset: set it to a folder of published jax_rocm<N>_pjrt/plugin wheels "
                    "(pip download --no-deps --only-binary=:all: --python-version 3.12 -d DIR jax_rocm10_pjrt==0.12.0 "
                    "jax_rocm10_plugin==0.12.0) to compare them with ours")
    wheels = sorted(folder.glob("jax_rocm*_pjrt-*.whl")) + sorted(folder.glob("jax_rocm*_plugin-*.whl"))
    if not wheels:
        pytest.fail(f"{PUBLISHED_ENV}={folder} holds no jax_rocm<N>_pjrt or jax_rocm<N>_plugin wheel")
    return wheels


@pytest.fixture(scope="module")
def ours(published, request, tmp_path_factory) -> list[Path]:
    """JAX_ROCM_TEST_OUR_WHEELS's wheels, else the README's main job's (built here, in the sandbox)."""
    folder = folder_from(OURS_ENV)
    if folder is not None:
        wheels = sorted(folder.glob("jax_rocm*_pjrt-*.whl")) + sorted(folder.glob("jax_rocm*_plugin-*.whl"))
        if not wheels:
            pytest.fail(f"{OURS_ENV}={folder} holds no jax_rocm<N>_pjrt or jax_rocm<N>_plugin wheel")
        return wheels
    request.getfixturevalue("sandbox_root")
    return dist_wheels(CHECKOUT, tmp_path_factory.mktemp("dist"))[0]


@pytest.fixture(scope="module")
def sides(published, ours) -> list[SideBySide]:
    return compare_folders(published, ours)


def test_every_published_wheel_has_ours_of_its_kind_beside_it(sides, published):
    assert [s.theirs.filename for s in sides] == sorted(p.name for p in published)
    for side in sides:
        assert side.theirs.kind == side.ours.kind, side.theirs.filename


def test_the_names_agree_but_for_the_rocm_major(sides):
    """jax-rocm<N>-pjrt, jax-rocm<N>-plugin: N is the major of the ROCm each was built for."""
    for side in sides:
        names = {s.distribution.replace("_", "-").lower() for s in (side.theirs, side.ours)}
        assert names == {f"jax-rocm{s.rocm_major}-{s.kind}" for s in (side.theirs, side.ours)}, names
        assert side.ours.rocm_major == side.ours.build_info["rocm_major"], side.ours.filename


def test_the_pjrt_wheels_name_the_entry_point_jaxs_plugin_discovery_reads(sides):
    """jax._src.xla_bridge loads what the group jax_plugins names: xla_rocm<N> = jax_plugins.xla_rocm<N>."""
    for side in sides:
        for wheel in (side.theirs, side.ours):
            major = wheel.rocm_major
            expected = (EntryPoint("jax_plugins", f"xla_rocm{major}", f"jax_plugins.xla_rocm{major}"),) if wheel.kind == "pjrt" else ()
            assert wheel.entry_points == expected, wheel.filename


def test_the_package_folders_and_extension_modules_agree(sides):
    """jax_plugins/xla_rocm<N>/xla_rocm_plugin.so; jax_rocm<N>_plugin/ with the same modules (JAX
    0.12.0's set is 0.10.2's: _hybrid _linalg _prng _rnn _solver _sparse _triton rocm_plugin_extension)."""
    for side in sides:
        assert side.theirs.packages == side.ours.packages, (side.theirs.filename, side.theirs.packages, side.ours.packages)
        assert side.theirs.extension_modules == side.ours.extension_modules, (
            f"{side.theirs.filename} and {side.ours.filename} hold different modules: only theirs "
            f"{sorted(set(side.theirs.extension_modules) - set(side.ours.extension_modules))}, only ours "
            f"{sorted(set(side.ours.extension_modules) - set(side.theirs.extension_modules))}")


def test_every_member_only_one_side_has_is_explained(sides):
    for side in sides:
        assert set(side.layout_theirs_only) <= set(LAYOUT_THEIRS_ONLY), (side.theirs.filename, side.layout_theirs_only)
        assert set(side.layout_ours_only) <= set(LAYOUT_OURS_ONLY), (side.ours.filename, side.layout_ours_only)


def test_the_plugin_wheel_requires_its_pjrt_wheel_and_the_same_therock_packages(sides):
    for side in sides:
        if side.theirs.kind == "plugin":
            assert side.theirs.normalised_requirements == side.ours.normalised_requirements, side.theirs.filename
            assert "jax-rocm<N>-pjrt==<version>" in side.ours.normalised_requirements


def test_ours_search_every_folder_theirs_search_and_nothing_of_the_build_tree(sides):
    """TheRock's pip packages, $ORIGIN/../rocm/lib and /opt/rocm/lib; every entry of theirs is one
    of ours (ours order them otherwise and add more); one RUNPATH for every library of a wheel."""
    for side in sides:
        for path, theirs, ours in side.elf_pairs:
            assert theirs and ours, (side.theirs.filename, path)
            policy = ours.policy
            assert policy.of_kind("build_tree") == (), (side.ours.filename, path, policy.of_kind("build_tree"))
            assert policy.of_kind("therock_pip") and "/opt/rocm/lib" in policy.entries, (path, policy.summary())
            assert "$ORIGIN/../rocm/lib" in policy.entries or "$ORIGIN/../../rocm/lib" in policy.entries, path
            assert side.runpath_missing_from_ours(path) == (), (path, side.runpath_missing_from_ours(path))
            assert set(theirs.policy.pip_families) <= set(policy.pip_families), path
        assert len({e.policy.entries for e in side.ours.elf_members}) == 1, side.ours.filename


def test_a_rocm_library_both_need_has_the_same_soname_and_ours_link_the_cxx_runtime_in(sides):
    for side in sides:
        for path, theirs, ours in side.elf_pairs:
            base = lambda soname: soname.split(".so")[0]  # noqa: E731
            theirs_by_base = {base(n): n for n in theirs.rocm_needed}
            shared = {base(n): n for n in ours.rocm_needed if base(n) in theirs_by_base}
            assert shared == {b: theirs_by_base[b] for b in shared}, (path, shared, theirs.rocm_needed)
            assert not set(CXX_RUNTIME) & set(ours.needed), (side.ours.filename, path, ours.needed)


def test_modules_built_from_real_sources_need_the_rocm_libraries_theirs_need(sides):
    """Ours built from JAX's or XLA's files (not a stand-in) need at least what theirs need of ROCm."""
    compared = 0
    for side in sides:
        for path, theirs, ours in side.elf_pairs:
            if path in side.ours.stand_ins:
                continue
            compared += 1
            assert set(theirs.rocm_needed) <= set(ours.rocm_needed), (path, theirs.rocm_needed, ours.rocm_needed)
    if not compared:
        pytest.skip("every library of ours is a stand-in (build_info.json: origin examples); build with "
                    "--jax-source-dir for JAX's modules")


def test_every_difference_is_explained(sides):
    """The side-by-side (printed), and a reason for every row that disagrees; the reasons' own facts checked."""
    unexplained = []
    for side in sides:
        t, o = side.theirs, side.ours
        print(f"\n## {t.filename} beside {o.filename}\n\n{side.table()}\n")
        for wheel in (t, o):
            (first, *_) = wheel.elf_members
            print(f"{wheel.filename}: RUNPATH of {first.path} (every library of it: "
                  f"{len({e.policy.entries for e in wheel.elf_members}) == 1}):\n  " + "\n  ".join(first.policy.entries))
        print("\nWhy they differ:")
        for row in side.rows():
            if row.agrees:
                continue
            key = row.aspect.split(" ", 1)[0] if row.aspect.startswith(("RUNPATH ", "NEEDED ")) else row.aspect
            if key not in EXPLAINED:
                unexplained.append((t.filename, row))
            print(f"- {row.aspect}: {EXPLAINED.get(key, 'UNEXPLAINED')}")
        # What the reasons say of ours.
        # The local version names the toolkit as TheRock composes it (a BKC release's '+' made a '.').
        local = finder.parse_rocm_version(o.build_info["rocm_package_version"]).wheel_local
        assert o.version.startswith(o.build_info["jax_version"]) and o.version.split("+", 1)[1].endswith(local), o.version
        assert all(tag.endswith("manylinux_2_28_x86_64") for tag in o.tags) and not o.root_is_purelib, o.filename
    assert not unexplained, unexplained
