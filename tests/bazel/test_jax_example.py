"""//jaxlib/rocm built from the examples/jax stand-in (the real @jax cannot be fetched here).

One build with both stand-ins overriding @jax and @xla; then the sandbox's Python imports
every extension module (examples/jax/check_modules.py) and tools/fatbin.py reads the
device code of the modules that have HIP kernels.
"""

from __future__ import annotations

import json
import shlex

import pytest

from tests.conftest import CHECKOUT, sandbox

pytestmark = pytest.mark.bazel

TARGETS = ["gfx90a", "gfx942"]
FLAGS = (
    "--config=rocm",
    f"--//rocm:amdgpu_targets={','.join(TARGETS)}",
    f"--override_repository=jax={CHECKOUT}/examples/jax",
    f"--override_repository=xla={CHECKOUT}/examples/xla",
)
OUT = "bazel-bin/jaxlib/rocm"
# The FFI targets each module's registrations() must return, and nothing else.
EXPECTED_TARGETS = {
    "_prng": ["hip_threefry2x32_ffi"],
    "_linalg": ["hip_lu_pivots_to_permutation"],
    "_solver": ["hip_batch_pointers_ffi", "hip_getrf_ffi"],
    "_sparse": ["hip_csr_matvec_ffi"],
    "_hybrid": ["hip_eig_real_ffi"],
    "_rnn": ["hip_rnn_ffi"],
    "_triton": ["hip_triton_kernel_call_ffi"],
    "rocm_plugin_extension": [],
}
WITH_DEVICE_CODE = ("_prng", "_linalg", "_solver")


@pytest.fixture(scope="module")
def built(sandbox_root, tmp_path_factory) -> dict:
    """Builds //jaxlib/rocm:all once; returns {"modules": check_modules.py's JSON, "fatbin": fatbin.py's}."""
    out = tmp_path_factory.mktemp("jax_example")  # under /tmp, which the sandbox shares
    # Only this build's modules: bazel-bin may also hold other Pythons' from earlier builds.
    so_files = " ".join(f"{OUT}/{name}$EXT" for name in WITH_DEVICE_CODE)
    script = (
        "EXT=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var(\"EXT_SUFFIX\"))')"
        f" && bazel build {' '.join(map(shlex.quote, FLAGS))} //jaxlib/rocm:all"
        f" && python3 examples/jax/check_modules.py {OUT} > {out}/modules.json"
        f" && python3 tools/fatbin.py --json {so_files} > {out}/fatbin.json"
    )
    sandbox("run", "--", "sh", "-c", script, cwd=CHECKOUT)
    return {name: json.loads((out / f"{name}.json").read_text()) for name in ("modules", "fatbin")}


def test_every_module_is_built_from_examples_jax_and_registers_its_ffi_targets(built):
    modules = built["modules"]
    assert sorted(modules) == sorted(EXPECTED_TARGETS)
    for name, expected in EXPECTED_TARGETS.items():
        module = modules[name]
        assert module["file"].startswith(f"{CHECKOUT}/{OUT}/{name}."), module["file"]
        assert module["marker"] == "examples/jax", name
        assert sorted(module["registrations"]) == expected, name
        for target, entry in module["registrations"].items():
            # What jax.ffi.register_ffi_target takes: an unnamed capsule holding the handler.
            assert entry == {"type": "PyCapsule", "capsule_name": None, "has_pointer": True}, target


def test_get_device_ordinal_raises_a_hip_error_instead_of_crashing(built):
    # Address 0 is no device memory, with or without a GPU (here: hipErrorNoDevice).
    result = built["modules"]["rocm_plugin_extension"]["get_device_ordinal(0)"]
    assert result["error"] == "RuntimeError", result
    assert result["message"].startswith("get_device_ordinal: hipError"), result


def test_hip_kernels_are_embedded_for_exactly_the_requested_targets(built):
    report = built["fatbin"]
    for name in WITH_DEVICE_CODE:
        libraries = [path for path in report if path.startswith(f"{OUT}/{name}.")]
        assert libraries, f"no {name} module in {sorted(report)}"
        for path in libraries:
            assert report[path]["targets"] == TARGETS, path
            assert len(report[path]["bundles"]) == 1, path  # one .cu.cc per module
