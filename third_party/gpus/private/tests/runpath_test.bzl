"""Unit tests of runpath.bzl's pure functions (bazel_skylib's unittest): `bazel test //third_party/gpus/private/tests:all`."""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")
load("//third_party/gpus/private:runpath.bzl", "link_only_runpath", "runpath_linkopts", "system_runpath")

def _runpath_test_impl(ctx):
    env = unittest.begin(ctx)
    asserts.equals(env, ["-Wl,--enable-new-dtags", "-Wl,-rpath,$$ORIGIN/../lib"], runpath_linkopts(["$ORIGIN/../lib"]))

    # Folders inside Bazel's output base mean nothing once installed: left out.
    system = system_runpath(["/usr/lib/x86_64-linux-gnu", "/out/base/external/rocm/lib", "/opt/rocm/lib"], "/out/base/")
    asserts.equals(env, ["/opt/rocm/lib", "/usr/lib/x86_64-linux-gnu"], system)

    release = link_only_runpath(["gfx94X-dcgpu", "gfx90a"])
    asserts.equals(env, "/opt/rocm/lib", release[-1])
    asserts.true(env, "$ORIGIN/../_rocm_sdk_core/lib" in release)

    # Each family the finder names is a package beside the wheel, in the finder's order.
    families = [e for e in release if e.startswith("$ORIGIN/../_rocm_sdk_libraries_")]
    asserts.equals(env, ["$ORIGIN/../_rocm_sdk_libraries_gfx94X_dcgpu/lib", "$ORIGIN/../_rocm_sdk_libraries_gfx90a/lib"], families)
    return unittest.end(env)

runpath_test = unittest.make(_runpath_test_impl)

def runpath_test_suite(name):
    unittest.suite(name, runpath_test)
