"""What @local_config_rocm holds, read in the sandbox: the bazel tier's shared look at the
repository rocm_configure.bzl makes (test_local_config_rocm, test_rocm_configure, test_rocm10,
test_therock_pip). `in_sandbox` is tests/conftest.py's fixture of that name."""

from __future__ import annotations

import json

from tests.infra.repositories import folder


def rocm_config(in_sandbox, **where) -> dict:
    """@local_config_rocm's rocm_config.json; `where`: in_sandbox's keywords (cwd=another checkout)."""
    repo = folder(lambda *cmd: in_sandbox(*cmd, **where), "local_config_rocm")
    return json.loads(in_sandbox("cat", f"{repo}/rocm_config.json", **where).stdout)


# XLA's public //rocm targets (third_party/gpus/rocm/BUILD.tpl) that JAX and XLA depend on.
XLA_ROCM_TARGETS = {
    "rocm_headers", "rocm_config", "hip", "hip_runtime", "rocblas", "hipblas", "hipblaslt", "hipsolver",
    "rocsolver", "hipsparse", "miopen", "rccl", "hipfft", "hiprand", "roctracer", "rocprim", "rocm_rpath",
    "toolchain_data", "rocminfo", "build_defs_bzl", "rocm_smi", "rocprofiler_sdk", "using_hipcc", "linux_x64", "rocm_root",
    "rocm_redist", "rocm_dist", "hsakmt",
}
XLA_NAMES_TEST = "//tests/rocm/xla_names:xla_names_test"


def rocm_targets(in_sandbox, *flags: str) -> set[str]:
    out = in_sandbox("bazel", "query", *flags, "@local_config_rocm//rocm:*").stdout  # files too (rocm_dist)
    return {line.split(":", 1)[1] for line in out.split() if line.startswith("@local_config_rocm//rocm:")}


def check_xla_names_output(out: str, version: int) -> None:
    assert f"TF_ROCM_VERSION {version}" in out and f"rocm_version_number {version}" in out, out
    assert "is_rocm_configured 1" in out and "select_threshold 1" in out
    assert "rocm_copts and if_rocm applied" in out
    assert "hipGetDeviceCount -> hipErrorNoDevice" in out
