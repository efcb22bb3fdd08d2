"""Unit tests of wheel/private/version.bzl (bazel_skylib's unittest) over version_cases.bzl:
`bazel test //wheel/private/tests:all`."""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")
load("//wheel/private:version.bzl", "canonical_version_problem", "wheel_file_name", "wheel_version")
load(":version_cases.bzl", "CANONICAL_CASES", "FILE_NAME_CASES", "PROBLEM_CASES", "VERSION_CASES")

def _versions_test_impl(ctx):
    env = unittest.begin(ctx)
    for case in VERSION_CASES:
        version, problem = wheel_version(**case["pieces"])
        asserts.equals(env, ("", case["version"]), (problem, version), case["id"])
        asserts.equals(env, "", canonical_version_problem(version), case["id"])
    return unittest.end(env)

versions_test = unittest.make(_versions_test_impl)

def _problems_test_impl(ctx):
    env = unittest.begin(ctx)
    for case in PROBLEM_CASES:
        version, problem = wheel_version(**case["pieces"])
        asserts.equals(env, "", version, str(case["pieces"]))
        asserts.true(env, case["says"] in problem, "%s: %r lacks %r" % (case["pieces"], problem, case["says"]))

        # JAX's variables are named where JAX's spelling chose the kind, this project's flags elsewhere.
        if case["pieces"].get("ml_wheel"):
            asserts.false(env, "@jax_rocm_build//wheel:" in problem, problem)
    return unittest.end(env)

problems_test = unittest.make(_problems_test_impl)

def _canonical_test_impl(ctx):
    env = unittest.begin(ctx)
    for text, canonical in CANONICAL_CASES:
        problem = canonical_version_problem(text)
        asserts.equals(env, canonical, problem == "", "%r: %r" % (text, problem))
    return unittest.end(env)

canonical_test = unittest.make(_canonical_test_impl)

def _file_name_test_impl(ctx):
    env = unittest.begin(ctx)
    for case in FILE_NAME_CASES:
        name, problem = wheel_file_name(case["distribution"], case["version"], case["python_tag"], case["abi_tag"], case["platform_tag"])
        asserts.equals(env, (case["name"], ""), (name, problem))
    for distribution in ["-jax", "jax rocm", "jax_", ""]:
        _, problem = wheel_file_name(distribution, "1.0", "py3", "none", "any")
        asserts.true(env, "is not a valid name" in problem, "%r: %r" % (distribution, problem))
    for tag in ["Linux_x86_64", "linux-x86_64", "a..b", ""]:
        _, problem = wheel_file_name("pkg", "1.0", "py3", "none", tag)
        asserts.true(env, "wheel tag %r is not" % tag in problem, "%r: %r" % (tag, problem))
    return unittest.end(env)

file_name_test = unittest.make(_file_name_test_impl)

def version_test_suite(name):
    unittest.suite(
        name,
        versions_test,
        problems_test,
        canonical_test,
        file_name_test,
    )
