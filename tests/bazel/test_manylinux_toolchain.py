"""--config=manylinux_2_28: host C++ by Zig's clang for glibc 2.28, HIP by ROCm's clang against
the same glibc 2.28 and libc++ headers (toolchains/manylinux).

One build of JAX's modules (from examples/jax, this project's stand-in tree, or the real JAX
tree JAX_ROCM_TEST_JAX_TREE names), the PJRT plugin (examples/xla) and the HIP test library;
then, inside the sandbox:
* every shared library needs no glibc symbol newer than 2.28, no libstdc++ and no libgcc_s;
* the HIP objects (rocm_library's hip_objects) use glibc 2.28's names (no __isoc23_*) and
  libc++'s std::__1, never libstdc++'s std::__cxx11;
* the sandbox's Python still imports every module and gets its FFI registrations, as
  without the config (tests/bazel/test_jax_modules.py).
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from tests.conftest import CHECKOUT, EXAMPLES_JAX, jax_tree_from_env, sandbox, sandbox_binds

pytestmark = pytest.mark.bazel

# The real JAX tree when JAX_ROCM_TEST_JAX_TREE is set, else examples/jax.
JAX_TREE = jax_tree_from_env() or EXAMPLES_JAX
STAND_IN = JAX_TREE == EXAMPLES_JAX
# What the release wheels are built with (ci_build dist_wheels, JAX's rocm_release_wheel), so
# that this build takes the main job's actions from the shared action cache: with fastbuild
# and one target it compiled Zig's runtime and the host C++ again, and took over 30 minutes
# on a loaded CI machine.
FLAGS = (
    "--config=rocm_release_wheel",
    f"--override_repository=jax={JAX_TREE}",
    f"--override_repository=xla={CHECKOUT}/examples/xla",
    "--output_groups=+default,+hip_objects",
)
TARGETS = ("//jaxlib/rocm:all", "//:xla_rocm_plugin.so", "//tests/rocm/hip:libhip_kernels.so")
JAX_MODULES = ("_prng", "_linalg", "_solver", "_sparse", "_hybrid", "_rnn")
GLIBC = (2, 28)


@pytest.fixture(scope="module")
def built(sandbox_root, tmp_path_factory) -> dict:
    """Builds once; returns the dynamic symbols and NEEDED of every library, the undefined symbols
    of every HIP object, and tests.infra.check_modules's report."""
    out = tmp_path_factory.mktemp("manylinux")  # under /tmp, which the sandbox shares
    libraries = "bazel-bin/xla_rocm_plugin.so bazel-bin/tests/rocm/hip/libhip_kernels.so bazel-bin/jaxlib/rocm/*.so"
    script = (
        f"bazel build {' '.join(map(shlex.quote, FLAGS))} {' '.join(TARGETS)}"
        f" && for f in {libraries}; do echo \"== $f\"; objdump -T \"$f\"; readelf -d \"$f\" | grep NEEDED; done > {out}/libraries.txt"
        f" && for f in $(find -L bazel-bin/jaxlib/rocm/_objs bazel-bin/tests/rocm/hip/_objs -name '*.pic.o'); do"
        f" echo \"== $f\"; nm -u \"$f\"; done > {out}/hip_objects.txt"
        f" && PYTHONPATH=bazel-bin/jaxlib/rocm python3 -m tests.infra.check_modules > {out}/modules.json"
    )
    sandbox("run", *sandbox_binds(JAX_TREE), "--", "sh", "-c", script, cwd=CHECKOUT)
    return {
        "libraries": sections((out / "libraries.txt").read_text()),
        "hip_objects": sections((out / "hip_objects.txt").read_text()),
        "modules": json.loads((out / "modules.json").read_text()),
    }


def sections(text: str) -> dict[str, str]:
    """'== NAME' headed blocks -> {NAME: block}."""
    return {head.strip(): body for head, _, body in (part.partition("\n") for part in text.split("== ")[1:])}


