"""TheRock as it ships today, in the finder: multi-arch releases (kernel packs), ROCm 10's
version forms, AMD SMI.

The toolkits are synthetic trees laid out as TheRock's RELEASES.md and its packaging code
describe them (tests/unit/test_find_rocm_config.py's helpers): a multi-arch tarball's `.kpack/`
beside `bin/ include/ lib/`, and pip's `_rocm_sdk_core`, `_rocm_sdk_devel` (what `rocm-sdk path
--root` prints for a multi-arch install), `_rocm_sdk_libraries/.kpack/` filled by
`rocm-sdk-device-<target>` wheels. The kernel packs are opaque data here (a few bytes each):
what is tested is which files the finder reads as whose device code, not the packs' format.
The bazel tier builds wheels against a multi-arch tarball made of Debian's real ROCm
(tests/bazel/test_therock_release.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.version import Version

from tests.unit.test_find_rocm_config import make_therock, make_therock_pip, shared_library, write
from third_party.gpus import find_rocm_config as finder

pytestmark = pytest.mark.unit

WHEEL_LIST = list(finder.DEFAULT_AMDGPU_TARGETS)

# Every form of TheRock's docs/packaging/versioning.md (and a distribution's), with its kind,
# its X.Y.Z and XLA's encoding of it.
VERSION_FORMS = [
    ("7.10.0", "stable", (7, 10, 0), 71000),
    ("7.10.0rc0", "prerelease", (7, 10, 0), 71000),
    ("7.10.0a20251124", "nightly", (7, 10, 0), 71000),
    ("10.1.0a20260811+bkc.20260814", "nightly-bkc", (10, 1, 0), 100100),
    ("7.10.0.dev0+efed3c3b10a5cce8578f58f8eb288582c26d18c4", "dev", (7, 10, 0), 71000),
    ("10.1.0.dev0+efed3c3b10a5cce8578f58f8eb288582c26d18c4", "dev", (10, 1, 0), 100100),
    ("10.0.0", "stable", (10, 0, 0), 100000),
    ("6.4.3-128", "stable", (6, 4, 3), 60403),
]


@pytest.mark.parametrize("text, kind, release, number", VERSION_FORMS)
def test_every_therock_version_form_parses_and_encodes(text, kind, release, number):
    version = finder.parse_rocm_version(text)
    assert version is not None and version.text == text
    assert (version.kind, version.release, finder.version_number(version.release)) == (kind, release, number)
    assert finder.parse_dotted(text) == release  # the X.Y.Z every other reader takes


@pytest.mark.parametrize("text", ["", "rocm", "7", "7.x.0", "10.1.0a", "10.1.0+", "10.1.0 a1", "../10.1.0"])
def test_what_is_no_version_is_refused(text):
    assert finder.parse_rocm_version(text) is None


def test_versions_order_as_pip_orders_them():
    """The order TheRock documents (10.1.0a20260811 < its BKC < the next nightly) and PEP 440's
    for the rest, checked against packaging's Version, which pip and TheRock's tools use."""
    texts = [t for t, *_ in VERSION_FORMS if "-" not in t] + [
        "10.1.0a20260812", "10.1.0a20260811", "10.1.0", "10.1.0rc1", "10.1.0rc2", "7.2.4", "10.1.0a20260811+bkc.20260815"]
    ours = sorted(texts, key=lambda t: finder.parse_rocm_version(t).sort_key())
    assert ours == sorted(texts, key=Version)
    key = lambda t: finder.parse_rocm_version(t).sort_key()  # noqa: E731
    assert key("10.1.0a20260811") < key("10.1.0a20260811+bkc.20260814") < key("10.1.0a20260812")


def test_the_search_takes_the_newest_opt_rocm_by_therock_order(tmp_path, monkeypatch):
    for name in ("rocm-7.2.4", "rocm-10.1.0a20260811", "rocm-10.1.0rc1", "rocm-7.10.0"):
        (tmp_path / name).mkdir()
    monkeypatch.setattr(finder.glob, "glob", lambda pattern: [str(p) for p in tmp_path.glob("rocm-*")])
    order = [p.name for p in finder.search_order({})][1:-1]
    assert order == ["rocm-10.1.0rc1", "rocm-10.1.0a20260811", "rocm-7.10.0", "rocm-7.2.4"]


# ---- kernel packs ------------------------------------------------------------------------

@pytest.mark.parametrize("name, parsed", [
    ("blas_lib_gfx1100.kpack", ("blas", "lib", "gfx1100")),
    ("rccl_lib_gfx942.kpack", ("rccl", "lib", "gfx942")),
    ("miopen_kernels_lib_gfx950.kpack", ("miopen_kernels", "lib", "gfx950")),
    ("blas_lib_gfx942_xnack+.kpack", ("blas", "lib", "gfx942:xnack+")),
    ("blas_lib_gfx11-generic.kpack", ("blas", "lib", "gfx11-generic")),
    ("blas_lib.kpm", None),
    ("blas_lib_gfx1100.kpack.tmp", None),
    ("lib_gfx1100.kpack", None),
    ("blas_lib_gfx942_turbo.kpack", None),
])
def test_kernel_pack_names(name, parsed):
    assert finder.parse_kpack_name(name) == parsed


def add_kernel_packs(kpack: Path, targets, artifacts=("blas", "fft", "rand", "rccl")) -> None:
    """A .kpack/ folder as TheRock's packaging writes it: a manifest per artifact, a pack per target."""
    for artifact in artifacts:
        write(kpack / f"{artifact}_lib.kpm", "manifest")
        for target in targets:
            write(kpack / f"{artifact}_lib_{target}.kpack", f"{artifact} {target}")


