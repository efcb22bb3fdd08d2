"""ROCm 10: a toolkit whose version files say 10.x makes jax_rocm10_pjrt and jax_rocm10_plugin.

TheRock 10.x exists and JAX main discovers `jax_rocm10_plugin` (its jax_plugins/rocm
tries jax_rocm10_plugin, jax_rocm7_plugin ...); the wheels take the major from the toolkit's
version files, never from a constant. The fixture is a classic /opt/rocm-X layout made of the
sandbox's Debian ROCm 7.2.4 (headers copied, libraries linked, the real clang behind a
wrapper) whose .info/version and rocm_version.h say 10.0.0: what a 10.x install looks like to
the finder. HIP stays 7.2 inside; only the release's files are rewritten. The plugin wheel's
jax_rocm10_plugin package is proven once, with the multi-arch ROCm 10 tarball's main job
(tests/bazel/test_therock_multiarch.py), not built again here.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, sandbox
from tests.infra.local_config_rocm import rocm_config

pytestmark = pytest.mark.bazel

MAKE_ROCM10 = r"""
set -e
r=$1/rocm-10.0.0
mkdir -p $r/include $r/lib $r/llvm/bin $r/amdgcn $r/.info
for d in hip hsa rocm-core amd_comgr hipblas hipblas-common hipblaslt hipblaslt-export.h hipblaslt-version.h hipcub \
         hipfft hiprand hipsolver hipsparse miopen rccl rocblas rocprim rocrand rocsolver; do
  cp -a /usr/include/$d $r/include/
done
rm -f $r/include/hsa/hsa
for f in /usr/lib/x86_64-linux-gnu/lib*.so*; do
  case $(basename $f) in libamdhip64*|libhsa-runtime64*|librocblas*|libhipblas*|libhipsolver*|librocsolver*|libhipsparse*|\
                         librocsparse*|libMIOpen*|libhipfft*|libhiprand*|librocrand*|librccl*|libamd_comgr*|librocm-core*)
    ln -s $f $r/lib/ ;; esac
done
ln -s /usr/lib/llvm-22/lib/clang/22/amdgcn/bitcode $r/amdgcn/bitcode
# clang reads the HIP version of --rocm-path from share/hip/version (an old one without it)
mkdir -p $r/share && cp -a /usr/share/hip $r/share/
printf '#!/bin/sh\nexec /usr/lib/llvm-22/bin/clang "$@"\n' > $r/llvm/bin/clang; chmod +x $r/llvm/bin/clang
echo "10.0.0-1" > $r/.info/version
sed -i -e 's/\(#define ROCM_VERSION_MAJOR\).*/\1 10/' -e 's/\(#define ROCM_VERSION_MINOR\).*/\1 0/' \
       -e 's/\(#define ROCM_VERSION_PATCH\).*/\1 0/' $r/include/rocm-core/rocm_version.h
"""


@pytest.fixture(scope="module")
def rocm10(sandbox_root, tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("rocm10")
    script = base / "make.sh"
    script.write_text(MAKE_ROCM10)
    sandbox("run", "--", "sh", str(script), str(base))
    return base / "rocm-10.0.0"


def test_a_rocm_10_toolkit_makes_rocm10_wheels_with_the_names_jax_discovers(in_sandbox, rocm10):
    flags = ["--config=rocm", "--config=rocm_release", f"--repo_env=ROCM_PATH={rocm10}", "--//rocm:amdgpu_targets=gfx942",
             "--override_repository=xla=examples/xla", "--//wheel:platform_tag=linux_x86_64"]
    data = json.loads(in_sandbox("python3", "third_party/gpus/find_rocm_config.py", "--rocm-path", str(rocm10)).stdout)
    assert (data["layout"], data["rocm_version"], data["rocm_version_number"]) == ("opt_rocm", "10.0.0", 100000)
    in_sandbox("bazel", "build", *flags, "//:jax_rocm_pjrt_wheel")
    assert rocm_config(in_sandbox)["rocm_version"] == "10.0.0"
    # The file Bazel names (the folder also keeps other builds' wheels, of other versions).
    [pjrt] = [CHECKOUT / f for f in in_sandbox("bazel", "cquery", *flags, "--output=files", "//:jax_rocm_pjrt_wheel").stdout.split()]
    assert pjrt.name.startswith("jax_rocm10_pjrt-") and "+rocm10.0.0-" in pjrt.name, pjrt.name
    with zipfile.ZipFile(pjrt) as z:
        names = z.namelist()
        assert "jax_plugins/xla_rocm10/xla_rocm_plugin.so" in names and "jax_plugins/xla_rocm10/__init__.py" in names
        assert "jax_plugins/xla_rocm10/gpus.py" in names  # the loader imports it
        entry_points = z.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
        info = json.loads(z.read("jax_plugins/xla_rocm10/build_info.json"))
    assert "xla_rocm10 = jax_plugins.xla_rocm10" in entry_points
    assert (info["rocm_major"], info["rocm_version"], info["rocm_path_type"]) == (10, "10.0.0", "link_only")
