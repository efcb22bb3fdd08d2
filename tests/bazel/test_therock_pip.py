"""TheRock's pip layout as a toolkit, and the RUNPATH each rocm_path_type gives a shipped .so.

The fixture is laid out as `pip install rocm[libraries,devel]` lays TheRock out (the root that
`rocm-sdk path --root` prints is site-packages/_rocm_sdk_core), assembled from the sandbox's
Debian ROCm 7.2.4: the real libamdhip64/libhsa-runtime64 in _rocm_sdk_core/lib, the real
headers and a clang wrapper in _rocm_sdk_devel, the real hipSOLVER in
_rocm_sdk_libraries_gfx94X_dcgpu/lib. No TheRock manifest: the version comes from
rocm_version.h, the family from the libraries package's name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from runpath import is_build_tree_entry
from tests.conftest import sandbox
from tests.infra.local_config_rocm import rocm_config

pytestmark = pytest.mark.bazel

MAKE_PIP_LAYOUT = r"""
set -e
site=$1/site-packages
core=$site/_rocm_sdk_core; devel=$site/_rocm_sdk_devel; libs=$site/_rocm_sdk_libraries_gfx94X_dcgpu
mkdir -p $core/lib $devel/include $devel/lib/llvm/bin $devel/lib/llvm/amdgcn/bitcode $devel/bin $libs/lib
cp -a /usr/lib/x86_64-linux-gnu/libamdhip64.so* /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so* $core/lib/
cp -a /usr/include/hip /usr/include/hsa /usr/include/rocm-core /usr/include/hipsolver $devel/include/
rm -f $devel/include/hsa/hsa
cp /usr/lib/llvm-22/lib/clang/22/amdgcn/bitcode/ocml.bc $devel/lib/llvm/amdgcn/bitcode/
printf '#!/bin/sh\nexec /usr/lib/llvm-22/bin/clang "$@"\n' > $devel/lib/llvm/bin/clang; chmod +x $devel/lib/llvm/bin/clang
cp -a /usr/lib/x86_64-linux-gnu/libhipsolver.so* $libs/lib/
"""

PROBE = "//tests/rocm:librocm_rpath_probe.so"


@pytest.fixture(scope="module")
def pip_root(sandbox_root, tmp_path_factory) -> Path:
    """site-packages/_rocm_sdk_core of the fixture (under /tmp: visible in the sandbox)."""
    base = tmp_path_factory.mktemp("therock-pip")
    script = base / "make.sh"
    script.write_text(MAKE_PIP_LAYOUT)
    sandbox("run", "--", "sh", str(script), str(base))
    return base / "site-packages" / "_rocm_sdk_core"


def test_the_finder_recognises_therocks_pip_packages(in_sandbox, pip_root):
    data = json.loads(in_sandbox("python3", "third_party/gpus/find_rocm_config.py", "--rocm-path", str(pip_root),
                                 "--default-targets", "gfx908,gfx90a,gfx942,gfx950").stdout)
    site = pip_root.parent
    assert (data["layout"], data["rocm_version"], data["rocm_toolkit_path"]) == ("therock_pip", "7.2.4", str(pip_root))
    assert data["libraries"]["hip"]["library_dir"] == str(pip_root / "lib")
    assert data["libraries"]["hip"]["include_dir"] == str(site / "_rocm_sdk_devel/include")
    assert data["libraries"]["hipsolver"]["library_dir"] == str(site / "_rocm_sdk_libraries_gfx94X_dcgpu/lib")
    assert data["clang_path"] == str(site / "_rocm_sdk_devel/lib/llvm/bin/clang")
    assert data["therock"]["family"] == "gfx94X-dcgpu" and data["amdgpu_targets"] == ["gfx942"]


def runpath(in_sandbox, *flags: str) -> list[str]:
    """The probe's RUNPATH without Bazel's own build-tree entries (which the wheel rule strips)."""
    in_sandbox("bazel", "build", *flags, PROBE)
    out = in_sandbox("readelf", "-d", "bazel-bin/tests/rocm/librocm_rpath_probe.so").stdout
    match = re.search(r"\(RUNPATH\)\s+Library runpath: \[(.*)\]", out)
    assert match, out
    return [e for e in match[1].split(":") if not is_build_tree_entry(e)]


def test_a_pip_toolkit_builds_and_each_rocm_path_type_gives_its_runpath(in_sandbox, pip_root):
    flags = ["--config=rocm", f"--repo_env=ROCM_PATH={pip_root}"]
    in_sandbox("bazel", "build", *flags, "//tests/rocm:hip_runtime_link_test")
    config = rocm_config(in_sandbox)
    assert (config["layout"], config["therock"]["family"], config["amdgpu_targets"]) == ("therock_pip", "gfx94X-dcgpu", ["gfx942"])
    toolkit_lib = str(pip_root / "lib")

    system = runpath(in_sandbox, *flags)  # XLA's default
    assert system[0] == "/opt/rocm/lib" and toolkit_lib in system
    assert not any("_rocm_sdk_core/lib" in e and e.startswith("$ORIGIN") for e in system)

    link_only = runpath(in_sandbox, *flags, "--@local_config_rocm//rocm:rocm_path_type=link_only")
    assert link_only[:3] == ["$ORIGIN/../_rocm_sdk_core/lib", "$ORIGIN/../_rocm_sdk_libraries/lib",
                             "$ORIGIN/../_rocm_sdk_libraries_gfx950_dcgpu/lib"]
    assert "$ORIGIN/../_rocm_sdk_libraries_gfx94X_dcgpu/lib" in link_only
    assert "$ORIGIN/../../_rocm_sdk_core/lib" in link_only  # jax_plugins/xla_rocm<N>/ is two levels down
    assert "/usr/local/lib/python3.12/dist-packages/_rocm_sdk_core/lib" in link_only
    assert link_only[-3:] == ["$ORIGIN/../rocm/lib", "$ORIGIN/../../rocm/lib", "/opt/rocm/lib"]
    assert toolkit_lib not in link_only, "link_only never names the build machine's ROCm"

    multiple = runpath(in_sandbox, *flags, "--@local_config_rocm//rocm:rocm_path_type=multiple")
    assert multiple == link_only + [e for e in system if e != "/opt/rocm/lib"]

    hermetic = runpath(in_sandbox, *flags, "--@local_config_rocm//rocm:rocm_path_type=hermetic")
    assert toolkit_lib in hermetic and "/opt/rocm/lib" not in hermetic
    wheel = in_sandbox("bazel", "build", *flags, "--@local_config_rocm//rocm:rocm_path_type=hermetic",
                       "--override_repository=xla=examples/xla", "//:jax_rocm_pjrt_wheel",
                       check=False)
    assert wheel.returncode != 0 and "rocm_path_type=hermetic keeps Bazel's RUNPATHs into its build tree" in wheel.stderr

    bad = in_sandbox("bazel", "build", *flags, "--@local_config_rocm//rocm:rocm_path_type=somewhere", PROBE, check=False)
    assert bad.returncode != 0 and "somewhere" in bad.stderr
