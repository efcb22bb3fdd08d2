"""Unit tests of rocm/private's pure functions (bazel_skylib's unittest): `bazel test //rocm/private/tests:all`; beside the code, as //rocm/private may only be loaded from //rocm."""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")
load("//rocm/private:actions/hip_compile.bzl", "bundle_args", "bundle_order", "device_compile_args", "hip_shared_args", "host_compile_args", "splits", "target_flags_in", "unit_args", "whole_compile_args")
load("//rocm/private:amdgpu_targets.bzl", "check_amdgpu_targets", "narrow_amdgpu_targets", "split_amdgpu_targets")
load(":amdgpu_target_cases.bzl", "CHECK_CASES", "COVERAGE_CASES", "SPLIT_CASES")

_SUPPORTED = ["gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx9-4-generic"]
_FLAG = "--//rocm:amdgpu_targets"

def _split_test_impl(ctx):
    env = unittest.begin(ctx)
    asserts.equals(env, ["gfx942", "gfx950", "gfx90a"], split_amdgpu_targets(["gfx942,gfx950", "gfx90a"]))
    asserts.equals(env, ["gfx942", "gfx950"], split_amdgpu_targets("gfx942;gfx950 gfx942"))
    asserts.equals(env, [], split_amdgpu_targets(["", " , "]))

    # Any white space separates, as in find_rocm_config.py split_targets.
    asserts.equals(env, ["gfx942", "gfx950", "gfx90a"], split_amdgpu_targets("gfx942\tgfx950\n gfx90a;;"))
    return unittest.end(env)

split_test = unittest.make(_split_test_impl)

def _check_accepts_test_impl(ctx):
    env = unittest.begin(ctx)
    targets, error = check_amdgpu_targets("gfx942,gfx90a:xnack-", _SUPPORTED, [], [], "clang", _FLAG)
    asserts.equals(env, None, error)
    asserts.equals(env, ["gfx942", "gfx90a:xnack-"], targets)

    # Under a toolkit's limit, what the finder allowed (there: a generic target, which needs
    # no device code of the toolkit's own) passes; the check only looks it up.
    targets, error = check_amdgpu_targets("gfx942,gfx9-4-generic", _SUPPORTED, ["gfx942"], ["gfx942", "gfx9-4-generic"], "clang", _FLAG)
    asserts.equals(env, None, error)
    _, error = check_amdgpu_targets("gfx9-4-generic", _SUPPORTED, ["gfx942"], ["gfx942"], "clang", _FLAG)
    asserts.true(env, "'gfx9-4-generic' is not covered" in (error or ""), error)
    return unittest.end(env)

check_accepts_test = unittest.make(_check_accepts_test_impl)

def _check_refuses_test_impl(ctx):
    env = unittest.begin(ctx)
    _, error = check_amdgpu_targets("gfx9999", _SUPPORTED, [], [], "clang 22", _FLAG)
    asserts.true(env, "'gfx9999' is not an amdgpu target clang 22 can compile for" in error, error)
    asserts.true(env, "did you mean" in error, error)

    _, error = check_amdgpu_targets("gfx90a:xnack", _SUPPORTED, [], [], "clang", _FLAG)
    asserts.true(env, "unknown target feature 'xnack'" in error, error)

    _, error = check_amdgpu_targets("gfx942,gfx1100", _SUPPORTED, ["gfx942", "gfx950"], ["gfx942", "gfx950"], "clang", _FLAG, "the TheRock toolkit of family gfx94X-dcgpu")
    asserts.true(env, "'gfx1100' is not covered by the TheRock toolkit of family gfx94X-dcgpu" in error, error)
    asserts.true(env, _FLAG + "=gfx942,gfx950" in error, error)

    _, error = check_amdgpu_targets("", _SUPPORTED, [], [], "clang", _FLAG)
    asserts.true(env, "is empty" in error, error)
    return unittest.end(env)

check_refuses_test = unittest.make(_check_refuses_test_impl)

def _narrow_test_impl(ctx):
    env = unittest.begin(ctx)
    flag = ["gfx942", "gfx90a:xnack-", "gfx1100"]
    asserts.equals(env, (flag, None), narrow_amdgpu_targets(flag, []))

    # The flag's order and spelling; a processor names its feature variants.
    asserts.equals(env, (["gfx90a:xnack-", "gfx1100"], None), narrow_amdgpu_targets(flag, ["gfx1100", "gfx90a"]))
    asserts.equals(env, (["gfx942"], None), narrow_amdgpu_targets(flag, "gfx942,gfx950"))
    targets, error = narrow_amdgpu_targets(flag, ["gfx950"])
    asserts.equals(env, [], targets)
    asserts.true(env, "none of gfx950 is among the build's targets (--//rocm:amdgpu_targets=gfx942,gfx90a:xnack-,gfx1100)" in error, error)
    return unittest.end(env)

narrow_test = unittest.make(_narrow_test_impl)

