"""//jaxlib/rocm built from a JAX tree, with XLA from examples/xla, twice: from examples/jax
(this project's stand-in laid out like JAX's tree: every CI run) and from the real JAX tree
JAX_ROCM_TEST_JAX_TREE names (a checkout or archive, as a user builds from one; gated).

One build per tree; then the sandbox's Python imports every extension module
(tests.infra.check_modules) and tools/fatbin.py reads the device code of the modules
that have HIP kernels. Modules built from examples/ carry the stand-ins' marker attribute;
JAX's own do not.
"""

from __future__ import annotations

import json
import shlex

import pytest

from tests.conftest import CHECKOUT, EXAMPLES_JAX, require_jax_tree, sandbox, sandbox_binds

pytestmark = pytest.mark.bazel

TARGETS = ["gfx90a", "gfx942"]
FLAGS = (
    "--config=rocm",
    f"--//rocm:amdgpu_targets={','.join(TARGETS)}",
    f"--override_repository=xla={CHECKOUT}/examples/xla",
)
OUT = "bazel-bin/jaxlib/rocm"
JAX_MODULES = ("_prng", "_linalg", "_solver", "_sparse", "_hybrid", "_rnn")
STAND_INS = {"_triton": ["hip_triton_kernel_call_ffi"], "rocm_plugin_extension": []}
# What examples/jax's modules register: JAX's target names, one or more per module.
EXAMPLE_REGISTRATIONS = {
    "_prng": ["hip_threefry2x32_ffi"],
    "_linalg": ["hip_lu_pivots_to_permutation"],
    "_solver": ["hipsolver_getrf_ffi", "hipsolver_orgqr_ffi", "hipsolver_potrf_ffi"],
    "_sparse": ["hipsparse_gtsv2_ffi"],
    "_hybrid": ["hiphybrid_geqp3"],
    "_rnn": ["hipdnn_rnn_bwd_ffi", "hipdnn_rnn_ffi"],
}
# Modules with HIP kernels, and how many .cu.cc files each links (one bundle each): the
# same in JAX's tree and in examples/jax, which has a kernel in each of those files.
DEVICE_CODE = {"_prng": 1, "_linalg": 1, "_solver": 2}


@pytest.fixture(scope="module", params=["examples", "jax"])
def built(request, sandbox_root, tmp_path_factory) -> dict:
    """Builds //jaxlib/rocm:all once per tree (examples/jax; the real one, gated); returns
    check_modules.py's, fatbin.py's and @jax's source_info JSON, and the tree."""
    tree = EXAMPLES_JAX if request.param == "examples" else require_jax_tree()
    out = tmp_path_factory.mktemp("jax_modules")  # under /tmp, which the sandbox shares
    # Only this build's modules: bazel-bin may also hold other Pythons' from earlier builds.
    so_files = " ".join(f"{OUT}/{name}$EXT" for name in DEVICE_CODE)
    script = (
        "EXT=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var(\"EXT_SUFFIX\"))')"
        f" && bazel build {' '.join(map(shlex.quote, FLAGS))} --override_repository=jax={tree} //jaxlib/rocm:all"
        f" && PYTHONPATH={OUT} python3 -m tests.infra.check_modules > {out}/modules.json"
        f" && python3 -m tools.fatbin --json {so_files} > {out}/fatbin.json"
        f" && cat $(python3 -m tests.infra.repositories jax)/source_info.json > {out}/source_info.json"
    )
    sandbox("run", *sandbox_binds(tree), "--", "sh", "-c", script, cwd=CHECKOUT)
    result = {name: json.loads((out / f"{name}.json").read_text()) for name in ("modules", "fatbin", "source_info")}
    return result | {"kind": request.param, "tree": tree}


def test_jax_is_the_tree_given_and_says_whether_it_is_a_stand_in(built):
    info = built["source_info"]
    assert info["version"] and info["origin"] == ("local checkout" if built["tree"].is_dir() else "local archive")
    if built["kind"] == "examples":
        assert (info["path"], info["stand_in"], info["version"], info["commit"]) == ("examples/jax", True, "0.10.2", None)
    else:
        assert (info["path"], info["stand_in"]) == (str(built["tree"]), False)
        if info["version"] == "0.10.2" and info["commit"]:  # a git checkout or `git archive` of the tag
            assert info["commit"] == "990e6a0b84138346e6a38785412f36356e0e5dc3"


def test_examples_jax_modules_are_stand_ins_registering_jaxs_target_names(built):
    if built["kind"] != "examples":
        pytest.skip("examples/jax only")
    modules = built["modules"]
    assert sorted(modules) == sorted(JAX_MODULES + tuple(STAND_INS))
    for name in JAX_MODULES:
        module = modules[name]
        assert module["file"].startswith(f"{CHECKOUT}/{OUT}/{name}."), module["file"]
        assert module["marker"] == "examples/jax", name
        assert sorted(module["registrations"]) == EXAMPLE_REGISTRATIONS[name], name
        for target, entry in module["registrations"].items():
            assert entry == {"type": "PyCapsule", "capsule_name": None, "has_pointer": True}, target


def test_jax_modules_are_jaxs_and_register_ffi_handlers(built):
    if built["kind"] != "jax":
        pytest.skip("the real JAX tree only")
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
