"""The stand-in @xla (examples/xla): its ROCm PJRT plugin links and speaks PJRT C API 0.112.

The plugin is built twice: as //:xla_rocm_plugin of this checkout with
--override_repository=xla=examples/xla, and from a bare workspace that links the same
@xla target the same way (version script, --no-undefined), which tells a broken stand-in
from broken wiring. examples/xla/check_plugin.py then drives it through ctypes.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import CHECKOUT, sandbox

pytestmark = pytest.mark.bazel

EXAMPLE_XLA = CHECKOUT / "examples" / "xla"
CHECK_PLUGIN = EXAMPLE_XLA / "check_plugin.py"
OVERRIDE = f"--override_repository=xla={EXAMPLE_XLA}"
MARKER = ("jax_rocm_example", "examples/xla")

# A workspace with nothing but @xla and a plugin linked as //:xla_rocm_plugin links it.
BARE_WORKSPACE = {
    "MODULE.bazel": f"""module(name = "bare")

bazel_dep(name = "rules_cc", version = "0.0.11")

local_repository = use_repo_rule("@bazel_tools//tools/build_defs/repo:local.bzl", "local_repository")

local_repository(name = "xla", path = "{EXAMPLE_XLA}")
""",
    ".bazelrc": "common --enable_bzlmod\ncommon --noenable_workspace\n",
    "plugin.lds": "{ global: GetPjrtApi; local: *; };\n",
    "BUILD.bazel": """load("@rules_cc//cc:defs.bzl", "cc_binary")

cc_binary(
    name = "xla_rocm_plugin.so",
    linkshared = True,
    additional_linker_inputs = ["plugin.lds"],
    linkopts = ["-Wl,--version-script=$(location plugin.lds)", "-Wl,--no-undefined"],
    deps = ["@xla//xla/pjrt/c:pjrt_c_api_gpu"],
)
""",
}


def in_root(*cmd: str, cwd) -> str:
    """Runs a command in the sandbox (module-scoped fixtures cannot use in_sandbox); its stdout."""
    return sandbox("run", "--", *cmd, cwd=cwd).stdout


def build_and_inspect(workspace, *build: str) -> dict:
    """Runs the `build` command in `workspace`; what check_plugin.py and nm say of the plugin it made."""
    so = "bazel-bin/xla_rocm_plugin.so"
    in_root(*build, cwd=workspace)
    report = json.loads(in_root("python3", str(CHECK_PLUGIN), so, cwd=workspace))
    symbols = in_root("nm", "-D", "--defined-only", so, cwd=workspace).splitlines()
    # Version-node symbols (type A) name the version script's nodes, not code.
    report["exported"] = sorted(line.split()[-1] for line in symbols if line.split()[1] != "A")
    return report


@pytest.fixture(scope="module", params=["checkout", "bare_workspace"])
def plugin(request, sandbox_root, tmp_path_factory) -> dict:
    if request.param == "checkout":
        # --config=rocm: //:xla_rocm_plugin.so is rocm_only(), though the stand-in needs no ROCm.
        return build_and_inspect(CHECKOUT, "bazel", "build", "--config=rocm", OVERRIDE, "//:xla_rocm_plugin")
    workspace = tmp_path_factory.mktemp("bare_xla_workspace")  # /tmp is shared with the sandbox
    for name, text in BARE_WORKSPACE.items():
        (workspace / name).write_text(text)
    # Its own output base, inside the temporary directory: nothing accumulates in the cache.
    return build_and_inspect(workspace, "bazel", f"--output_base={workspace}/.output_base", "build", "//:xla_rocm_plugin.so")


def test_the_api_is_pjrt_0_112_at_its_full_size(plugin):
    assert plugin["version"] == {"struct_size": 24, "major": 0, "minor": 112}
    assert plugin["struct_size"] == 1144  # 40 bytes of header + 138 function slots
    assert plugin["extension_start"] is None


def test_only_get_pjrt_api_is_exported(plugin):
    assert plugin["exported"] == ["GetPjrtApi"]


def test_the_marker_attribute_shows_the_stand_in_was_built(plugin):
    attributes = plugin["attributes"]
    assert attributes[MARKER[0]] == MARKER[1]
    assert attributes["xla_version"] == 2
    assert attributes["stablehlo_current_version"] == [1, 0, 0]


def test_initialize_succeeds_and_client_create_needs_the_rocm_platform_linked(plugin, request):
    """//:xla_rocm_plugin links what upstream's jax_plugins/rocm/BUILD.bazel links (the C API,
    gpu_plugin, rocm_platform): the platform is registered and the client fails only for want
    of a device. The bare workspace links the C API alone, as this project once did: no ROCm
    platform is registered, and the plugin says which target is missing."""
    assert plugin["initialize"] == "ok"
    created = plugin["client_create"]
    assert created["client"] is None
    linked_like_upstream = request.node.callspec.params["plugin"] == "checkout"
    registered = set(filter(None, plugin["attributes"]["jax_rocm_registered"].split(",")))
    if linked_like_upstream:
        assert registered == {"rocm_platform", "gpu_compiler"}
        code, message = 14, "example plugin: no devices"  # UNAVAILABLE
    else:
        assert registered == set()
        code = 9  # FAILED_PRECONDITION
        message = ("example plugin: no ROCm platform is registered; link "
                   "@xla//xla/stream_executor:rocm_platform into the plugin")
    assert created["error"] == {
        "message": message,
        "code": code,
        "payloads": [],
        "vtable": {"struct_size": 56, "code": code},  # the same error through its function table
    }


def test_a_too_small_argument_struct_is_refused(plugin):
    refused = plugin["attributes_with_short_struct"]
    invalid_argument = 3
    assert refused["code"] == invalid_argument
    assert refused["message"].startswith("PJRT_Plugin_Attributes_Args: struct_size 16 is smaller")


def test_exactly_the_implemented_slots_are_set(plugin):
    assert plugin["implemented"] == sorted([
        "PJRT_Error_Destroy", "PJRT_Error_Message", "PJRT_Error_GetCode", "PJRT_Error_ForEachPayload",
        "PJRT_Plugin_Initialize", "PJRT_Plugin_Attributes", "PJRT_Client_Create",
    ])


def test_ffi_targets_are_the_wheel_headers(in_sandbox):
    """@xla//xla/ffi/api aliases the real FFI headers (@xla_ffi_headers, fetched from the jaxlib wheel)."""
    declared = in_sandbox("bazel", "query", OVERRIDE, "--output=build", "@xla//xla/ffi/api:all").stdout
    for name in ("ffi", "api", "c_api"):
        assert f'actual = "@xla_ffi_headers//:{name}"' in declared
    # Building them resolves each alias: a repository @xla cannot see would fail here.
    built = in_sandbox("bazel", "build", OVERRIDE, "@xla//xla/ffi/api:all")
    assert "Build completed successfully" in built.stderr
