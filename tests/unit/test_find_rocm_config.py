"""find_rocm_config.py and extract_archive.py against synthetic toolkits and hostile input.

The synthetic trees hold the files each layout really installs (version
headers, CMake version files, library symlink chains) with made-up contents;
their `clang` is a small script that answers --version and
--print-supported-cpus the way clang 22 does. The real toolkit is exercised
in tests/bazel/test_rocm_configure.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from tests.conftest import CHECKOUT
from tests.infra.archives import tar_of
from third_party.gpus import extract_archive as extractor, find_rocm_config as finder

pytestmark = pytest.mark.unit

FAKE_CLANG = """#!/bin/sh
case "$*" in
  *--print-supported-cpus*) printf 'clang version {v}\\nTarget: amdgcn-amd-amdhsa\\nAvailable CPUs for this target:\\n\\n\\tgfx1100\\n\\tgfx90a\\n\\tgfx942\\n\\tgfx950\\n\\tgfx9-4-generic\\n\\ttahiti\\n\\nUse -mcpu or -mtune to specify the target.\\n' >&2 ;;
  *--version*) echo "clang version {v} (fake)" ;;
esac
"""  # noqa: E501 (clang's answer, one printf)


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def shared_library(libdir: Path, stem: str, version: str) -> None:
    """lib.so -> lib.so.MAJOR -> lib.so.FULL, as packages install them."""
    major = version.split(".")[0]
    write(libdir / f"{stem}.so.{version}", "ELF")
    os.symlink(f"{stem}.so.{version}", libdir / f"{stem}.so.{major}")
    os.symlink(f"{stem}.so.{major}", libdir / f"{stem}.so")


def hip_headers(include: Path, version: str = "7.2.53211") -> None:
    major, minor, patch = version.split(".")
    write(include / "hip/hip_runtime.h", "#pragma once\n")
    write(include / "hip/hip_version.h",
          f"#define HIP_VERSION_H\n\n#define HIP_VERSION_MAJOR {major}\n#define HIP_VERSION_MINOR {minor}\n"
          f"#define HIP_VERSION_PATCH {patch}\n")
    write(include / "hsa/hsa.h", "#pragma once\n")


def clang(path: Path, version: str = "22.1.8") -> Path:
    write(path, FAKE_CLANG.format(v=version))
    path.chmod(0o755)
    return path


def make_multiarch(root: Path) -> Path:
    inc, lib = root / "include", root / "lib/x86_64-linux-gnu"
    hip_headers(inc)
    write(inc / "rocm-core/rocm_version.h",
          "#define ROCM_VERSION_MAJOR   7\n#define ROCM_VERSION_MINOR   2\n#define ROCM_VERSION_PATCH   4\n")
    os.symlink(".", inc / "hsa" / "hsa")  # the loop Debian really ships
    shared_library(lib, "libamdhip64", "7.2.53211")
    write(lib / "cmake/hip/hip-config-version.cmake", 'set(PACKAGE_VERSION "7.2.53211")\n')
    write(inc / "rocblas/rocblas.h")
    write(inc / "rocblas/internal/rocblas-version.h",
          "#define ROCBLAS_VERSION_MAJOR 5\n#define ROCBLAS_VERSION_MINOR 2\n#define ROCBLAS_VERSION_PATCH 0\n")
    shared_library(lib, "librocblas", "5.2")
    shared_library(lib, "librocsolver", "0.7")  # runtime only: no headers
    os.unlink(lib / "librocsolver.so")
    write(inc / "rocprim/rocprim.hpp")
    write(inc / "rocprim/rocprim_version.hpp",
          "#define ROCPRIM_VERSION_MAJOR 4\n#define ROCPRIM_VERSION_MINOR 2\n#define ROCPRIM_VERSION_PATCH 0\n")
    clang(root / "lib/llvm-22/bin/clang")
    write(root / "lib/llvm-22/bin/clang-offload-bundler", "#!/bin/sh\n").chmod(0o755)
    write(root / "lib/llvm-22/lib/clang/22/amdgcn/bitcode/ocml.bc")
    clang(root / "lib/llvm-19/bin/clang", "19.1.0")
    return root


def make_opt_rocm(root: Path, info: str = "6.4.3-128\n") -> Path:
    hip_headers(root / "include", "6.4.43483")
    write(root / ".info/version", info)
    shared_library(root / "lib", "libamdhip64", "6.4.60403")
    clang(root / "llvm/bin/clang", "19.0.0")
    write(root / "amdgcn/bitcode/ocml.bc")
    write(root / "bin/hipcc", "#!/bin/sh\n").chmod(0o755)
    return root


def make_therock(root: Path, dist_targets: str | None = "gfx942") -> Path:
    hip_headers(root / "include", "7.10.25464")
    write(root / "share/therock/therock_manifest.json",
          json.dumps({"the_rock_commit": "abc123", "rocm_version": "7.10.0", "rocm_package_version": "7.10.0a20251120"}))
    if dist_targets is not None:
        write(root / "share/therock/dist_info.json", json.dumps({"dist_amdgpu_targets": dist_targets}))
    shared_library(root / "lib", "libamdhip64", "7.10.25464")
    (root / "lib/rocm_sysdeps/lib").mkdir(parents=True)
    clang(root / "lib/llvm/bin/clang", "20.0.0")
    write(root / "lib/llvm/amdgcn/bitcode/ocml.bc")
    return root


def test_multiarch_layout(tmp_path):
    config = finder.find_rocm_config(make_multiarch(tmp_path / "usr"))
    assert (config.layout, config.rocm_version, config.rocm_version_number) == ("multiarch", "7.2.4", 70204)
    assert config.rocm_version_source.endswith("rocm-core/rocm_version.h")
    assert config.hip_version == "7.2.53211"
    assert config.clang_path.endswith("lib/llvm-22/bin/clang") and config.clang_version == "22.1.8"
    assert config.offload_bundler_path == str(tmp_path / "usr/lib/llvm-22/bin/clang-offload-bundler"), "clang's own, beside it"
    assert config.device_libs_path.endswith("lib/llvm-22/lib/clang/22/amdgcn/bitcode")
    assert config.amdgpu_targets_supported[:4] == ["gfx1100", "gfx90a", "gfx942", "gfx950"]
    assert "tahiti" not in config.amdgpu_targets_supported and "gfx9-4-generic" in config.amdgpu_targets_supported
    libs = config.libraries
    assert libs["hip"].version == "7.2.53211" and libs["hip"].version_source.endswith("hip-config-version.cmake")
    assert libs["hip"].soname_file == "libamdhip64.so.7"
    assert "hsa/hsa.h" in libs["hip"].headers and not any("hsa/hsa/" in h for h in libs["hip"].headers)
    assert (libs["rocblas"].version, libs["rocblas"].soname_file) == ("5.2.0", "librocblas.so.5")
    assert libs["rocsolver"].version == "0.7" and libs["rocsolver"].include_dir is None
    assert libs["rocprim"].library is None and libs["rocprim"].version == "4.2.0"
    assert "miopen" not in libs
    # Without headers a library cannot be compiled against: reported with the package to install.
    assert config.missing_libraries["miopen"] == "libmiopen-dev"
    assert config.missing_libraries["rocsolver"] == "librocsolver-dev", "a runtime without its -dev headers"
    assert "hip" not in config.missing_libraries and "rocblas" not in config.missing_libraries
    # ... and its header's path is watched: installing the package refreshes the repository.
    assert str(Path(config.rocm_toolkit_path) / "include" / "miopen" / "miopen.h") in config.awaited_headers
    assert len(config.awaited_headers) == len(config.missing_libraries)
    assert set(finder.DEBIAN_DEV_PACKAGES) == {spec.name for spec in finder.LIBRARIES}


def test_rocm_smi_brings_the_libdrm_headers_its_kfd_header_includes(tmp_path):
    """rocm_smi.h -> kfd_ioctl.h -> <libdrm/drm.h>: XLA main's rocm_smi users need libdrm's
    headers from the toolkit's include folder (the manylinux toolchain searches no /usr/include)."""
    root = make_multiarch(tmp_path / "usr")
    write(root / "include/rocm_smi/rocm_smi.h")
    write(root / "include/rocm_smi/kfd_ioctl.h", "#include <libdrm/drm.h>\n")
    write(root / "include/libdrm/drm.h")
    shared_library(root / "lib/x86_64-linux-gnu", "librocm_smi64", "7.0")
    headers = finder.find_rocm_config(root).libraries["rocm_smi"].headers
    assert {"rocm_smi/rocm_smi.h", "rocm_smi/kfd_ioctl.h", "libdrm/drm.h"} <= set(headers)
    # A toolkit without libdrm's headers (TheRock's keep theirs elsewhere) still has rocm_smi.
    (root / "include/libdrm/drm.h").unlink()
    assert "libdrm/drm.h" not in finder.find_rocm_config(root).libraries["rocm_smi"].headers


