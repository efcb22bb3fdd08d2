"""@local_config_rocm answers XLA's names: its //rocm:* targets and build_defs.bzl, on Debian's ROCm.

The names are those of XLA's third_party/gpus/rocm/BUILD.tpl and build_defs.bzl.tpl that
XLA's and JAX's BUILD files use; tests/rocm/xla_names loads every build_defs name and
includes headers with XLA's paths. The TheRock-layout fixture is checked in
test_rocm_configure.py (test_therock_tarball_answers_xla_names), with its server.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import sandbox
from tests.infra.local_config_rocm import XLA_NAMES_TEST, XLA_ROCM_TARGETS, check_xla_names_output, rocm_targets

pytestmark = pytest.mark.bazel


def test_every_xla_name_exists_configured_or_not(in_sandbox):
    assert XLA_ROCM_TARGETS <= rocm_targets(in_sandbox, "--config=rocm")
    assert XLA_ROCM_TARGETS <= rocm_targets(in_sandbox)
    unconfigured = in_sandbox("bazel", "build", "@local_config_rocm//rocm:hipsolver", check=False)
    assert unconfigured.returncode != 0 and "add --config=rocm" in unconfigured.stderr


def test_xla_build_defs_and_include_paths_on_debian_rocm(in_sandbox):
    result = in_sandbox("bazel", "test", "--config=rocm", "--config=gfx942", "--test_output=all", XLA_NAMES_TEST)
    out = result.stdout + result.stderr
    check_xla_names_output(out, 70204)
    assert "get_rbe_amdgpu_pool linux_x64_gpu,linux_x64_multigpu using_hipcc 0" in out, out[-2000:]
    assert "TF_ROCM_TOOLKIT_PATH /usr" in out and "rocm_hipblaslt 1" in out
    assert re.search(r"rocm_gpu_architectures gfx908,gfx90a,gfx942,gfx950,", out)
    # JAX's own use: vendor.h includes these through XLA's paths; build one library of each.
    in_sandbox("bazel", "build", "--config=rocm", "--config=gfx942", "//tests/rocm/xla_names:scale_kernel",
               "@local_config_rocm//rocm:hipsolver",
               "@local_config_rocm//rocm:rocsolver", "@local_config_rocm//rocm:miopen", "@local_config_rocm//rocm:rocm_config",
               "@local_config_rocm//rocm:toolchain_data", "@local_config_rocm//rocm:rocminfo")


def test_a_library_the_toolkit_lacks_fails_naming_the_package(in_sandbox):
    # The sandbox installs no roctracer headers (Debian: libroctracer-dev is not in experimental).
    result = in_sandbox("bazel", "build", "--config=rocm", "@local_config_rocm//rocm:roctracer", check=False)
    assert result.returncode != 0
    assert re.search(r"rocm:roctracer: the ROCm this build uses \(multiarch at /usr\) has no roctracer .*Install "
                     r"libroctracer-dev", result.stderr), result.stderr[-2000:]


def test_xla_rbe_settings_and_crosstool_flags(in_sandbox):
    """XLA's remote-execution variables reach //rocm:linux_x64 and get_rbe_amdgpu_pool, and the
    flags of XLA's and JAX's rocm bazelrc configs (--crosstool_top, --extra_toolchains,
    --define=using_rocm_hipcc=true) are accepted and select what they name."""
    flags = ["--config=rocm", "--config=gfx942", "--repo_env=TF_ROCM_RBE_POOL=pool-a",
             "--repo_env=TF_ROCM_RBE_DOCKER_IMAGE=registry.example/rocm:7.2", "--repo_env=TF_ROCM_RBE_SINGLE_GPU_POOL=one-gpu"]
    platform = in_sandbox("bazel", "query", *flags, "--output=build", "@local_config_rocm//rocm:linux_x64").stdout
    assert '"Pool": "pool-a"' in platform and '"container-image": "docker://registry.example/rocm:7.2"' in platform, platform
    result = in_sandbox("bazel", "test", *flags, "--crosstool_top=@local_config_rocm//crosstool:toolchain",
                        "--extra_toolchains=@local_config_rocm//crosstool:toolchain-linux-x86_64",
                        "--define=using_rocm_hipcc=true", "--test_output=all", XLA_NAMES_TEST)
    out = result.stdout + result.stderr
    assert "get_rbe_amdgpu_pool one-gpu,linux_x64_multigpu using_hipcc 1" in out, out[-2000:]


def test_xla_libraries_the_toolkit_lacks_fail_naming_their_packages(in_sandbox):
    # Debian's ROCm in the sandbox has no rocprofiler-sdk and no libhsakmt.a; ROCm SMI it has
    # (the root's xla-runtime-deps layer), so its target builds.
    in_sandbox("bazel", "build", "--config=rocm", "@local_config_rocm//rocm:rocm_smi")
    for target, package in (("rocprofiler_sdk", "rocprofiler-sdk-dev"), ("hsakmt", "hsakmt-roct-devel")):
        result = in_sandbox("bazel", "build", "--config=rocm", f"@local_config_rocm//rocm:{target}", check=False)
        assert result.returncode != 0 and f"Install {package}" in result.stderr, result.stderr[-2000:]


def test_loading_the_public_rocm_api_evaluates_no_toolkit(scratch_checkout, sandbox_root):
    """//rocm:defs.bzl loads nothing of @local_config_rocm: a package that loads it and declares a
    rocm_library loads (bazel query) while no toolkit can be found; analysing the library is what
    runs the repository rule, which then names the toolkit it could not find."""
    package = scratch_checkout / "uses_rocm_defs"
    package.mkdir()
    (package / "BUILD.bazel").write_text('load("//rocm:defs.bzl", "rocm_library")\n\n'
                                         'rocm_library(name = "kernels", srcs = ["kernels.hip"])\n')
    (package / "kernels.hip").write_text("")
    no_toolkit = ["--config=rocm", "--repo_env=ROCM_PATH=/nonexistent/rocm"]
    query = sandbox("run", "--", "bazel", "query", *no_toolkit, "//uses_rocm_defs:all", check=False, cwd=scratch_checkout)
    assert query.returncode == 0 and "//uses_rocm_defs:kernels" in query.stdout, query.stderr[-3000:]
    analysis = sandbox("run", "--", "bazel", "build", "--nobuild", *no_toolkit, "//uses_rocm_defs:kernels", check=False,
                       cwd=scratch_checkout)
    assert analysis.returncode != 0 and "no usable ROCm from ROCM_PATH=/nonexistent/rocm" in analysis.stderr, \
        analysis.stderr[-3000:]