def test_every_library_needs_nothing_newer_than_glibc_2_28_and_no_libstdcxx(built):
    assert any(name.endswith("xla_rocm_plugin.so") for name in built["libraries"])
    assert sum("/jaxlib/rocm/" in name for name in built["libraries"]) >= len(JAX_MODULES)
    for name, dump in built["libraries"].items():
        versions = {tuple(map(int, v.split("."))) for v in re.findall(r"\bGLIBC_(\d+\.\d+(?:\.\d+)?)\b", dump)}
        assert versions, f"{name}: no versioned glibc symbol at all?"
        too_new = sorted(v for v in versions if v[:2] > GLIBC)
        assert not too_new, f"{name} needs GLIBC_{too_new}"
        assert "GLIBCXX_" not in dump and "CXXABI_" not in dump, f"{name} uses libstdc++'s symbols"
        needed = re.findall(r"Shared library: \[([^\]]+)\]", dump)
        assert not [n for n in needed if n.startswith(("libstdc++", "libgcc_s", "libc++"))], (name, needed)


def test_hip_objects_see_glibc_2_28_and_libcxx_headers(built):
    objects = built["hip_objects"]
    assert any("/_objs/" in name and "kernels" in name for name in objects), sorted(objects)
    isoc23 = {name: re.findall(r"__isoc23_\w+", body) for name, body in objects.items()}
    assert not {k: v for k, v in isoc23.items() if v}, "HIP objects compiled against a glibc newer than 2.38's headers"
    cxx11 = {name for name, body in objects.items() if "__cxx11" in body}
    assert not cxx11, f"HIP objects compiled against libstdc++: {sorted(cxx11)}"
    # JAX's kernels use std:: (vectors, strings): through libc++'s versioned namespace std::__1.
    # (examples/jax's kernels call nothing of the C++ library that is not inline.)
    if not STAND_IN:
        assert any("NSt3__1" in body for body in objects.values()), "no HIP object uses libc++"


def test_the_sandbox_python_imports_every_module_and_gets_its_ffi_targets(built):
    modules = built["modules"]
    for name in JAX_MODULES:
        assert modules[name]["marker"] == ("examples/jax" if STAND_IN else None), name
        assert modules[name]["registrations"], name
        for target, entry in modules[name]["registrations"].items():
            # FFI handlers are unnamed capsules; JAX registers _cholesky_update_ffi with
            # EncapsulateFunction, XLA's named custom-call capsule (jaxlib/gpu/linalg.cc).
            assert entry["type"] == "PyCapsule" and entry["has_pointer"], (target, entry)
            assert entry["capsule_name"] in (None, "xla._CUSTOM_CALL_TARGET"), (target, entry)
    assert {"hipsolver_getrf_ffi"} | ({"hipsolver_syevd_ffi"} if not STAND_IN else set()) <= set(
        modules["_solver"]["registrations"])
    assert modules["rocm_plugin_extension"]["get_device_ordinal(0)"]["error"] == "RuntimeError"


def test_the_zig_toolchain_is_selected_only_by_the_config(sandbox_root):
    """Without --config=manylinux_2_28 the PJRT library's graph holds nothing of @zig_sdk (the
    sandbox's own cc toolchain builds it); with it, @zig_sdk's cc_toolchain."""
    query = "bazel cquery --config=gfx942 --override_repository=xla={xla} {extra} 'deps(//:xla_rocm_plugin.so)' --output=label"
    plain = sandbox("run", "--", "sh", "-c", query.format(xla=f"{CHECKOUT}/examples/xla", extra=""), cwd=CHECKOUT).stdout
    zig = sandbox("run", "--", "sh", "-c", query.format(xla=f"{CHECKOUT}/examples/xla", extra="--config=manylinux_2_28"),
                  cwd=CHECKOUT).stdout
    assert "//:xla_rocm_plugin.so" in plain and "zig_sdk" not in plain
    assert "zig_sdk//:cc_toolchain" in zig