def test_opt_rocm_layout_reads_info_version(tmp_path):
    config = finder.find_rocm_config(make_opt_rocm(tmp_path / "rocm-6.4.3"))
    assert (config.layout, config.rocm_version, config.rocm_version_number) == ("opt_rocm", "6.4.3", 60403)
    assert (config.rocm_release, config.rocm_major) == ("6.4.3", 6)
    assert config.libraries["hip"].version == "6.4.43483"  # hip_version.h: no CMake files in this tree
    assert config.libraries["hip"].version_source.endswith("include/hip/hip_version.h")
    assert config.hipcc_path.endswith("bin/hipcc")


def test_version_never_comes_from_the_folder_name(tmp_path):
    root = make_opt_rocm(tmp_path / "rocm-9.9.9", info="6.4.1-77\n")
    assert finder.find_rocm_config(root).rocm_version == "6.4.1"


def test_therock_layout_and_target_coverage(tmp_path):
    config = finder.find_rocm_config(make_therock(tmp_path / "therock"))
    assert (config.layout, config.rocm_version, config.rocm_version_number) == ("therock", "7.10.0a20251120", 71000)
    # What the wheels are named and described with: the release without TheRock's suffix.
    assert (config.rocm_release, config.rocm_major) == ("7.10.0", 7)
    assert config.therock["dist_amdgpu_targets"] == ["gfx942"]
    covered, where = finder.device_code_targets(config, "")
    assert (covered, where) == (["gfx942"], "its share/therock/dist_info.json")
    assert finder.uncovered_targets(["gfx942", "gfx9-4-generic", "gfx1100"], covered) == ["gfx1100"]


