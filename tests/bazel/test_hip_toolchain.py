"""rocm_library: HIP compiled by the real ROCm 7.2 clang for exactly the requested amdgpu targets.

The code objects are read back from the linked shared library by tools/fatbin.py
(our reader) and cross-checked per object with LLVM's clang-offload-bundler.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from bench import bench_hip_rebuild as bench
from tests.conftest import CHECKOUT, sandbox, sandbox_binds
from tools import fatbin

pytestmark = pytest.mark.bazel

SO = "bazel-bin/tests/rocm/hip/libhip_kernels.so"
BUNDLER = "/usr/lib/llvm-22/bin/clang-offload-bundler"


def build_and_read(in_sandbox, *flags: str) -> dict:
    """Builds the kernel library with `flags`; returns what fatbin.py reads from it (inside the root)."""
    script = (
        f"bazel build {' '.join(map(shlex.quote, flags))} --output_groups=+hip_objects //tests/rocm/hip:libhip_kernels.so "
        f"&& python3 -m tools.fatbin --json {SO} bazel-bin/tests/rocm/hip/_objs/kernels/*.pic.o"
    )
    return json.loads(in_sandbox("sh", "-c", script).stdout)


def bundler_targets(in_sandbox, obj: str) -> set[str]:
    """The targets clang-offload-bundler --list sees in one object's .hip_fatbin section."""
    listing = in_sandbox("sh", "-c", f"objcopy -O binary --only-section=.hip_fatbin {obj} /tmp/fatbin.$$ && "
                         f"{BUNDLER} --list --type=o --input=/tmp/fatbin.$$; rm -f /tmp/fatbin.$$").stdout
    return {line.rsplit("--", 1)[1] for line in listing.split() if "amdgcn" in line}


def test_exactly_the_three_requested_code_objects_are_embedded(in_sandbox):
    report = build_and_read(in_sandbox, "--config=rocm", "--//rocm:amdgpu_targets=gfx90a,gfx942,gfx1201")
    library = report[SO]
    assert len(library["bundles"]) == 2, "one bundle per kernel source (saxpy.hip, scale.hip)"
    for bundle in library["bundles"]:
        targets = sorted(fatbin.Entry(**e).target for e in bundle["entries"] if "amdgcn" in e["triple"])
        assert targets == ["gfx1201", "gfx90a", "gfx942"]
        assert bundle["compressed"] is None
    objects = [path for path in report if path.endswith(".pic.o")]
    assert len(objects) == 2
    for obj in objects:
        assert bundler_targets(in_sandbox, obj) == {"gfx90a", "gfx942", "gfx1201"}, obj


def test_config_gfx950_embeds_only_gfx950_and_offload_compress_compresses(in_sandbox):
    library = build_and_read(in_sandbox, "--config=gfx950")[SO]
    assert library["targets"] == ["gfx950"] and len(library["bundles"]) == 2
    compressed = build_and_read(in_sandbox, "--config=gfx950", "--//rocm:offload_compress")[SO]
    assert compressed["targets"] == ["gfx950"]
    assert {b["compressed"] for b in compressed["bundles"]} == {"zstd"}


def test_tf_rocm_amdgpu_targets_sets_the_default_and_generic_targets_work(in_sandbox):
    assert build_and_read(in_sandbox, "--config=rocm", "--repo_env=TF_ROCM_AMDGPU_TARGETS=gfx1100")[SO]["targets"] == ["gfx1100"]
    generic = build_and_read(in_sandbox, "--config=rocm_generic")[SO]
    assert generic["targets"] == sorted(["gfx9-4-generic", "gfx10-3-generic", "gfx11-generic", "gfx12-generic"])


def test_a_misspelt_target_fails_at_analysis_listing_the_valid_ones(in_sandbox):
    result = in_sandbox("bazel", "build", "--config=rocm", "--//rocm:amdgpu_targets=gfx94", "//tests/rocm/hip:kernels", check=False)
    assert result.returncode != 0
    assert "Analysis of target '//rocm:amdgpu_targets' failed" in result.stderr
    assert "'gfx94' is not an amdgpu target clang 22" in result.stderr and "did you mean gfx942" in result.stderr
    valid = result.stderr.split("Valid targets: ", 1)[1].split(".\n", 1)[0].split(", ")
    assert {"gfx908", "gfx90a", "gfx942", "gfx950", "gfx1201", "gfx12-generic"} <= set(valid)
    assert "HipCompile" not in result.stderr  # nothing was compiled
    bad_feature = in_sandbox("bazel", "build", "--config=rocm", "--//rocm:amdgpu_targets=gfx90a:xnack", "//tests/rocm/hip:kernels",
                             check=False)
    assert bad_feature.returncode != 0 and "unknown target feature 'xnack'" in bad_feature.stderr


