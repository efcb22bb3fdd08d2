"""ml_wheel_env: the wheel identity JAX's build takes from the environment, for this project's wheels.

    bazel build --config=rocm_release_wheel --repo_env=ML_WHEEL_TYPE=nightly \\
        --repo_env=ML_WHEEL_BUILD_DATE=20260101 //:jax_rocm_wheels

JAX's CI (ci/build_rocm_artifacts.sh) and TheRock's JAX pipeline say which wheel they want
with four variables that XLA's python_wheel.bzl defines; this rule reads exactly those (as
--repo_env, or from Bazel's client environment, as XLA's rule does), checks them, and writes
@ml_wheel_env//:ml_wheel.bzl:

    ML_WHEEL = {"ML_WHEEL_TYPE": "nightly", "ML_WHEEL_BUILD_DATE": "20260101", ...}

each value as given without surrounding blanks, "" where unset. What a wheel's version makes
of them is wheel/private/wheel.bzl's (which also refuses a --//wheel:* setting that says
otherwise) and version.bzl's wheel_version; wheel/README.md maps them to --//wheel:*.
"""

load(":version.bzl", "is_git_commit")

ML_WHEEL_ENVIRON = [
    "ML_WHEEL_TYPE",
    "ML_WHEEL_BUILD_DATE",
    "ML_WHEEL_GIT_HASH",
    "ML_WHEEL_VERSION_SUFFIX",
]

# XLA's four kinds: release X.Y.Z<suffix>, nightly X.Y.Z.devDATE, custom
# X.Y.Z.devDATE+<hash><suffix>, snapshot X.Y.Z.dev0+selfbuilt (JAX's default, not this project's).
ML_WHEEL_TYPES = ["release", "nightly", "custom", "snapshot"]

# What a suffix may hold: PEP 440's letters, digits and separators. version.bzl checks
# that the version it makes is canonical; this refuses early what never could be.
_SUFFIX_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-"

def _date_problem(value):
    """Why a build date is not one ('' if it is): YYYYMMDD, or YYYY-MM-DD as JAX's CI passes
    `git show -s --format=%as`."""
    digits = value
    if len(value) == 10 and value[4] == "-" and value[7] == "-":
        digits = value[:4] + value[5:7] + value[8:]
    if len(digits) != 8 or not digits.isdigit():
        return "not a date as YYYYMMDD or YYYY-MM-DD"

    # A leading zero would not survive PEP 440's normal form (.dev0999... is .dev999...).
    month, day = int(digits[4:6]), int(digits[6:8])
    if digits[0] == "0" or month < 1 or month > 12 or day < 1 or day > 31:
        return "not a calendar date (year from 1000, month 01-12, day 01-31)"
    return ""

def ml_wheel_problem(values):
    """The first thing wrong with `values` (variable -> value, "" unset) as one line naming the
    variable, what it holds and the fix; "" when all is well."""
    kind = values["ML_WHEEL_TYPE"]
    if kind and kind not in ML_WHEEL_TYPES:
        return "--repo_env=ML_WHEEL_TYPE=%s: not a wheel type JAX knows; use %s, or unset it to let --@jax_rocm_build//wheel:kind decide (wheel/README.md)" % (
            kind,
            ", ".join(ML_WHEEL_TYPES),
        )
    date = values["ML_WHEEL_BUILD_DATE"]
    if date and _date_problem(date):
        return "--repo_env=ML_WHEEL_BUILD_DATE=%s: %s; give the build date, e.g. ML_WHEEL_BUILD_DATE=$(date -u +%%Y%%m%%d)" % (date, _date_problem(date))
    git_hash = values["ML_WHEEL_GIT_HASH"]
    if git_hash and not is_git_commit(git_hash):
        return "--repo_env=ML_WHEEL_GIT_HASH=%s: not a git commit (7 to 40 hex digits); give the commit built, e.g. ML_WHEEL_GIT_HASH=$(git rev-parse HEAD)" % git_hash
    suffix = values["ML_WHEEL_VERSION_SUFFIX"]
    if suffix and not all([c in _SUFFIX_CHARS for c in suffix.elems()]):
        return "--repo_env=ML_WHEEL_VERSION_SUFFIX=%s: a version suffix is letters, digits and . + - only; give e.g. rc1 (X.Y.Zrc1)" % suffix
    return ""

def _ml_wheel_env_impl(rctx):
    # getenv (not os.environ) records each read, so a changed value re-runs this rule.
    values = {name: (rctx.getenv(name) or "").strip() for name in ML_WHEEL_ENVIRON}
    problem = ml_wheel_problem(values)
    if problem:
        fail(problem)
    rctx.file("BUILD.bazel", 'exports_files(["ml_wheel.bzl"])\n')
    rctx.file("ml_wheel.bzl", "\n".join([
        "# Written by @jax_rocm_build//wheel/private:ml_wheel.bzl: JAX's wheel identity variables",
        "# as this build was given them (--repo_env or the environment); \"\" where unset.",
        "ML_WHEEL = %s" % repr(values),
        "",
    ]))

ml_wheel_env = repository_rule(
    implementation = _ml_wheel_env_impl,
    environ = ML_WHEEL_ENVIRON,
    doc = "@ml_wheel_env//:ml_wheel.bzl: ML_WHEEL, JAX's ML_WHEEL_* variables, checked.",
)