@pytest.mark.parametrize("package_version, tarball, release, number, family, covered", [
    # TheRock's first official release: no aYYYYMMDD suffix.
    ("7.14.0", "therock-dist-linux-gfx94X-dcgpu-7.14.0.tar.gz", "7.14.0", 71400, "gfx94X-dcgpu", ["gfx942"]),
    # ROCm 10 nightlies: the wheels become jax_rocm10_*.
    ("10.1.0a20261101", "therock-dist-linux-gfx950-dcgpu-10.1.0a20261101.tar.gz", "10.1.0", 100100, "gfx950-dcgpu", ["gfx950"]),
    # Single-target tarballs (XLA main's table names gfx908 and gfx90a ones; gfx1151 exists too).
    ("7.13.0", "therock-dist-linux-gfx908-7.13.0.tar.gz", "7.13.0", 71300, "gfx908", ["gfx908"]),
    ("7.14.0", "therock-dist-linux-gfx1151-7.14.0.tar.gz", "7.14.0", 71400, "gfx1151", ["gfx1151"]),
])
def test_therock_ga_rocm10_and_single_target_releases(tmp_path, capsys, package_version, tarball, release, number, family, covered):
    root = make_therock(tmp_path / "therock", dist_targets=None)
    # A clang that knows the single targets too (the default fake knows five).
    write(root / "lib/llvm/bin/clang", FAKE_CLANG.format(v="20.0.0").replace("\\tgfx1100", "\\tgfx1100\\n\\tgfx1151\\n\\tgfx908"))
    manifest = root / "share/therock/therock_manifest.json"
    manifest.write_text(json.dumps({"the_rock_commit": "abc123", "rocm_version": release, "rocm_package_version": package_version}))
    config = finder.find_rocm_config(root)
    assert (config.rocm_version, config.rocm_version_number) == (package_version, number)
    assert (config.rocm_release, config.rocm_major) == (release, int(release.split(".")[0]))
    assert finder.therock_family_from_url(f"https://repo.amd.com/rocm/tarball/{tarball}") == family
    assert finder.therock_version_from_url(tarball) == package_version
    # The family read from the tarball's name limits the device code, as the repository rule passes it.
    assert finder.main(["--rocm-path", str(root), "--therock-archive", f"file:///x/{tarball}", "--format", "json"]) == 0
    therock = json.loads(capsys.readouterr().out)["therock"]
    assert therock["family"] == family and therock["device_code_targets"] == covered


def test_allowed_targets_are_what_the_compiler_knows_that_the_policy_leaves():
    """What the analysis check looks requested targets up in (rocm/private/amdgpu_targets.bzl)."""
    supported = ["gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx9-4-generic"]
    assert finder.allowed_targets(supported, ["gfx942", "gfx950", "gfx1201"]) == ["gfx942", "gfx950", "gfx9-4-generic"]
    assert finder.allowed_targets(supported, None) is None, "no device-code limit: no list to look up"
    for target in supported:
        allowed = target in finder.allowed_targets(supported, ["gfx942"])
        assert allowed == (not finder.uncovered_targets([target], ["gfx942"])), target


