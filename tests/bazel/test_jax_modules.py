"""//jaxlib/rocm built from JAX's own files (../shared/upstream's jax-v0.10.2 archive, as a
user builds from a checkout), with XLA from examples/xla.

One build; then the sandbox's Python imports every extension module
(tests/infra/check_modules.py) and tools/fatbin.py reads the device code of the modules
that have HIP kernels. The modules compiled from JAX are told from the two stand-ins
(_triton, rocm_plugin_extension) by the stand-ins' marker attribute.
"""

from __future__ import annotations

import json
import shlex

import pytest

from tests.conftest import CHECKOUT, SHARED_JAX_ARCHIVE, sandbox

pytestmark = [
    pytest.mark.bazel,
    pytest.mark.skipif(not SHARED_JAX_ARCHIVE.is_file(), reason=f"JAX's source archive {SHARED_JAX_ARCHIVE} is absent"),
]

TARGETS = ["gfx90a", "gfx942"]
FLAGS = (
    "--config=rocm",
    f"--//rocm:amdgpu_targets={','.join(TARGETS)}",
    f"--override_repository=jax={SHARED_JAX_ARCHIVE}",
    f"--override_repository=xla={CHECKOUT}/examples/xla",
)
OUT = "bazel-bin/jaxlib/rocm"
JAX_MODULES = ("_prng", "_linalg", "_solver", "_sparse", "_hybrid", "_rnn")
STAND_INS = {"_triton": ["hip_triton_kernel_call_ffi"], "rocm_plugin_extension": []}
# Modules with HIP kernels, and how many .cu.cc files each links (one bundle each).
DEVICE_CODE = {"_prng": 1, "_linalg": 1, "_solver": 2}


@pytest.fixture(scope="module")
def built(sandbox_root, tmp_path_factory) -> dict:
    """Builds //jaxlib/rocm:all once; returns check_modules.py's, fatbin.py's and @jax's source_info JSON."""
    out = tmp_path_factory.mktemp("jax_modules")  # under /tmp, which the sandbox shares
    # Only this build's modules: bazel-bin may also hold other Pythons' from earlier builds.
    so_files = " ".join(f"{OUT}/{name}$EXT" for name in DEVICE_CODE)
    script = (
        "EXT=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var(\"EXT_SUFFIX\"))')"
        f" && bazel build {' '.join(map(shlex.quote, FLAGS))} //jaxlib/rocm:all"
        f" && python3 tests/infra/check_modules.py {OUT} > {out}/modules.json"
        f" && python3 tools/fatbin.py --json {so_files} > {out}/fatbin.json"
        f" && cat $(bazel info output_base)/external/_main~sources~jax/source_info.json > {out}/source_info.json"
    )
    sandbox("run", "--", "sh", "-c", script, cwd=CHECKOUT)
    return {name: json.loads((out / f"{name}.json").read_text()) for name in ("modules", "fatbin", "source_info")}


def test_jax_is_the_archive_given_and_its_commit_is_known(built):
    info = built["source_info"]
    assert info["origin"] == "local archive" and info["path"] == str(SHARED_JAX_ARCHIVE)
    assert (info["commit"], info["version"]) == ("990e6a0b84138346e6a38785412f36356e0e5dc3", "0.10.2")


def test_jax_modules_are_jaxs_and_register_ffi_handlers(built):
    modules = built["modules"]
    assert sorted(modules) == sorted(JAX_MODULES + tuple(STAND_INS))
    for name in JAX_MODULES:
        module = modules[name]
        assert module["file"].startswith(f"{CHECKOUT}/{OUT}/{name}."), module["file"]
        assert module["marker"] is None, f"{name} must be JAX's, not a stand-in"
        assert module["registrations"], name
        for target, entry in module["registrations"].items():
            # What jax.ffi.register_ffi_target takes: a capsule holding the handler, unnamed
            # or (JAX's EncapsulateFunction) named as XLA's custom-call targets are.
            assert entry["type"] == "PyCapsule" and entry["has_pointer"], target
            assert entry["capsule_name"] in (None, "xla._CUSTOM_CALL_TARGET"), target
    # JAX's _solver: hipSOLVER's and rocSOLVER's kernels, as the published wheel registers them.
    assert {"hipsolver_getrf_ffi", "hipsolver_gesdd_ffi", "hipsolver_syevd_ffi"} <= set(modules["_solver"]["registrations"])


def test_the_two_stand_ins_say_so(built):
    for name, expected in STAND_INS.items():
        assert built["modules"][name]["marker"] == "examples/jax", name
        assert sorted(built["modules"][name]["registrations"]) == expected, name


def test_get_device_ordinal_raises_a_hip_error_instead_of_crashing(built):
    # Address 0 is no device memory, with or without a GPU (here: hipErrorNoDevice).
    result = built["modules"]["rocm_plugin_extension"]["get_device_ordinal(0)"]
    assert result["error"] == "RuntimeError", result
    assert result["message"].startswith("get_device_ordinal: hipError"), result


def test_hip_kernels_are_embedded_for_exactly_the_requested_targets(built):
    report = built["fatbin"]
    for name, bundles in DEVICE_CODE.items():
        libraries = [path for path in report if path.startswith(f"{OUT}/{name}.")]
        assert libraries, f"no {name} module in {sorted(report)}"
        for path in libraries:
            assert report[path]["targets"] == TARGETS, path
            assert len(report[path]["bundles"]) == bundles, path  # one per .cu.cc linked