def test_without_config_rocm_hip_targets_are_skipped_and_asking_names_the_fix(in_sandbox):
    skipped = in_sandbox("bazel", "build", "//tests/rocm/hip:all")
    assert "Build completed successfully" in skipped.stderr and "HipCompile" not in skipped.stderr
    asked = in_sandbox("bazel", "build", "//tests/rocm/hip:kernels", check=False)
    assert asked.returncode != 0
    assert "didn't satisfy constraint" in asked.stderr and "ROCm_is_not_configured__build_with_--config=rocm" in asked.stderr


def test_changing_targets_recompiles_only_device_code_and_what_links_it(in_sandbox, tmp_path):
    log = tmp_path / "exec.json"  # /tmp is shared with the sandbox
    target = "//tests/rocm/hip:host_calls_kernel_test"
    # --disk_cache=: real actions. The shared action cache (the sandbox's rc sets one) would answer
    # the recompiles from an earlier run, and executed_mnemonics does not count cache hits.
    script = (
        f"bazel build --config=rocm --disk_cache= --//rocm:amdgpu_targets=gfx942 {target} && "
        f"bazel build --config=rocm --disk_cache= --//rocm:amdgpu_targets=gfx942,gfx1100 --execution_log_json_file={log} {target}"
    )
    in_sandbox("sh", "-c", script)
    counts = bench.executed_mnemonics(log)
    # Per source: gfx1100's device action alone (gfx942's is kept), the bundle, the host
    # compile embedding it; then the archive.
    assert counts["HipDeviceCompile"] == 2 and counts["HipBundle"] == 2 and counts["HipCompile"] == 2, counts
    assert counts["CppArchive"] == 1, counts  # the toolchain's archiver, as cc_library's
    device_outputs = [o for s in bench.spawns(log) if s.get("mnemonic") == "HipDeviceCompile" and not s.get("cacheHit")
                      for o in s["actualOutputs"]]
    assert sorted(Path(o["path"]).name for o in device_outputs) == ["saxpy.gfx1100.hsaco", "scale.gfx1100.hsaco"], device_outputs
    assert counts["CppLink"] == 1, counts  # the test binary; its host object is reused
    assert counts["CppCompile"] == 0, counts


# Compressed as the release config does, with a target feature and a target clang sorts
# before the others (gfx1100 < gfx90a): the bundle's order must be clang's.
SAME_OBJECTS_FLAGS = "--config=rocm -c opt --//rocm:offload_compress --//rocm:amdgpu_targets=gfx942,gfx90a:xnack-,gfx1100"


def split_and_whole_digests(run, targets: str, objects: str, flags: str = "") -> tuple[list[str], list[str]]:
    """sha256sum of the objects under the folders `objects` (at any depth: a source of another
    repository keeps its path there) built per target (the default), then by one clang run per source
    (--//rocm:hip_compile_per_target=false), as two lists of (digest, name)."""
    build = f"bazel build {SAME_OBJECTS_FLAGS} {flags} --output_groups=+hip_objects {targets}"
    digests = f"find -L {objects} -name '*.pic.o' | sort | xargs sha256sum"
    script = (f"{build} >/dev/null 2>&1 && {digests} && "
              f"{build} --//rocm:hip_compile_per_target=false >/dev/null 2>&1 && echo === && {digests}")
    split, whole = run("sh", "-c", script).stdout.split("===")
    return split.split(), whole.split()


def test_per_target_actions_make_the_single_clang_runs_objects_byte_for_byte(in_sandbox):
    """Two sources, and one source compiled twice with its own -D."""
    split, whole = split_and_whole_digests(
        in_sandbox, "//tests/rocm/hip:kernels //tests/rocm/hip:typed_fill_f32 //tests/rocm/hip:typed_fill_s32",
        " ".join(f"bazel-bin/tests/rocm/hip/_objs/{t}" for t in ("kernels", "typed_fill_f32", "typed_fill_s32")))
    assert len(split) == 8, split  # four objects (digest, name)
    assert split == whole, (split, whole)