def make_multiarch_tarball_tree(root: Path, targets, manifest_flag=True) -> Path:
    """An extracted multi-arch TheRock tarball: .kpack/ beside bin/ include/ lib/, the host
    libraries without device code, librocm_kpack that loads the packs."""
    make_therock(root, dist_targets=None)
    manifest = root / "share/therock/therock_manifest.json"
    data = json.loads(manifest.read_text()) | {"rocm_package_version": "10.1.0a20260811+bkc.20260814",
                                                "rocm_version": "10.1.0"}
    if manifest_flag:
        data["flags"] = {"KPACK_SPLIT_ARTIFACTS": True}
    manifest.write_text(json.dumps(data))
    shared_library(root / "lib", "librocm_kpack", "1.0")
    add_kernel_packs(root / ".kpack", targets)
    return root


@pytest.mark.parametrize("tarball", [
    "therock-dist-linux-multiarch-10.1.0a20260811+bkc.20260814.tar.gz",  # full multi-arch
    "therock-dist-linux-gfx110X-all-10.1.0a20260811+bkc.20260814.tar.gz",  # per-family multi-arch
])
def test_a_multi_arch_tarball_serves_the_targets_its_packs_hold(tmp_path, capsys, tarball):
    root = make_multiarch_tarball_tree(tmp_path / "install", ["gfx1100", "gfx942", "gfx950"])
    assert finder.main(["--rocm-path", str(root), "--therock-archive", f"https://x/{tarball}"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["layout"], found["rocm_version"], found["rocm_version_number"]) == ("therock", "10.1.0a20260811+bkc.20260814", 100100)
    assert found["rocm_major"] == 10 and found["rocm_version_kind"] == "nightly-bkc"
    therock = found["therock"]
    assert therock["release_format"] == "multi-arch" and therock["device_code_targets"] == ["gfx942", "gfx950", "gfx1100"]
    assert therock["device_code_source"] == f"its kernel packs ({root / '.kpack'})", "read from the packs, not the name"
    # The packs' targets (and generic ones, which need no device code), in clang's order.
    assert therock["allowed_targets"] == ["gfx1100", "gfx942", "gfx950", "gfx9-4-generic"]
    assert "therock-dist-linux-multiarch-" in therock["device_code_remedy"]
    assert found["amdgpu_targets"] == ["gfx942", "gfx950", "gfx1100"] and "kernel packs" in found["amdgpu_targets_origin"]
    packs = {Path(p["path"]).name: p for p in found["kernel_packs"]}
    assert len(packs) == 12 and packs["blas_lib_gfx950.kpack"]["target"] == "gfx950"
    assert "hipblas" in packs["blas_lib_gfx950.kpack"]["libraries"] and packs["rccl_lib_gfx1100.kpack"]["libraries"] == ["rccl"]
    assert sorted(Path(m["path"]).name for m in found["kernel_pack_manifests"]) == [
        "blas_lib.kpm", "fft_lib.kpm", "rand_lib.kpm", "rccl_lib.kpm"]
    assert found["kpack_runtime"].endswith("lib/librocm_kpack.so.1"), "by its soname, as the loader looks it up"


def test_a_per_family_name_does_not_override_the_packs(tmp_path):
    """gfx110X-all's legacy table says gfx1100-gfx1103; the multi-arch tarball of that name
    holds packs for two of them: those two are what it serves."""
    config = finder.find_rocm_config(make_multiarch_tarball_tree(tmp_path / "t", ["gfx1100", "gfx1102"]))
    covered, where = finder.device_code_targets(config, "gfx110X-all")
    assert covered == ["gfx1100", "gfx1102"] and where.startswith("its kernel packs")


def test_a_multi_arch_tree_is_known_by_its_packs_without_the_manifest_flag(tmp_path):
    config = finder.find_rocm_config(make_multiarch_tarball_tree(tmp_path / "t", ["gfx942"], manifest_flag=False))
    assert config.kpack_split and config.therock["release_format"] == "multi-arch"


def test_a_legacy_tarball_keeps_its_family(tmp_path):
    config = finder.find_rocm_config(make_therock(tmp_path / "t", dist_targets=None))
    assert not config.kpack_split and config.kernel_packs == [] and config.kpack_runtime is None
    assert config.therock["release_format"] == "per-family (legacy)"
    assert finder.device_code_targets(config, "gfx94X-dcgpu") == (["gfx942"], "its family gfx94X-dcgpu")


def test_the_full_multiarch_name_is_no_unknown_family(tmp_path):
    """A multiarch tarball whose packs could not be read is limited by nothing its name says
    (it covers every target), never refused as an unknown family."""
    config = finder.find_rocm_config(make_therock(tmp_path / "t", dist_targets=None))
    assert finder.device_code_targets(config, finder.MULTIARCH_FAMILY) == (None, "")
    assert finder.tarball_targets("therock-dist-linux-multiarch-10.1.0a20260811.tar.gz") is None


def test_a_multi_arch_toolkit_without_packs_is_refused_with_the_fix(tmp_path):
    root = make_multiarch_tarball_tree(tmp_path / "t", [])
    config = finder.find_rocm_config(root)
    for requested in ([], ["gfx942"]):
        with pytest.raises(finder.RocmNotFound, match="multi-arch TheRock release without device code.*"
                                                      "therock-dist-linux-multiarch-"):
            finder.answer(config, requested, WHEEL_LIST)


def test_format_text_names_the_release_and_its_packs(tmp_path):
    config = finder.find_rocm_config(make_multiarch_tarball_tree(tmp_path / "t", ["gfx942", "gfx950"]))
    text = finder.format_text(config)
    assert "multi-arch release (nightly-bkc)" in text and "kernel packs    8 for gfx942 gfx950" in text


# ---- TheRock's multi-arch pip packages ---------------------------------------------------

def make_multiarch_pip(site: Path, targets) -> Path:
    """pip install "rocm[libraries,devel,device-<t>...]" from the multi-arch index: the
    architecture-neutral _rocm_sdk_libraries, the device wheels' packs overlaid into it, their
    .dist-info folders; returns _rocm_sdk_devel, what `rocm-sdk path --root` prints."""
    make_therock_pip(site, packages=("_rocm_sdk_libraries",))
    shared_library(site / "_rocm_sdk_core/lib", "librocm_kpack", "1.0")
    add_kernel_packs(site / "_rocm_sdk_libraries/.kpack", targets, artifacts=("blas", "rand"))
    for target in targets:
        (site / f"rocm_sdk_device_{target}-10.1.0a20260811.dist-info").mkdir()
    return site / "_rocm_sdk_devel"


def test_multi_arch_pip_packages_serve_the_installed_device_wheels(tmp_path):
    devel = make_multiarch_pip(tmp_path / "site-packages", ["gfx942", "gfx950"])
    config = finder.find_rocm_config(devel)
    assert (config.layout, config.rocm_toolkit_path, config.rocm_version) == ("therock_pip", str(devel), "7.2.4")
    assert config.therock["pip_device_targets"] == ["gfx942", "gfx950"] and config.therock["family"] is None
    assert finder.device_code_targets(config, "")[0] == ["gfx942", "gfx950"]
    # The runtime libraries are found where pip put them (the core package), before the devel tree.
    assert config.libraries["hip"].library_dir == str(tmp_path / "site-packages/_rocm_sdk_core/lib")
    assert {Path(p["path"]).parent for p in config.kernel_packs} == {tmp_path / "site-packages/_rocm_sdk_libraries/.kpack"}
    found = finder.answer(config, [], WHEEL_LIST)
    assert found["amdgpu_targets"] == ["gfx942", "gfx950"]
    assert 'pip install "rocm[device-<target>]"' in found["therock"]["device_code_remedy"]


def test_the_core_package_root_finds_the_same_pip_toolkit(tmp_path):
    devel = make_multiarch_pip(tmp_path / "site-packages", ["gfx942"])
    config = finder.find_rocm_config(devel.parent / finder.PIP_CORE)
    assert config.layout == "therock_pip" and finder.device_code_targets(config, "")[0] == ["gfx942"]


def test_pip_device_targets_from_dist_info_names():
    names = ["rocm_sdk_device_gfx942-10.1.0a20260811.dist-info", "rocm_sdk_device_gfx1100-7.15.0.dist-info",
             "rocm_sdk_libraries-7.15.0.dist-info", "numpy-2.0.dist-info"]
    assert finder.pip_device_targets(names) == ["gfx942", "gfx1100"]


# ---- AMD SMI -----------------------------------------------------------------------------

@pytest.mark.parametrize("number, has, smi", [
    (70204, {"rocm_smi"}, "rocm_smi"),  # Debian's ROCm 7.2.4
    (71300, {"rocm_smi", "amdsmi"}, "amdsmi"),  # XLA's boundary
    (100100, {"amdsmi"}, "amdsmi"),  # TheRock after #6852
    (100100, {"rocm_smi"}, "rocm_smi"),  # a 10.x tree with only ROCm SMI: link what it has
    (70204, {"amdsmi"}, "amdsmi"),
    (70204, set(), "rocm_smi"),  # neither: XLA's choice, a target that says what to install
])
def test_smi_follows_the_version_and_what_the_toolkit_has(number, has, smi):
    libraries = {name: object() for name in ("hip", "rocm_smi", "amdsmi") if name in has | {"hip"}}
    assert finder.smi_library(number, libraries, {}) == smi


def test_amd_smi_is_a_library_the_finder_reads(tmp_path):
    """A stub amd-smi (an empty header and a library of the real name): Debian packages none."""
    root = make_therock(tmp_path / "t")
    write(root / "include/amd_smi/amdsmi.h", "#pragma once\n")
    shared_library(root / "lib", "libamd_smi", "27.0")
    config = finder.find_rocm_config(root)
    assert config.libraries["amdsmi"].soname_file == "libamd_smi.so.27" and "rocm_smi" not in config.libraries
    assert "amdsmi" not in config.missing_libraries and "rocm_smi" in config.missing_libraries


# ---- ci_build: a target the packs lack, refused before the sandbox ------------------------

def multiarch_tarball(path: Path, targets) -> Path:
    """A small multi-arch TheRock tarball (one top folder, a manifest, .kpack/ with packs)."""
    from tests.unit.test_ci_build import therock_tarball
    entries = {"install/share/therock/therock_manifest.json": b'{"rocm_package_version": "10.1.0a20260811"}',
               "install/lib/libamdhip64.so.7": b"elf", "install/.kpack/blas_lib.kpm": b"manifest"}
    entries |= {f"install/.kpack/blas_lib_{t}.kpack": b"pack" for t in targets}
    return therock_tarball(path, entries)


@pytest.mark.parametrize("name", ["therock-dist-linux-multiarch-10.1.0a20260811.tar.gz",
                                  "therock-dist-linux-gfx110X-all-10.1.0a20260811.tar.gz"])
def test_ci_build_refuses_a_target_a_multi_arch_tarballs_packs_lack(recorded, tmp_path, capsys, name):
    from ci_build_cli import cli
    from tests.unit.test_ci_build import one_error_line
    tarball = multiarch_tarball(tmp_path / name, ["gfx1100", "gfx1101"])
    assert cli.main(["--amdgpu-targets=gfx1100,gfx1102", f"--therock-path={tarball}", "--sources=examples",
                     "--dry-run", "dist_wheels"]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"ci_build: --amdgpu-targets=gfx1100,gfx1102 asks for gfx1102, but the multi-arch TheRock "
                           f"tarball {name} holds kernel packs for gfx1100 gfx1101 only: name those, or, for gfx1102, ")
    assert "the full therock-dist-linux-multiarch-10.1.0a20260811.tar.gz" in line, "named with the release at hand"
    assert recorded == [], "nothing ran: no sandbox, no Bazel"


def test_ci_build_plans_a_multi_arch_tarball_of_rocm10(recorded, tmp_path, capsys):
    from ci_build_cli import cli
    tarball = multiarch_tarball(tmp_path / "therock-dist-linux-multiarch-10.1.0a20260811+bkc.20260814.tar.gz", ["gfx942"])
    assert cli.main(["--amdgpu-targets=gfx942", f"--therock-path={tarball}", "--sources=examples",
                     "--dry-run", "dist_wheels"]) == 0
    assert any(f"--repo_env=THEROCK_URL=file://{tarball}" in cmd for cmd, _ in recorded)


def test_ci_build_refuses_a_target_a_multi_arch_folder_lacks(recorded, tmp_path, capsys):
    from ci_build_cli import cli
    from tests.unit.test_ci_build import one_error_line
    devel = make_multiarch_pip(tmp_path / "site-packages", ["gfx942"])
    assert cli.main(["--amdgpu-targets=gfx950", f"--rocm-path={devel}", "--sources=examples",
                     "--dry-run", "dist_wheels"]) == 2
    line = one_error_line(capsys)
    assert f"asks for gfx950, but the toolkit at {devel} holds kernel packs for gfx942 only" in line
    assert 'pip install "rocm[device-gfx950]"' in line and recorded == []


@pytest.mark.parametrize("version, major", [("10.1.0a20260811+bkc.20260814", 10), ("10.0.0rc1", 10),
                                            ("7.13.0a20260430", 7)])
def test_a_rocm10_tarball_name_plans_jax_rocm10_wheels(recorded, capsys, version, major):
    from ci_build_cli import cli
    url = f"https://rocm.nightlies.amd.com/tarball-multi-arch/therock-dist-linux-multiarch-{version}.tar.gz"
    assert cli.main([f"--therock-path={url}", "--therock-sha256=" + "ab" * 32, "--sources=examples",
                     "--dry-run", "dist_wheels"]) == 0
    err = capsys.readouterr().err
    assert f"is ROCm {version} (" in err and f"wheels jax_rocm{major}_pjrt and jax_rocm{major}_plugin" in err


@pytest.mark.parametrize("text, local", [
    ("7.2.4", "rocm7.2.4"), ("6.4.3-128", "rocm6.4.3"), ("10.1.0rc1", "rocm10.1.0rc1"),
    ("7.10.0a20251120", "rocm7.10.0a20251120"),
    ("10.1.0a20260811+bkc.20260814", "rocm10.1.0a20260811.bkc.20260814"),
    ("10.1.0.dev0+efed3c3b", "devrocm10.1.0.dev0.efed3c3b"),
])
def test_the_wheels_local_version_is_therocks_composite(text, local):
    """A wheel's local version holds no '+' (the wheel builder refuses one: a BKC toolkit could not
    make wheels); TheRock's own framework wheels spell these the same way, and sort stable >
    nightly > dev as the releases do."""
    assert finder.parse_rocm_version(text).wheel_local == local
    assert str(Version(f"0.12.0+{local}")) == f"0.12.0+{local}", "canonical as PEP 440 writes it"
    assert Version("0.12.0+rocm10.1.0") > Version("0.12.0+rocm10.1.0a20260811.bkc.20260814") > Version(
        "0.12.0+rocm10.1.0a20260811") > Version("0.12.0+devrocm10.1.0.dev0.efed3c3b")
