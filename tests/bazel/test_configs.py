"""rocm/rocm.bazelrc configs that need no cluster or GPU: sanitizers and rocm_rbe's missing-executor guard."""

from __future__ import annotations

import uuid

from tests.conftest import sandbox

import pytest

pytestmark = pytest.mark.bazel


@pytest.mark.parametrize(("config", "runtime_symbol"), [("asan", "__asan_init"), ("ubsan", "__ubsan_handle")])
def test_sanitizer_configs_instrument_host_code(in_sandbox, config, runtime_symbol):
    result = in_sandbox("sh", "-c", f"bazel build --config={config} //tests/smoke:hello_cc 2>/dev/null && "
                        "nm -u bazel-bin/tests/smoke/hello_cc && bazel-bin/tests/smoke/hello_cc")
    assert runtime_symbol in result.stdout and "hello, cc_binary" in result.stdout


def test_rocm_rbe_without_an_executor_fails_naming_the_fix(in_sandbox):
    # A define nobody else uses makes the compile action new, so it must go remote.
    fresh = f"--//rocm:copts=-DJAX_ROCM_FRESH_{uuid.uuid4().hex[:8]}"
    result = in_sandbox("bazel", "build", "--config=rocm_rbe", "--config=gfx942", fresh, "//tests/rocm/hip:kernels", check=False)
    assert result.returncode != 0
    assert "Unable to resolve host set-remote-executor-in-user-bazelrc.invalid" in result.stderr


def test_an_executor_in_user_bazelrc_replaces_the_placeholder(scratch_checkout, sandbox_root):
    # The documented spelling: a build: line, read after rocm/rocm.bazelrc's build: placeholder.
    # (A common: line would lose to it: Bazel applies a config's common: lines before its build: lines.)
    (scratch_checkout / "user.bazelrc").write_text("build:rocm_rbe --remote_executor=grpc://127.0.0.1:1\n")
    result = sandbox("run", "--", "bazel", "build", "--config=rocm_rbe", "--nobuild", "//tests/rocm/hip:kernels",
                     check=False, cwd=scratch_checkout)
    # With --nobuild nothing runs remotely; Bazel still asks the executor it was given.
    assert "Failed to query remote execution capabilities: UNAVAILABLE: io exception" in result.stderr
    assert "set-remote-executor-in-user-bazelrc.invalid" not in result.stderr