def _hip_compile_args_test_impl(ctx):
    env = unittest.begin(ctx)
    common = ["--rocm-path=/r", "-cuid=1"]

    # What clang's own pipeline runs (clang -###): the bundle lists the targets sorted, after an
    # empty host entry, and is compressed once.
    asserts.equals(env, ["gfx1100", "gfx90a", "gfx942"], bundle_order(["gfx942", "gfx90a", "gfx1100"]))
    asserts.equals(env, [
        "-type=o",
        "-bundle-align=4096",
        "-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a,hipv4-amdgcn-amd-amdhsa--gfx942",
        "-input=/dev/null",
        "-input=a.gfx90a.hsaco",
        "-input=a.gfx942.hsaco",
        "-output=a.hipfb",
        "--compress",
    ], bundle_args([("gfx90a", "a.gfx90a.hsaco"), ("gfx942", "a.gfx942.hsaco")], True, "a.hipfb"))
    asserts.false(env, "--compress" in bundle_args([("gfx942", "x")], False, "o"))

    device = device_compile_args(common, "gfx942", "k.hip", "k.gfx942.hsaco")
    asserts.true(env, "--cuda-device-only" in device and "--no-gpu-bundle-output" in device)
    asserts.equals(env, ["--offload-arch=gfx942"], [a for a in device if a.startswith("--offload-arch")])
    asserts.equals(env, common, device[-2:])
    host = host_compile_args(common, ["gfx942", "gfx90a"], "k.hipfb", "k.hip", "k.o")
    asserts.true(env, "--cuda-host-only" in host)
    asserts.equals(env, ["-Xclang", "-fcuda-include-gpubinary", "-Xclang", "k.hipfb"], host[host.index("-fcuda-include-gpubinary") - 1:][:4])
    whole = whole_compile_args(common, ["gfx942", "gfx90a"], True, "k.hip", "k.o")
    asserts.equals(env, ["--offload-arch=gfx942", "--offload-arch=gfx90a", "--offload-compress"], [a for a in whole if a.startswith("--offload")])

    # The toolchain's standard flags come first, a target's copts last (a later -std wins).
    facts = struct(hip_copts = ["-std=c++17", "-fPIC"], rocm_path = "/r", device_libs_path = "/r/amdgcn", hip_version = "")
    context = struct(defines = depset(), quote_includes = depset(), includes = depset(), system_includes = depset())
    shared = hip_shared_args(facts, context, [], ["-std=c++20"])
    asserts.equals(env, ["-std=c++17", "-fPIC"], shared[:2])
    asserts.equals(env, "-std=c++20", shared[-1])

    # A toolkit without the bundler, or relocatable device code: one action per source.
    with_bundler = struct(offload_bundler = "/usr/bin/clang-offload-bundler")
    asserts.true(env, splits(with_bundler, ["-O3"]))
    asserts.false(env, splits(with_bundler, ["-fgpu-rdc"]))
    asserts.false(env, splits(struct(offload_bundler = None), []))

    # A unit's name is its CUID, the same in all its actions, another for another unit.
    first = unit_args(common, "kernels a/k.hip")
    asserts.equals(env, first, unit_args(common, "kernels a/k.hip"))
    asserts.true(env, first[0].startswith("-cuid=") and first[1:] == common)
    asserts.true(env, first[0] != unit_args(common, "typed_f32 a/k.hip")[0])

    asserts.equals(env, ["--offload-arch=gfx942", "--cuda-gpu-arch=gfx90a"], target_flags_in(["-O3", "--offload-arch=gfx942", "--cuda-gpu-arch=gfx90a", "-DARCH=1"]))
    return unittest.end(env)

hip_compile_args_test = unittest.make(_hip_compile_args_test_impl)

def _shared_cases_test_impl(ctx):
    """amdgpu_target_cases.bzl: the answers the finder's Python gives (tests/unit/test_amdgpu_target_cases.py)."""
    env = unittest.begin(ctx)
    for case in SPLIT_CASES:
        asserts.equals(env, case["targets"], split_amdgpu_targets(case["value"]), repr(case["value"]))
    for case in CHECK_CASES:
        targets, error = check_amdgpu_targets(case["requested"], case["supported"], [], [], "clang", _FLAG)
        refused = case["unknown"] + case["bad_features"]
        asserts.equals(env, not refused, error == None, "%s: %s" % (case["requested"], error))
        for target in case["unknown"]:
            asserts.true(env, "'%s' is not an amdgpu target clang" % target in (error or ""), "%s: %s" % (case["requested"], error))
        for feature in case["bad_features"]:
            asserts.true(env, "unknown target feature '%s'" % feature in (error or ""), "%s: %s" % (case["requested"], error))
        if not refused:
            asserts.equals(env, split_amdgpu_targets(case["requested"]), targets)
    for case in COVERAGE_CASES:
        _, error = check_amdgpu_targets(case["requested"], case["supported"], case["covered"], case["allowed"], "clang", _FLAG, "the toolkit")
        asserts.equals(env, not case["uncovered"], error == None, "%s: %s" % (case["requested"], error))
        if case["uncovered"]:
            named = ", ".join(["'%s'" % t for t in case["uncovered"]])
            asserts.true(env, "%s %s not covered by the toolkit" % (named, "is" if len(case["uncovered"]) == 1 else "are") in error, error)
    return unittest.end(env)

shared_cases_test = unittest.make(_shared_cases_test_impl)

def rocm_private_test_suite(name):
    unittest.suite(name, split_test, check_accepts_test, check_refuses_test, narrow_test, hip_compile_args_test, shared_cases_test)