def test_the_json_of_a_therock_toolkit_names_its_allowed_targets(tmp_path, capsys):
    root = make_therock(tmp_path / "therock")
    assert finder.main(["--rocm-path", str(root), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    therock = data["therock"]
    assert therock["device_code_targets"] == ["gfx942"]
    # JAX's list narrowed to the toolkit's device code: what the repository rule then says.
    assert data["amdgpu_targets_note"].startswith("amdgpu targets gfx942 (default: JAX's wheel list limited"), data["amdgpu_targets_note"]
    assert "gfx942" in therock["allowed_targets"] and "gfx90a" not in therock["allowed_targets"]


def test_the_answer_is_built_once_and_leaves_the_toolkit_as_found(tmp_path):
    """answer() is rocm_config.json's whole content; the toolkit's description is not patched."""
    config = finder.find_rocm_config(make_therock(tmp_path / "therock"))
    before = config.to_json()
    found = finder.answer(config, [], list(finder.DEFAULT_AMDGPU_TARGETS), "gfx94X-dcgpu")
    assert config.to_json() == before
    assert found["therock"]["family"] == "gfx94X-dcgpu" and found["therock"]["device_code_targets"] == ["gfx942"]
    assert found["amdgpu_targets"] == ["gfx942"] and found["rocm_version"] == config.rocm_version
    assert finder.answer(config, ["gfx90a"], [])["amdgpu_targets_origin"] == "requested (TF_ROCM_AMDGPU_TARGETS)"


def test_therock_family_from_file_name_when_no_dist_info(tmp_path):
    config = finder.find_rocm_config(make_therock(tmp_path / "t", dist_targets=None))
    url = "https://rocm.nightlies.amd.com/tarball/therock-dist-linux-gfx110X-all-7.10.0a20251120.tar.gz"
    family = finder.therock_family_from_url(url)
    assert family == "gfx110X-all"
    covered, where = finder.device_code_targets(config, family)
    assert "gfx1100" in covered and where == "its family gfx110X-all"
    assert finder.uncovered_targets(["gfx1100", "gfx942"], covered) == ["gfx942"]
    assert finder.suggest_family(["gfx942"]) == "gfx94X-dcgpu"


def make_therock_pip(site: Path, packages=("_rocm_sdk_libraries_gfx94X_dcgpu",)) -> Path:
    """TheRock's pip layout: `rocm-sdk path --root` is site/_rocm_sdk_core (runtime libraries),
    with headers and the compiler in _rocm_sdk_devel and the math libraries in
    _rocm_sdk_libraries[_<family>]."""
    core, devel = site / "_rocm_sdk_core", site / "_rocm_sdk_devel"
    shared_library(core / "lib", "libamdhip64", "7.2.53211")
    hip_headers(devel / "include")
    write(devel / "include/rocm-core/rocm_version.h",
          "#define ROCM_VERSION_MAJOR 7\n#define ROCM_VERSION_MINOR 2\n#define ROCM_VERSION_PATCH 4\n")
    write(devel / "include/hipsolver/hipsolver.h")
    clang(devel / "lib/llvm/bin/clang")
    write(devel / "lib/llvm/amdgcn/bitcode/ocml.bc")
    write(devel / "bin/hipcc", "#!/bin/sh\n").chmod(0o755)
    for package in packages:
        shared_library(site / package / "lib", "libhipsolver", "1.0")
    return core


def test_therock_pip_layout_finds_the_sibling_packages(tmp_path):
    core = make_therock_pip(tmp_path / "site-packages")
    config = finder.find_rocm_config(core)
    assert (config.layout, config.rocm_version, config.rocm_toolkit_path) == ("therock_pip", "7.2.4", str(core))
    site = tmp_path / "site-packages"
    assert config.libraries["hip"].library_dir == str(core / "lib")
    assert config.libraries["hip"].include_dir == str(site / "_rocm_sdk_devel/include")
    assert config.libraries["hipsolver"].library_dir == str(site / "_rocm_sdk_libraries_gfx94X_dcgpu/lib")
    assert config.libraries["hipsolver"].include_dir == str(site / "_rocm_sdk_devel/include")
    assert "hipsolver" not in config.missing_libraries
    assert config.clang_path == str(site / "_rocm_sdk_devel/lib/llvm/bin/clang")
    assert config.hipcc_path == str(site / "_rocm_sdk_devel/bin/hipcc")
    assert config.device_libs_path == str(site / "_rocm_sdk_devel/lib/llvm/amdgcn/bitcode")
    assert config.therock["family"] == "gfx94X-dcgpu"
    # The family limits the default targets, as a tarball's does.
    choice = finder.choose_targets(config, [], WHEEL_LIST, config.therock["family"])
    assert choice.targets == ["gfx942"] and choice.device_code_source == "its family gfx94X-dcgpu"


def test_therock_pip_multi_arch_has_no_family(tmp_path):
    core = make_therock_pip(tmp_path / "site-packages", packages=("_rocm_sdk_libraries",))
    config = finder.find_rocm_config(core)
    assert config.layout == "therock_pip" and config.therock["family"] is None
    assert config.libraries["hipsolver"].library_dir == str(tmp_path / "site-packages/_rocm_sdk_libraries/lib")
    assert finder.device_code_targets(config, "") == (None, "")  # nothing limits the targets


@pytest.mark.parametrize("package, family", [("_rocm_sdk_libraries_gfx94X_dcgpu", "gfx94X-dcgpu"),
                                             ("_rocm_sdk_libraries_gfx120X_all", "gfx120X-all"),
                                             ("_rocm_sdk_libraries_gfx90a", "gfx90a"),
                                             ("_rocm_sdk_libraries", None), ("_rocm_sdk_core", None)])
def test_pip_family(package, family):
    assert finder.pip_family(package) == family


def test_therock_pip_cli_records_the_family(tmp_path):
    core = make_therock_pip(tmp_path / "site-packages")
    result = subprocess.run([sys.executable, str(CHECKOUT / "third_party/gpus/find_rocm_config.py"), "--rocm-path", str(core),
                             "--default-targets", ",".join(WHEEL_LIST)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["layout"] == "therock_pip" and data["therock"]["family"] == "gfx94X-dcgpu"
    assert data["amdgpu_targets"] == ["gfx942"]


# ---- default amdgpu targets with a TheRock family ---------------------------

WHEEL_LIST = ["gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201"]


def test_default_targets_without_a_limit_are_the_wheel_list():
    targets, why = finder.default_targets(WHEEL_LIST, None)
    assert targets == WHEEL_LIST and targets is not WHEEL_LIST
    assert why == "default: JAX's wheel list"


@pytest.mark.parametrize("family, expected", [
    ("gfx94X-dcgpu", ["gfx942"]),
    ("gfx950-dcgpu", ["gfx950"]),
    ("gfx90X-dcgpu", ["gfx908", "gfx90a"]),
    ("dcgpu-all", ["gfx908", "gfx90a", "gfx942", "gfx950"]),
    ("gfx110X-dgpu", ["gfx1100", "gfx1101"]),  # gfx1102 is in the family, not in the wheel list
    ("gfx120X-all", ["gfx1200", "gfx1201"]),
])
def test_default_targets_are_the_wheel_list_within_the_family(family, expected):
    targets, why = finder.default_targets(WHEEL_LIST, finder.family_targets(family), f"its family {family}")
    assert targets == expected
    assert f"limited to the TheRock toolkit's device code (its family {family}:" in why


@pytest.mark.parametrize("family", ["gfx115X-igpu", "gfx101X-dgpu", "gfx1036"])
def test_default_targets_are_the_familys_own_when_the_wheel_list_misses_it(family):
    targets, why = finder.default_targets(WHEEL_LIST, finder.family_targets(family), f"its family {family}")
    assert targets == list(finder.family_targets(family))
    assert why == f"default: the TheRock toolkit's device code (its family {family}), none of which is in JAX's wheel list"


def test_device_code_targets_prefers_dist_info_then_the_family(tmp_path):
    with_dist = finder.find_rocm_config(make_therock(tmp_path / "a", dist_targets="gfx942;gfx950"))
    assert finder.device_code_targets(with_dist, "gfx110X-all") == (["gfx942", "gfx950"], "its share/therock/dist_info.json")
    without = finder.find_rocm_config(make_therock(tmp_path / "b", dist_targets=None))
    assert finder.device_code_targets(without, "gfx950-dcgpu") == (["gfx950"], "its family gfx950-dcgpu")
    assert finder.device_code_targets(without, "") == (None, "")
    assert finder.device_code_targets(finder.find_rocm_config(make_multiarch(tmp_path / "usr")), "gfx950-dcgpu") == (None, "")
    with pytest.raises(finder.RocmNotFound, match=r"unknown TheRock family 'gfx999Z-weird'.*known: gfx90X-dcgpu .*Rename the tarball"):
        finder.device_code_targets(without, "gfx999Z-weird")


def test_choose_targets_defaults_to_the_family_and_takes_requested_ones_as_asked(tmp_path):
    config = finder.find_rocm_config(make_therock(tmp_path / "t", dist_targets=None))
    choice = finder.choose_targets(config, [], WHEEL_LIST, "gfx950-dcgpu")
    assert (choice.targets, choice.device_code_targets, choice.device_code_source) == (["gfx950"], ["gfx950"], "its family gfx950-dcgpu")
    assert choice.origin.startswith("default: JAX's wheel list limited to")
    requested = finder.choose_targets(config, ["gfx950", "gfx9-4-generic"], WHEEL_LIST, "gfx950-dcgpu")
    assert requested.targets == ["gfx950", "gfx9-4-generic"] and requested.origin == "requested (TF_ROCM_AMDGPU_TARGETS)"
    # Outside the family: recorded with the limit; the analysis-time check refuses it (one check).
    outside = finder.choose_targets(config, ["gfx942"], WHEEL_LIST, "gfx950-dcgpu")
    assert (outside.targets, outside.device_code_targets) == (["gfx942"], ["gfx950"])


def test_choose_targets_refuses_defaults_clang_does_not_know(tmp_path):
    config = finder.find_rocm_config(make_therock(tmp_path / "t", dist_targets=None))  # its clang: gfx1100 gfx90a gfx942 gfx950
    with pytest.raises(finder.RocmNotFound, match=r"default amdgpu target\(s\) gfx1200, gfx1201 are unknown to .*TF_ROCM_AMDGPU_TARGETS"):
        finder.choose_targets(config, [], WHEEL_LIST, "gfx120X-all")


def test_cli_records_the_chosen_targets_and_the_family(tmp_path):
    root = make_therock(tmp_path / "t", dist_targets=None)
    finder_py = str(CHECKOUT / "third_party/gpus/find_rocm_config.py")
    out = subprocess.run([sys.executable, finder_py, "--rocm-path", str(root), "--default-targets", ",".join(WHEEL_LIST),
                          "--therock-family", "gfx94X-dcgpu"], capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    assert data["amdgpu_targets"] == ["gfx942"] and data["amdgpu_targets_origin"].startswith("default: JAX's wheel list limited")
    assert data["therock"]["family"] == "gfx94X-dcgpu"
    assert (data["therock"]["device_code_targets"], data["therock"]["device_code_source"]) == (["gfx942"], "its family gfx94X-dcgpu")
    # Requested targets are recorded as asked, with what the build checks them against at analysis
    # (rocm/private/amdgpu_targets.bzl): clang's targets and the family's device code.
    asked = json.loads(subprocess.run([sys.executable, finder_py, "--rocm-path", str(root), "--require-targets", "gfx950",
                                       "--therock-family", "gfx94X-dcgpu"], capture_output=True, text=True, check=True).stdout)
    assert (asked["amdgpu_targets"], asked["amdgpu_targets_origin"]) == (["gfx950"], "requested (TF_ROCM_AMDGPU_TARGETS)")
    assert asked["therock"]["device_code_targets"] == ["gfx942"] and "gfx950" in asked["amdgpu_targets_supported"]


def test_split_targets():
    assert finder.split_targets("gfx942, gfx950;gfx1100 gfx1201,,") == ["gfx942", "gfx950", "gfx1100", "gfx1201"]
    assert finder.split_targets("") == []
    # Tabs and newlines separate too, and a repeat is named once (as split_amdgpu_targets does).
    assert finder.split_targets("gfx942\tgfx950\n;gfx942") == ["gfx942", "gfx950"]


def test_pip_families_hold_every_tarball_family():
    """The link_only RUNPATH searches a pip package of each family a tarball may be of; the
    others are single targets, each a family of its own (family_targets)."""
    pip = finder.THEROCK_PIP_FAMILIES
    assert len(set(pip)) == len(pip) and set(finder.THEROCK_FAMILIES) <= set(pip)
    assert all(finder.family_targets(f) == (f,) for f in set(pip) - set(finder.THEROCK_FAMILIES))


@pytest.mark.parametrize("remove, message", [
    ("include/hip/hip_version.h", "HIP headers not found .* searched .*hip_version.h; install"),
    ("lib/x86_64-linux-gnu/libamdhip64.so*", "libamdhip64 not found: searched .*x86_64-linux-gnu; install"),
    ("lib/llvm-*", "no clang with the AMDGPU backend: tried .*install"),
    ("include/rocm-core", "cannot tell which ROCm release .*rocm_version.h; install rocm-core"),
])
def test_missing_requirements_say_what_was_searched(tmp_path, remove, message):
    root = make_multiarch(tmp_path / "usr")
    for path in root.glob(remove):
        subprocess.run(["rm", "-rf", str(path)], check=True)
    with pytest.raises(finder.RocmNotFound, match=message):
        finder.find_rocm_config(root)


def test_cli_error_is_one_line_and_nonzero(tmp_path):
    result = subprocess.run([sys.executable, str(CHECKOUT / "third_party/gpus/find_rocm_config.py"), "--rocm-path", str(tmp_path)],
                            capture_output=True, text=True)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "is not a ROCm toolkit" in result.stderr


def test_the_default_targets_are_jaxs_wheel_list_checked_against_the_compiler(tmp_path):
    """Without --default-targets the finder wants JAX's wheel list, as the build does; a clang
    that lacks some of them is refused naming them and the variable to set."""
    root = make_multiarch(tmp_path / "usr")  # its clang knows gfx90a gfx942 gfx950 gfx1100 only
    result = subprocess.run([sys.executable, str(CHECKOUT / "third_party/gpus/find_rocm_config.py"), "--rocm-path", str(root)],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "the default amdgpu target(s) gfx908, gfx1030, gfx1101, gfx1200, gfx1201 are unknown" in result.stderr
    assert "TF_ROCM_AMDGPU_TARGETS" in result.stderr


def test_cli_json_has_the_promised_keys(tmp_path):
    root = make_multiarch(tmp_path / "usr")
    out = subprocess.run([sys.executable, str(CHECKOUT / "third_party/gpus/find_rocm_config.py"), "--rocm-path", str(root),
                          "--default-targets", "gfx942,gfx950"], capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    for key in ("rocm_toolkit_path", "layout", "rocm_version", "rocm_version_number", "hip_version", "hip_version_number",
                "clang_path", "clang_version", "offload_bundler_path",
                "hipcc_path", "device_libs_path", "amdgpu_targets_supported", "libraries",
                "amdgpu_targets", "amdgpu_targets_origin", "amdgpu_targets_note", "rocm_release", "rocm_major"):
        assert key in data
    assert data["therock_pip_families"] == list(finder.THEROCK_PIP_FAMILIES), "third_party/gpus/private/runpath.bzl's, as data"
    assert data["amdgpu_targets"] == ["gfx942", "gfx950"] and data["amdgpu_targets_note"] == "", "the defaults held as given"
    assert set(data["libraries"]["rocblas"]) >= {"version", "version_number", "include_dir", "library_dir", "library"}


# ---- fuzzing: garbage never crashes the parsers ---------------------------

garbage = st.text(alphabet=st.characters(codec="utf-8"), max_size=200)


@given(garbage)
@settings(max_examples=300, deadline=None)
def test_version_parsers_are_total(text):
    for parse in (finder.parse_dotted, finder.info_version, finder.cmake_package_version, finder.clang_version):
        parse(text)
    finder.version_from_macros(finder.header_macros(text, "HIP_VERSION"))
    finder.soname_version(text, "libamdhip64")
    finder.amdgpu_processors(text)
    finder.therock_family_from_url(text)


@given(garbage)
@settings(max_examples=60, deadline=None)
def test_garbage_version_files_are_reported_not_fatal(tmp_path_factory, text):
    root = make_opt_rocm(tmp_path_factory.mktemp("r"), info=text)
    write(root / "include/rocm-core/rocm_version.h",
          "#define ROCM_VERSION_MAJOR 6\n#define ROCM_VERSION_MINOR 4\n#define ROCM_VERSION_PATCH 3\n")
    config = finder.find_rocm_config(root)
    if finder.info_version(text) is None:
        assert config.rocm_version == "6.4.3"
        assert any(".info/version" in w for w in config.warnings)
    else:
        assert config.rocm_version == finder.info_version(text)


@given(st.tuples(st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)))
def test_version_number_matches_xla_encoding(v):
    assert finder.version_number(v) == v[0] * 10000 + v[1] * 100 + v[2]
    assert finder.parse_dotted(".".join(map(str, v))) == v


# ---- the tarball extractor -------------------------------------------------


def tarball(path: Path, entries) -> Path:
    return tar_of(path, entries)


GOOD = [("rock/lib", "dir", None), ("rock/lib/libx.so.1", "file", b"x"), ("rock/lib/libx.so", "symlink", "libx.so.1")]


# The extractor relies on tarfile's data filter (PEP 706); an older Python is refused, not trusted.
needs_data_filter = pytest.mark.skipif(
    not hasattr(tarfile, "data_filter"),
    reason=f"Python {sys.version.split()[0]} lacks tarfile's data filter: the extractor refuses to run "
           "(test_extract_on_a_python_without_the_data_filter_refuses_to_run); run the tests with 3.11.4+ or 3.12+")


@pytest.mark.skipif(hasattr(tarfile, "data_filter"), reason=f"Python {sys.version.split()[0]} has the data filter")
def test_extract_on_a_python_without_the_data_filter_refuses_to_run(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(extractor.UnsafeArchive, match="lacks tarfile's data filter .* use a newer python3"):
        extractor.extract(tarball(tmp_path / "t.tar.gz", GOOD), out, "rock")
    assert not out.exists()


@needs_data_filter
def test_extract_strips_prefix_and_keeps_inner_links(tmp_path):
    out = tmp_path / "out"
    assert extractor.extract(tarball(tmp_path / "t.tar.gz", GOOD), out, "rock") == 3
    assert (out / "lib/libx.so").read_text() == "x" and os.readlink(out / "lib/libx.so") == "libx.so.1"


@pytest.mark.parametrize("bad, why", [
    (("rock/../../evil", "file", b"!"), "outside"),
    (("/etc/evil", "file", b"!"), "absolute|outside"),
    (("rock/lib/escape", "symlink", "../../../../etc/passwd"), "outside"),
    (("rock/lib/abs", "symlink", "/etc/passwd"), "absolute|outside"),
])
@needs_data_filter
def test_extract_refuses_escaping_entries_and_leaves_nothing(tmp_path, bad, why):
    out = tmp_path / "out"
    with pytest.raises(extractor.UnsafeArchive, match=why):
        extractor.extract(tarball(tmp_path / "t.tar.gz", GOOD + [bad]), out)
    assert not out.exists()
    assert not (tmp_path.parent / "evil").exists()


@needs_data_filter
def test_extract_refuses_a_truncated_archive(tmp_path):
    whole = tarball(tmp_path / "t.tar.gz", GOOD + [("rock/big", "file", os.urandom(200_000))]).read_bytes()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(extractor.UnsafeArchive, match="not a complete"):
        extractor.extract(cut, tmp_path / "out", "rock")
    assert not (tmp_path / "out").exists()


@needs_data_filter
def test_check_reads_the_archive_as_extract_would_and_writes_nothing(tmp_path):
    archive = tarball(tmp_path / "t.tar.gz", GOOD)
    members, filtered = extractor.check(archive, "rock")
    assert filtered and [(m.name, m.type) for m in members] == [
        ("lib", tarfile.DIRTYPE), ("lib/libx.so.1", tarfile.REGTYPE), ("lib/libx.so", tarfile.SYMTYPE)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.tar.gz"]


@needs_data_filter
@pytest.mark.parametrize("bad", [("rock/../../evil", "file", b"!"), ("/etc/evil", "file", b"!"),
                                 ("rock/lib/escape", "symlink", "../../../../etc/passwd")])
def test_check_refuses_what_extract_refuses_for_the_same_reason(tmp_path, bad):
    archive = tarball(tmp_path / "t.tar.gz", GOOD + [bad])
    with pytest.raises(extractor.UnsafeArchive) as extracted:
        extractor.extract(archive, tmp_path / "out")
    with pytest.raises(extractor.UnsafeArchive) as checked:
        extractor.check(archive)
    # The reason up to where the member would land (which depends on the output folder).
    assert str(checked.value).split(" to '")[0] == str(extracted.value).split(" to '")[0]


def test_check_without_the_data_filter_still_applies_the_policy_and_reads_to_the_end(tmp_path, monkeypatch):
    monkeypatch.setattr(extractor, "has_data_filter", lambda: False)
    monkeypatch.delattr(tarfile.TarInfo, "replace", raising=False)  # it came with the filter (3.11.4, 3.12)
    archive = tarball(tmp_path / "t.tar.gz", GOOD + [("rock/../../evil", "file", b"!")])
    with pytest.raises(extractor.UnsafeArchive, match="lacks tarfile's data filter"):
        extractor.check(archive)
    with pytest.raises(extractor.UnsafeArchive, match=r"rock/../../evil: leads outside the archive's folder"):
        extractor.check(archive, require_filter=False)
    members, filtered = extractor.check(tarball(tmp_path / "good.tar.gz", GOOD), "rock", require_filter=False)
    assert not filtered and [m.name for m in members] == ["lib", "lib/libx.so.1", "lib/libx.so"]
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(tarball(tmp_path / "big.tar.gz", [("rock/big", "file", os.urandom(100_000))]).read_bytes()[:5000])
    with pytest.raises(extractor.UnsafeArchive, match="cut.tar.gz is not a complete, readable tar archive"):
        extractor.check(cut, require_filter=False)


@needs_data_filter
def test_an_empty_archive_is_called_empty_and_strip_prefix_named_only_when_given(tmp_path):
    empty = tarball(tmp_path / "e.tar.gz", [])
    with pytest.raises(extractor.UnsafeArchive, match=r"^e.tar.gz is an empty archive$"):
        extractor.check(empty)
    with pytest.raises(extractor.UnsafeArchive, match=r"^t.tar.gz has no entries under strip_prefix 'other'$"):
        extractor.extract(tarball(tmp_path / "t.tar.gz", GOOD), tmp_path / "out", "other")


def test_layout_kind_is_the_finders_test_on_any_listing(tmp_path):
    """detect_layout and a tarball's member list (ci_build) tell toolkits apart by the same function."""
    def kind(files=(), dirs=(), name="root"):
        return finder.layout_kind(name, lambda p: p in files, lambda p: p in dirs, lambda p: p in files or p in dirs)
    assert kind(files={"share/therock/therock_manifest.json"}) == "therock"
    assert kind(files={"lib/llvm/bin/clang"}, dirs={"lib/rocm_sysdeps"}) == "therock"
    assert kind(files={".info/version"}) == "opt_rocm"
    assert kind(dirs={"include/hip", "lib/x86_64-linux-gnu"}) == "multiarch"
    assert kind(name=finder.PIP_CORE) == "therock_pip"
    assert kind(files={"README"}, dirs={"include/hip"}) is None
    root = make_opt_rocm(tmp_path / "r")
    assert finder.detect_layout(root).name == "opt_rocm"


def test_library_names_is_the_finders_table_and_searches_nothing(monkeypatch):
    """@local_config_rocm declares one target per library from this list, configured or not."""
    result = subprocess.run([sys.executable, str(CHECKOUT / "third_party/gpus/find_rocm_config.py"), "--library-names"],
                            capture_output=True, text=True, env={**os.environ, "ROCM_PATH": "/nonexistent"}, check=True)
    names = json.loads(result.stdout)
    assert names == [spec.name for spec in finder.LIBRARIES] and "hip" in names and "rocprofiler-sdk" in names
    assert set(names) == set(finder.DEBIAN_DEV_PACKAGES)


@pytest.mark.parametrize("name", ["therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz",
                                  "therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tgz",
                                  "therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.xz",
                                  "therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar"])
def test_the_family_is_read_from_every_tarball_suffix_the_archive_rule_takes(name):
    """One parser of TheRock's file names (the archive rule's Starlark copy disagreed on .tgz)."""
    url = "https://example.org/v2/" + name
    assert finder.therock_family_from_url(url) == "gfx94X-dcgpu"
    assert finder.therock_version_from_url(url) == "7.10.0a20251120"


def test_cli_reads_the_family_from_the_archive_name_unless_declared(tmp_path):
    root = make_therock(tmp_path / "t", dist_targets=None)
    finder_py = str(CHECKOUT / "third_party/gpus/find_rocm_config.py")
    archive = "file:///srv/therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tgz"

    def family(*extra):
        out = subprocess.run([sys.executable, finder_py, "--rocm-path", str(root), "--default-targets", ",".join(WHEEL_LIST),
                              *extra], capture_output=True, text=True, check=True).stdout
        return json.loads(out)["therock"]["family"]

    assert family("--therock-archive", archive) == "gfx94X-dcgpu"
    assert family("--therock-archive", archive, "--therock-family", "gfx950-dcgpu") == "gfx950-dcgpu"
    # A name not in TheRock's scheme says nothing: the same as no archive given.
    runs = [subprocess.run([sys.executable, finder_py, "--rocm-path", str(root), "--default-targets", ",".join(WHEEL_LIST),
                            *extra], capture_output=True, text=True) for extra in ([], ["--therock-archive", "file:///srv/t.tgz"])]
    assert (runs[0].returncode, runs[0].stdout, runs[0].stderr) == (runs[1].returncode, runs[1].stdout, runs[1].stderr)


# ---- JAX's wheel list and what a TheRock tarball's name says, before the download ----------


def unconfigured_targets(value: str) -> list[str]:
    result = subprocess.run([sys.executable, str(CHECKOUT / "third_party/gpus/find_rocm_config.py"), "--unconfigured-targets", value],
                            capture_output=True, text=True, env={**os.environ, "ROCM_PATH": "/nonexistent"}, check=True)
    return json.loads(result.stdout)


def test_unconfigured_targets_split_the_value_or_give_the_wheel_list_and_search_nothing():
    """A build without ROCm records these: the finder splits TF_ROCM_AMDGPU_TARGETS and holds JAX's
    list (its one home); rocm_configure.bzl neither splits nor lists targets itself."""
    assert unconfigured_targets("") == list(finder.DEFAULT_AMDGPU_TARGETS) == WHEEL_LIST
    assert unconfigured_targets("gfx942;gfx950 gfx90a") == ["gfx942", "gfx950", "gfx90a"]
    bzl = (CHECKOUT / "third_party/gpus/rocm_configure.bzl").read_text()
    assert "--unconfigured-targets" in bzl and "gfx1201" not in bzl and ".split(\",\")" not in bzl


def test_the_finders_json_has_the_version_numbers_xla_encodes(tmp_path, capsys):
    """rocm_configure.bzl takes XLA's encodings from here instead of parsing versions again."""
    assert finder.dotted_version_number("3.5.1") == 30501 and finder.dotted_version_number(None) == 0
    assert finder.hip_version_number("7.2.53211") == 70253211 and finder.hip_version_number("") == 0
    root = make_therock(tmp_path / "therock")
    assert finder.main(["--rocm-path", str(root)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["hip_version_number"] == finder.hip_version_number(data["hip_version"]) > 0
    hip = data["libraries"]["hip"]
    assert hip["version_number"] == finder.dotted_version_number(hip["version"])


TARBALL_URL = "https://rocm.nightlies.amd.com/tarball/therock-dist-linux-{}-7.10.0a20251120.tar.gz"


@pytest.mark.parametrize("family, targets", [("gfx94X-dcgpu", ["gfx942"]), ("gfx110X-dgpu", ["gfx1100", "gfx1101"]),
                                             ("gfx115X-igpu", ["gfx1150", "gfx1151", "gfx1152", "gfx1153"])])
def test_a_tarballs_name_gives_its_family_and_the_wheel_list_narrowed_to_it(family, targets):
    facts = finder.tarball_targets(TARBALL_URL.format(family))
    assert (facts.family, facts.covered, facts.targets, facts.uncovered) == (family, finder.THEROCK_FAMILIES[family], targets, [])
    assert facts.origin == finder.default_targets(WHEEL_LIST, facts.covered, f"its family {family}")[1]


def test_a_tarballs_family_checks_the_requested_targets():
    facts = finder.tarball_targets(TARBALL_URL.format("gfx950-dcgpu"), ["gfx942", "gfx950", "gfx9-4-generic"])
    assert (facts.targets, facts.origin, facts.uncovered) == (["gfx942", "gfx950", "gfx9-4-generic"], "requested", ["gfx942"])
    assert finder.tarball_targets("/downloads/therock-dist-linux-gfx950-dcgpu-7.10.0a20251120.tar.gz", ["gfx950"]).uncovered == []


@pytest.mark.parametrize("name", ["https://example.com/rocm.tar.gz", "/opt/therock", "therock-dist-linux-gfx999Z-weird-7.10.0.tar.gz"])
def test_a_name_without_a_known_family_says_nothing(name):
    assert finder.tarball_targets(name) is None


def test_every_tarball_family_has_its_pip_package_on_the_runpath():
    """A wheel built against a family's tarball finds that family's pip package at run time:
    THEROCK_PIP_FAMILIES (the RUNPATH's order, which also holds single-target packages) names
    every tarball family."""
    assert set(finder.THEROCK_FAMILIES) <= set(finder.THEROCK_PIP_FAMILIES)
    assert len(set(finder.THEROCK_PIP_FAMILIES)) == len(finder.THEROCK_PIP_FAMILIES), "a family twice on the RUNPATH"


def test_a_toolkit_without_the_offload_bundler_reports_none(tmp_path):
    """rocm_library then compiles each HIP source in one action (rocm/private/actions/hip_compile.bzl)."""
    config = finder.find_rocm_config(make_opt_rocm(tmp_path / "opt/rocm"))
    assert config.offload_bundler_path is None
    assert "offload bundler (none: each HIP source compiles in one action)" in finder.format_text(config)


def test_docs_family_table_is_the_finders():
    """docs/rocm.md's table of TheRock families, row for row the finder's THEROCK_FAMILIES."""
    text = (CHECKOUT / "docs/rocm.md").read_text()
    table = text.split("| family | targets |\n|---|---|\n", 1)[1].split("\n\n", 1)[0].splitlines()
    rows = {cells[0].strip("`"): tuple(cells[1].split()) for cells in
            ([c.strip() for c in line.strip("|").split("|")] for line in table) if cells[0].startswith("`")}
    assert rows == dict(finder.THEROCK_FAMILIES)
