"""rocm/rocm.bazelrc configs that need no cluster or GPU: sanitizers and rocm_rbe's missing-executor guard."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.conftest import sandbox

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


def canonical_option_values(bep_json: Path, name: str) -> list[str]:
    """The values of option `name` on the canonical command line of a build event stream: what
    Bazel resolved after expanding every rc file and --config, one entry per option in force."""
    for line in bep_json.read_text().splitlines():
        command_line = json.loads(line).get("structuredCommandLine", {})
        if command_line.get("commandLineLabel") == "canonical":
            return [option["optionValue"] for section in command_line["sections"]
                    for option in section.get("optionList", {}).get("option", []) if option["optionName"] == name]
    raise AssertionError(f"no canonical command line in {bep_json}")


@pytest.mark.parametrize(("line", "in_force"), [
    # The documented spelling: a build: line, read after rocm/rocm.bazelrc's build: placeholder.
    ("build:rocm_rbe", "grpc://127.0.0.1:1"),
    # A common: line loses to it: Bazel applies a config's common: lines before its build: lines.
    ("common:rocm_rbe", "grpc://set-remote-executor-in-user-bazelrc.invalid"),
])
def test_an_executor_in_user_bazelrc_replaces_the_placeholder(scratch_checkout, sandbox_root, tmp_path, line, in_force):
    # Asks Bazel which --remote_executor it resolved (the build event stream's canonical command
    # line), not whether it happened to contact the executor: with nothing to build it may not.
    (scratch_checkout / "user.bazelrc").write_text(f"{line} --remote_executor=grpc://127.0.0.1:1\n")
    bep = tmp_path / "bep.json"
    result = sandbox("run", "--", "bazel", "build", "--config=rocm_rbe", "--nobuild",
                     f"--build_event_json_file={bep}", "--build_event_json_file_path_conversion=false",
                     check=False, cwd=scratch_checkout)
    assert bep.is_file(), f"bazel wrote no build event file:\n{result.stderr}"
    assert canonical_option_values(bep, "remote_executor") == [in_force], result.stderr