# JAX's HIP libraries (the rocm_library targets of jaxlib/rocm/private/jax_targets.bzl).
JAX_HIP_LIBRARIES = ("//jaxlib/rocm:hip_make_batch_pointers //jaxlib/rocm:hip_householder_kernels "
                     "//jaxlib/rocm:hip_prng_kernels_impl //jaxlib/rocm:hip_linalg_kernels_impl")


def test_jaxs_own_kernels_are_the_single_clang_runs_byte_for_byte(sandbox_root, jax_tree):
    """Gated (JAX_ROCM_TEST_JAX_TREE): every HIP source of JAX's tree, split as above."""
    flags = f"--override_repository=jax={jax_tree} --override_repository=xla={CHECKOUT}/examples/xla"

    def run(*cmd: str) -> subprocess.CompletedProcess:
        return sandbox("run", *sandbox_binds(jax_tree), "--", *cmd, cwd=CHECKOUT)

    folders = " ".join("bazel-bin/jaxlib/rocm/_objs/" + label.split(":")[1] for label in JAX_HIP_LIBRARIES.split())
    split, whole = split_and_whole_digests(run, JAX_HIP_LIBRARIES, folders, flags)
    names = sorted(Path(name).name for name in split[1::2])
    assert names == ["householder_kernels.cu.pic.o", "linalg_kernels.cu.pic.o", "make_batch_pointers.cu.pic.o",
                     "prng_kernels.cu.pic.o"], split  # every HIP source of JAX 0.10.2's ROCm modules
    assert split == whole, (split, whole)


def test_amdgpu_targets_narrows_the_flag_and_copts_may_not_name_targets(in_sandbox):
    narrowed = "bazel-bin/tests/rocm/hip/_objs/scale_gfx942_only/scale.pic.o"
    script = (f"bazel build --config=rocm --//rocm:amdgpu_targets=gfx90a,gfx942 --output_groups=+hip_objects "
              f"//tests/rocm/hip:scale_gfx942_only && python3 -m tools.fatbin --json {narrowed}")
    assert json.loads(in_sandbox("sh", "-c", script).stdout)[narrowed]["targets"] == ["gfx942"]
    outside = in_sandbox("bazel", "build", "--config=rocm", "--//rocm:amdgpu_targets=gfx90a", "//tests/rocm/hip:scale_gfx942_only",
                         check=False)
    assert outside.returncode != 0
    assert "none of gfx942 is among the build's targets (--//rocm:amdgpu_targets=gfx90a)" in outside.stderr, outside.stderr[-2000:]
    named = in_sandbox("bazel", "build", "--config=rocm", "//tests/rocm/hip:copts_naming_a_target", check=False)
    assert named.returncode != 0
    assert "copts name amdgpu targets (--offload-arch=gfx90a)" in named.stderr, named.stderr[-2000:]
    assert "HipDeviceCompile" not in named.stderr and "Compiling HIP" not in named.stderr


def test_host_cpp_and_python_call_the_kernels(in_sandbox):
    result = in_sandbox("bazel", "test", "--config=gfx942", "--test_output=all", "//tests/rocm/hip:all")
    assert "2 tests pass" in result.stdout + result.stderr
    # No GPU here: each launch reports hipErrorNoDevice instead of crashing.
    assert (result.stdout + result.stderr).count("jax_rocm_test_scale -> hipError 100 (no /dev/kfd)") == 2


def test_one_source_compiled_per_local_define_makes_units_that_link_together(in_sandbox):
    """XLA compiles cub_sort_kernel_rocm_impl.cu.cc once per type, each rocm_library with its own
    local_defines (the source #errors without one): each target compiles its own object, with its
    define, as its own compilation unit, and both link into one shared library."""
    so = "bazel-bin/tests/rocm/hip/libhip_typed_fill.so"
    script = (f"bazel build --config=rocm --//rocm:amdgpu_targets=gfx942 //tests/rocm/hip:libhip_typed_fill.so "
              f"&& python3 -m tools.fatbin --json {so} && nm -D --defined-only {so}")
    out = in_sandbox("sh", "-c", script).stdout
    report = json.loads(out[: out.rindex("}") + 1])
    assert len(report[so]["bundles"]) == 2 and report[so]["targets"] == ["gfx942"]
    exported = {line.split()[-1] for line in out[out.rindex("}") + 1:].splitlines() if line.strip()}
    assert {"jax_rocm_test_fill_f32", "jax_rocm_test_fill_s32"} <= exported
